#!/usr/bin/env python3
"""Where a build's time went, from ninja's log (BUILD_DIR/.ninja_log).

  scripts/ninja-times.py [BUILD_DIR] [N]

Prints the build's wall time, its CPU-seconds by kind of step (library
objects, test objects, benchmark objects, links) and the N (default 20)
slowest steps. Only meaningful for a build from scratch without ccache hits.
"""
import collections
import os
import sys


def kind(out):
    name = os.path.basename(out)
    if out.endswith('.o'):
        if '_test' in name or name.startswith('test_'):
            return 'test objects'
        if 'bench' in out:
            return 'bench objects'
        return 'library objects'
    if out.endswith('.a'):
        return 'archives'
    if 'pch' in out:
        return 'precompiled headers'
    return 'links and other steps'


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else 'build'
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    latest = {}
    with open(os.path.join(build, '.ninja_log')) as f:
        for line in f:
            if line.startswith('#'):
                continue
            start, end, _, out, _ = line.rstrip('\n').split('\t')
            latest[out] = (int(start), int(end))  # the last build of each output
    if not latest:
        sys.exit('no steps in the log')
    steps = [(e - s, out) for out, (s, e) in latest.items()]
    first = min(s for s, _ in latest.values())
    last = max(e for _, e in latest.values())
    total = sum(d for d, _ in steps)
    print(f'{len(steps)} steps, {total / 1000:.0f} CPU-s, wall {(last - first) / 1000:.0f} s')
    by_kind = collections.Counter()
    for d, out in steps:
        by_kind[kind(out)] += d
    for k, d in by_kind.most_common():
        print(f'  {k:22} {d / 1000:8.0f} s  {100 * d / total:5.1f} %')
    print(f'slowest {top}:')
    for d, out in sorted(steps, reverse=True)[:top]:
        print(f'  {d / 1000:7.1f} s  {out}')


if __name__ == '__main__':
    main()
