#!/usr/bin/env python3
"""Self and inclusive shares of functions in a `perf record -g` of the server,
symbolized from the binary's own symbol table (nm). perf 6.1 on the
development VM does not load batchd's symbols ("build id not found") though
it unwinds through them, so this resolves the raw addresses itself.

  perf_fold.py PERF_DATA BINARY [--top N] [--thread NAME] [--skip A,B]

Addresses are file offsets (as `perf script` prints them), looked up as
virtual addresses: true for batchd's executable segment (offset == vaddr).
"""
import argparse, bisect, collections, re, subprocess, sys


def load_symbols(binary):
    out = subprocess.run(["nm", "-C", "--defined-only", "-n", binary], capture_output=True,
                         text=True, check=True).stdout
    addrs, names = [], []
    for line in out.splitlines():
        parts = line.split(" ", 2)
        if len(parts) < 3 or parts[1] not in "tTwW":
            continue
        addrs.append(int(parts[0], 16))
        names.append(parts[2])
    return addrs, names


def short(name, width=110):
    # Drop template arguments and argument lists: the function is what counts.
    depth, out = 0, []
    for ch in name:
        if ch in "<(":
            if depth == 0:
                out.append("<>" if ch == "<" else "()")
            depth += 1
        elif ch in ">)":
            depth = max(depth - 1, 0)
        elif depth == 0:
            out.append(ch)
    s = "".join(out)
    return s if len(s) <= width else s[:width] + "…"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("binary")
    ap.add_argument("--top", type=int, default=60)
    ap.add_argument("--thread", default="", help="only this thread (comm)")
    ap.add_argument("--callers", default="",
                    help="also the callers (the frame above) of frames containing this text")
    ap.add_argument("--skip", default="batchd-shim,true",
                    help="comma-separated threads (comm) left out: the pods' own processes")
    args = ap.parse_args()
    addrs, names = load_symbols(args.binary)
    skip = set(filter(None, args.skip.split(",")))
    proc = subprocess.Popen(["perf", "script", "-i", args.data,
                             "-F", "comm,tid,ip,sym,dso"], stdout=subprocess.PIPE, text=True,
                            stderr=subprocess.DEVNULL)
    self_c, incl_c, threads = collections.Counter(), collections.Counter(), collections.Counter()
    callers_c = collections.Counter()
    total = 0
    comm, stack = None, []

    def resolve(ip, sym, dso):
        if dso == args.binary and sym.startswith("["):
            # perf script prints a dso's addresses as file offsets; in the
            # binary's executable segment they equal its virtual addresses.
            off = ip
            i = bisect.bisect_right(addrs, off) - 1
            return short(names[i]) if i >= 0 else hex(off)
        if sym and sym != "[unknown]":
            return short(sym) + ("" if not dso.startswith("[") else " [k]")
        return dso

    def flush():
        nonlocal total
        if comm is None or not stack:
            return
        if args.thread and comm != args.thread:
            return
        if comm in skip:
            return
        total += 1
        threads[comm] += 1
        self_c[stack[0]] += 1
        for f in set(stack):
            incl_c[f] += 1
        if args.callers:
            seen = set()
            for i, f in enumerate(stack):
                if args.callers in f and i + 1 < len(stack):
                    # The first caller above the match that is not the
                    # library's own recursion (JSON copies, tree copies, std::).
                    j = i + 1
                    while j < len(stack) and (args.callers in stack[j] or
                                              stack[j].startswith(("std::", "nlohmann::"))):
                        j += 1
                    key = f + "  <-  " + " <- ".join(stack[j:j + 2])
                    if key not in seen:
                        seen.add(key)
                        callers_c[key] += 1
                    break

    for line in proc.stdout:
        if not line.strip():
            flush()
            comm, stack = None, []
            continue
        if not line.startswith(("\t", " ")):
            flush()
            comm = line.split()[0]
            stack = []
            continue
        parts = line.strip().split(None, 1)
        if len(parts) < 2:
            continue
        ip = int(parts[0], 16)
        rest = parts[1]
        m = re.match(r"(.*) \((.*)\)$", rest)
        sym, dso = (m.group(1), m.group(2)) if m else (rest, "")
        sym = re.sub(r"\+0x[0-9a-f]+$", "", sym)
        stack.append(resolve(ip, sym, dso))
    flush()
    print(f"samples: {total}")
    print("\nby thread:")
    for k, v in threads.most_common(20):
        print(f"  {100*v/total:6.2f}%  {k}")
    print("\nself:")
    for k, v in self_c.most_common(args.top):
        print(f"  {100*v/total:6.2f}%  {k}")
    if args.callers:
        print(f"\ncallers of {args.callers}:")
        for k, v in callers_c.most_common(args.top):
            print(f"  {100*v/total:6.2f}%  {k}")
    print("\ninclusive:")
    for k, v in incl_c.most_common(args.top * 2):
        print(f"  {100*v/total:6.2f}%  {k}")


if __name__ == "__main__":
    main()
