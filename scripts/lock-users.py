#!/usr/bin/env python3
"""Prints the .cc files under src/ that clang's thread-safety analysis can say
something about: those whose own text, or the text of a project header they
include (transitively, through #include "..."), names a lock type or a lock
annotation (absl::Mutex and its scoped locks, absl::CondVar, ABSL_GUARDED_BY,
ABSL_EXCLUSIVE_LOCKS_REQUIRED, ...).

The analysis only ever reports on accesses to guarded members, calls of
annotated functions and uses of lock types; a file that sees none of those
declarations cannot produce a diagnostic, so scripts/check-thread-safety.sh
parses only the files listed here (about a third of src/). Run it with
--all to list every file instead.
"""
import os
import re
import sys

LOCKS = re.compile(
    r"\bABSL_(?:PT_)?GUARDED_BY\b|\bABSL_\w*LOCKS?_(?:REQUIRED|EXCLUDED|RETURNED|FUNCTION)\b"
    r"|\bABSL_ASSERT_\w*LOCK\b|\bABSL_ACQUIRED_(?:AFTER|BEFORE)\b|\bABSL_NO_THREAD_SAFETY_ANALYSIS\b"
    r"|\bABSL_SCOPED_LOCKABLE\b|\bABSL_LOCKABLE\b"
    r"|\babsl::(?:Mutex|MutexLock|ReaderMutexLock|WriterMutexLock|ReleasableMutexLock|CondVar)\b")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def main():
    root = "src"
    texts = {}
    for d, _, names in os.walk(root):
        for n in names:
            if n.endswith((".cc", ".h")):
                p = os.path.join(d, n)
                with open(p, encoding="utf-8", errors="replace") as f:
                    texts[p] = f.read()
    includes = {p: [os.path.join(root, i) for i in INCLUDE.findall(t)
                    if os.path.join(root, i) in texts] for p, t in texts.items()}
    # Fixed point of "sees locks": its own text, or an include that does
    # (include cycles need no special case).
    sees = {p: bool(LOCKS.search(t)) for p, t in texts.items()}
    changed = True
    while changed:
        changed = False
        for p, incs in includes.items():
            if not sees[p] and any(sees[i] for i in incs):
                sees[p] = changed = True

    every = "--all" in sys.argv[1:]
    for p in sorted(texts):
        if p.endswith(".cc") and (every or sees[p]):
            print(p)


if __name__ == "__main__":
    main()
