#!/usr/bin/env bash
# Checks the lock annotations (absl::Mutex, ABSL_GUARDED_BY,
# ABSL_EXCLUSIVE_LOCKS_REQUIRED, ...; docs/development.md) with clang's
# thread-safety analysis: every .cc file under src/ (tests included) that
# sees a lock type or annotation (scripts/lock-users.py) is parsed with
# -fsyntax-only -Wthread-safety -Werror=thread-safety, in parallel. Needs
# clang++-14 (scripts/install-deps.sh); produces no binary. Where BUILD_DIR
# (default build) is configured with unity batches (cmake/batchd_cc.cmake,
# BATCHD_UNITY), a file is parsed in its batch: the batch's other files come
# along, and the headers they share are parsed once for all (about half the
# CPU of one file at a time); a file in no batch, or every file when files are
# named on the command line, is parsed alone. Prints each failing file's
# diagnostics and exits non-zero when any file fails. Other clang warnings are not reported
# (-Wno-everything; `-w` would silence the analysis too).
#   CLANGXX=clang++-15 ./scripts/check-thread-safety.sh [FILE.cc ...]
set -euo pipefail
cd "$(dirname "$0")/.."
CLANGXX=${CLANGXX:-clang++-14}
command -v "$CLANGXX" >/dev/null || {
  echo "check-thread-safety: $CLANGXX not found (run scripts/install-deps.sh)" >&2
  exit 2
}
# The include path and the library defines of the CMake build (see
# build/compile_commands.json); the two test path macros only need to exist.
flags=(-std=c++20 -fsyntax-only -Isrc
       -DSPDLOG_FMT_EXTERNAL -DSPDLOG_COMPILED_LIB -DSPDLOG_SHARED_LIB -DFMT_SHARED
       -DBOOST_ALL_NO_LIB -DGTEST_HAS_PTHREAD=1
       '-DBATCHD_SHIM_PATH="batchd-shim"' '-DBATCHD_PROTOBUF_TESTDATA="testdata"'
       -Wno-everything -Wthread-safety -Werror=thread-safety)
# Locks the analysis cannot see are refused outright under src/.
if unchecked=$(grep -rnE 'std::(mutex|recursive_mutex|shared_mutex|condition_variable|lock_guard|unique_lock|scoped_lock)\b' src); then
  echo "$unchecked" >&2
  echo "check-thread-safety: use absl::Mutex / absl::MutexLock / absl::CondVar with ABSL_GUARDED_BY (docs/development.md)" >&2
  exit 1
fi
# Without arguments: the files the analysis can say something about
# (scripts/lock-users.py: those that see a lock type or annotation, directly
# or through the project headers they include); THREAD_SAFETY_ALL=1 parses
# every .cc file.
if (($#)); then
  files=("$@")
elif [[ "${THREAD_SAFETY_ALL:-}" == 1 ]]; then
  mapfile -t files < <(python3 scripts/lock-users.py --all)
else
  mapfile -t files < <(python3 scripts/lock-users.py)
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# The unity batch of each file, where the build has them: each batch that
# holds a listed file is parsed instead of the files it holds (the analysis
# judges every function body the same way whatever else the unit holds; the
# build already needs the names in one batch to be distinct).
units=("${files[@]}")
BUILD_DIR=${BUILD_DIR:-build}
if ((!$#)) && [[ -d "$BUILD_DIR" ]] && [[ "${THREAD_SAFETY_UNITY:-1}" == 1 ]]; then
  mapfile -t units < <(python3 - "$BUILD_DIR" "$PWD" "${files[@]}" <<'PY'
import glob, os, re, sys
build, root, files = sys.argv[1], sys.argv[2], sys.argv[3:]
batch_of = {}
for u in sorted(glob.glob(os.path.join(build, "**", "Unity", "unity_*.cxx"), recursive=True)):
    incs = re.findall(r'^#include "([^"]+)"', open(u).read(), re.M)
    if not all(os.path.isfile(i) for i in incs):
        continue  # a batch of an older configure: its files are parsed alone
    for inc in incs:
        rel = os.path.relpath(inc, root)
        # The same file may sit in several targets' batches (a library and
        # the fuzz build's copy): one batch per file is enough.
        batch_of.setdefault(rel, u)
seen = set()
for f in files:
    u = batch_of.get(f, f)
    if u not in seen:
        seen.add(u)
        print(u)
PY
  )
fi
# The headers every file parses (cmake/pch/: the standard library,
# nlohmann/json, Abseil, GoogleTest) are precompiled once with the same flags
# and included first into each file: a third less parsing per file. The
# analysis still runs on every function body of every file.
pch_flags=("${flags[@]}")
pch_flags=("${pch_flags[@]/-fsyntax-only/}")
if "$CLANGXX" "${pch_flags[@]}" -x c++-header cmake/pch/batchd_test_pch.h -o "$out/pch.pch" \
    >"$out/pch.log" 2>&1; then
  flags+=(-include-pch "$out/pch.pch")
else
  cat "$out/pch.log" >&2
  echo "check-thread-safety: the precompiled header failed; parsing every header per file" >&2
fi
export CLANGXX out
printf '%s\0' "${units[@]}" | xargs -0 -P "$(nproc)" -n 1 bash -c '
  f=${!#}; set -- "${@:1:$#-1}"  # xargs appends the file after the flags.
  "$CLANGXX" "$@" "$f" >"$out/$(tr / _ <<<"$f").log" 2>&1 || echo "$f" >>"$out/failed.$$"
' _ "${flags[@]}" ||  true
if compgen -G "$out/failed.*" >/dev/null; then
  mapfile -t failed < <(sort "$out"/failed.*)
  for f in "${failed[@]}"; do cat "$out/$(tr / _ <<<"$f").log"; done
  echo "check-thread-safety: ${#failed[@]} of ${#units[@]} units fail: ${failed[*]}" >&2
  exit 1
fi
echo "check-thread-safety: ${#files[@]} files clean (${#units[@]} translation units)"
