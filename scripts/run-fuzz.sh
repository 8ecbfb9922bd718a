#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) in build-fuzz with clang and
# ASan+UBSan, then runs each for a bounded time starting from its seed
# corpus in fuzz/corpus/<target>/. Fails on any crash, sanitizer report,
# leak or timeout. Crashing inputs are kept in build-fuzz/artifacts/.
#
# Environment: FUZZ_SECONDS (per target, default 20), FUZZ_JOBS (targets run
# at once, default 2), FUZZ_TARGETS (default: all six), BUILD_DIR.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build-fuzz}
SECONDS_EACH=${FUZZ_SECONDS:-20}
JOBS=${FUZZ_JOBS:-2}
TARGETS=(${FUZZ_TARGETS:-fuzz_codec fuzz_normalize fuzz_patch fuzz_http fuzz_protobuf fuzz_auth})

have_fuzzer_rt() {
  command -v clang++ >/dev/null &&
    compgen -G "/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" >/dev/null
}
if ! have_fuzzer_rt; then
  echo "run-fuzz: installing clang and libclang-rt"
  BATCHD_FUZZ=1 "$ROOT/scripts/install-deps.sh"
fi

if [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
  # -O1 with line tables: fast to build, still symbolized stack traces.
  CC=clang CXX=clang++ cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -gline-tables-only" \
    -DBATCHD_BUILD_FUZZ=ON -DBATCHD_BUILD_TESTS=OFF -DBATCHD_BUILD_BENCH=OFF >/dev/null
fi
cmake --build "$BUILD_DIR" --target "${TARGETS[@]}" -j "${BUILD_JOBS:-2}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
mkdir -p "$BUILD_DIR/artifacts"
LOGS=$(mktemp -d "${TMPDIR:-/tmp}/batchd-fuzz.XXXXXX")
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$LOGS"
}
trap cleanup EXIT

run_target() {  # run_target NAME: leaves the fuzzer's exit status in $LOGS/NAME.rc
  local t=$1 work="$BUILD_DIR/corpus/$1" rc=0
  mkdir -p "$work"
  # The first corpus dir receives new inputs; the seeds stay untouched.
  timeout -k 10 $((SECONDS_EACH + 60)) "$BUILD_DIR/fuzz/$t" "$work" "$ROOT/fuzz/corpus/$t" \
    -max_total_time="$SECONDS_EACH" -rss_limit_mb=2048 -timeout=10 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$BUILD_DIR/artifacts/$t-" >"$LOGS/$t.log" 2>&1 || rc=$?
  echo "$rc" >"$LOGS/$t.rc"
}

failed=0
i=0
for t in "${TARGETS[@]}"; do
  run_target "$t" &
  PIDS+=($!)
  i=$((i + 1))
  # Run at most JOBS at once: wait for the batch before starting more.
  if ((i % JOBS == 0)); then wait; fi
done
wait

for t in "${TARGETS[@]}"; do
  rc=$(cat "$LOGS/$t.rc" 2>/dev/null || echo missing)
  execs=$(grep -ao 'stat::number_of_executed_units: *[0-9]*' "$LOGS/$t.log" | grep -o '[0-9]*$' || echo "?")
  if [[ "$rc" == 0 ]]; then
    echo "PASS $t ($execs runs in ${SECONDS_EACH}s)"
  else
    echo "FAIL $t (exit $rc); log tail:"
    grep -avE '^#[0-9]+' "$LOGS/$t.log" | tail -n 40 | sed 's/^/    /'
    failed=$((failed + 1))
  fi
done
((failed == 0)) || { echo "run-fuzz: $failed target(s) failed; crashing inputs in $BUILD_DIR/artifacts/"; exit 1; }
echo "run-fuzz: all ${#TARGETS[@]} targets clean"
