#!/usr/bin/env bash
# Checks the lock annotations (absl::Mutex, ABSL_GUARDED_BY,
# ABSL_EXCLUSIVE_LOCKS_REQUIRED, ...; docs/development.md) with clang's
# thread-safety analysis: every .cc file under src/ (tests included) that
# sees a lock type or annotation (scripts/lock-users.py) is parsed with
# -fsyntax-only -Wthread-safety -Werror=thread-safety, in parallel. Needs clang++-14 (scripts/install-deps.sh) and no build dir;
# produces no binary. Prints each failing file's diagnostics and exits
# non-zero when any file fails. Other clang warnings are not reported
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
printf '%s\0' "${files[@]}" | xargs -0 -P "$(nproc)" -n 1 bash -c '
  f=${!#}; set -- "${@:1:$#-1}"  # xargs appends the file after the flags.
  "$CLANGXX" "$@" "$f" >"$out/$(tr / _ <<<"$f").log" 2>&1 || echo "$f" >>"$out/failed.$$"
' _ "${flags[@]}" ||  true
if compgen -G "$out/failed.*" >/dev/null; then
  mapfile -t failed < <(sort "$out"/failed.*)
  for f in "${failed[@]}"; do cat "$out/$(tr / _ <<<"$f").log"; done
  echo "check-thread-safety: ${#failed[@]} of ${#files[@]} files fail: ${failed[*]}" >&2
  exit 1
fi
echo "check-thread-safety: ${#files[@]} files clean"
