#!/usr/bin/env bash
# `make test`: every check of the project, the independent ones at once.
#   scripts/make-test.sh [BUILD_DIR]      (BUILD_DIR configured; default build)
#
# 1. layering: scripts/check-layering.sh (seconds).
# 2. binaries: the three programs the end-to-end suite drives (batchd,
#    batchctl, batchd-shim), at full priority: everything after waits on them.
# 3. Two lanes at once:
#    - e2e: test/e2e/run.sh, which mostly waits on servers, pods and kubectl;
#    - the CPU-heavy checks, one after another, each `nice -n MAKE_TEST_NICE`
#      (default 10) so that e2e's timing-sensitive parts get the CPU when they
#      want it: build (the rest: test drivers, benchmarks, examples),
#      thread-safety (scripts/check-thread-safety.sh), fuzz
#      (scripts/run-fuzz.sh), unit (ctest; only after a good build).
#    So at most JOBS (default nproc) compile or test processes run beside the
#    e2e suite. A step whose prerequisite failed is reported as not run.
#
# Each step's output goes to BUILD_DIR/make-test/STEP.log and is printed in
# full when the step ends (never interleaved); the run ends with a summary of
# every step (result, wall seconds, CPU seconds of the step and what it
# waited for) and exits non-zero when any step failed or did
# not run. MAKE_TEST_SERIAL=1 runs the same steps one at a time without nice
# (the old order: layering, build, thread-safety, e2e, fuzz, unit), for
# comparing wall times.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-${BUILD_DIR:-build}}
JOBS=${JOBS:-$(nproc)}
NICE=${MAKE_TEST_NICE:-10}
SERIAL=${MAKE_TEST_SERIAL:-}
[[ -f "$BUILD_DIR/build.ninja" ]] || {
  echo "make-test: $BUILD_DIR is not configured (make configure)" >&2
  exit 2
}
LOGS="$BUILD_DIR/make-test"
rm -rf "$LOGS"
mkdir -p "$LOGS"
# Each step runs in its own process group (job control), so an interrupt
# stops a step's whole tree (ninja's compilers, e2e's servers), not just its
# first process.
set -m

declare -A step_of_pid=() started=() result=() took=()
order=()  # the steps in the order they were started or skipped
running=0
t0=$SECONDS

start_step() {  # start_step NAME NICENESS COMMAND...: runs it in the background
  local name=$1 niceness=$2
  shift 2
  echo "make-test: +$((SECONDS - t0))s start $name: ${*}"
  # bash's `time` adds the CPU the step and its descendants used to its log.
  set -- bash -c 'TIMEFORMAT="make-test: cpu %U s user %S s sys"; time "$@"' "$name" "$@"
  if [[ -z "$SERIAL" && $niceness != 0 ]]; then set -- nice -n "$niceness" "$@"; fi
  "$@" >"$LOGS/$name.log" 2>&1 </dev/null &
  step_of_pid[$!]=$name
  started[$name]=$SECONDS
  order+=("$name")
  running=$((running + 1))
}
skip_step() {  # skip_step NAME REASON
  echo "make-test: +$((SECONDS - t0))s not running $1: $2"
  result[$1]="NOT RUN ($2)"
  took[$1]=0
  order+=("$1")
}
# finish_one: waits for any running step to end, prints its log in full and
# records its result; leaves its name in $finished.
finished=""
finish_one() {
  local pid="" rc=0
  wait -n -p pid || rc=$?
  finished=${step_of_pid[$pid]}
  unset "step_of_pid[$pid]"
  running=$((running - 1))
  took[$finished]=$((SECONDS - ${started[$finished]}))
  if [[ $rc == 0 ]]; then result[$finished]=PASS; else result[$finished]="FAIL (exit $rc)"; fi
  echo "===== make-test: $finished: ${result[$finished]} after ${took[$finished]} s; its log ($LOGS/$finished.log):"
  cat "$LOGS/$finished.log"
  echo "===== make-test: end of $finished's log"
}
run_step() {  # run_step NAME NICENESS COMMAND...: in the foreground
  start_step "$@"
  finish_one
}
passed() { [[ ${result[$1]:-} == PASS ]]; }
stop_all() {
  local p
  for p in "${!step_of_pid[@]}"; do kill -TERM -- "-$p" 2>/dev/null || true; done
}
trap 'stop_all; exit 130' INT TERM

build_cmd=(cmake --build "$BUILD_DIR" -j "$JOBS")
e2e_cmd=(./test/e2e/run.sh "$BUILD_DIR/bin")
ts_cmd=(env BUILD_DIR="$BUILD_DIR" ./scripts/check-thread-safety.sh)
fuzz_cmd=(env BUILD_JOBS="$JOBS" FUZZ_JOBS="$JOBS" ./scripts/run-fuzz.sh)
unit_cmd=(bash -c "cd '$BUILD_DIR' && ctest --output-on-failure -j '$JOBS' --timeout 300")

if [[ -n "$SERIAL" ]]; then
  run_step layering 0 ./scripts/check-layering.sh
  run_step build 0 "${build_cmd[@]}"
  run_step thread-safety 0 "${ts_cmd[@]}"
  if passed build; then run_step e2e 0 "${e2e_cmd[@]}"; else skip_step e2e "the build failed"; fi
  run_step fuzz 0 "${fuzz_cmd[@]}"
  if passed build; then run_step unit 0 "${unit_cmd[@]}"; else skip_step unit "the build failed"; fi
else
  run_step layering 0 ./scripts/check-layering.sh
  run_step binaries 0 "${build_cmd[@]}" --target batchd batchctl batchd-shim
  if passed binaries; then
    start_step e2e 0 "${e2e_cmd[@]}"
  else
    skip_step e2e "the binaries did not build"
  fi
  # The heavy lane: one step at a time, the next one started when it ends.
  heavy=(build thread-safety fuzz unit)
  next_heavy() {
    while ((${#heavy[@]})); do
      local s=${heavy[0]}
      heavy=("${heavy[@]:1}")
      case $s in
        build) start_step build "$NICE" "${build_cmd[@]}"; return ;;
        thread-safety) start_step thread-safety "$NICE" "${ts_cmd[@]}"; return ;;
        fuzz) start_step fuzz "$NICE" "${fuzz_cmd[@]}"; return ;;
        unit)
          if passed build; then start_step unit "$NICE" "${unit_cmd[@]}"; return; fi
          skip_step unit "the build failed" ;;
      esac
    done
  }
  next_heavy
  while ((running > 0)); do
    finish_one
    [[ $finished == e2e ]] || next_heavy
  done
fi

echo "===== make-test: summary (wall $((SECONDS - t0)) s; logs in $LOGS/)"
printf '  %-14s %-28s %7s %9s\n' step result wall "CPU (s)"
bad=()
for s in "${order[@]}"; do
  cpu=$(sed -n 's/^make-test: cpu \([0-9.]*\) s user \([0-9.]*\) s sys$/\1 \2/p' "$LOGS/$s.log" 2>/dev/null |
        awk '{printf "%.0f", $1 + $2}')
  printf '  %-14s %-28s %5d s %9s\n' "$s" "${result[$s]}" "${took[$s]}" "${cpu:--}"
  [[ ${result[$s]} == PASS ]] || bad+=("$s")
done
if ((${#bad[@]})); then
  echo "make-test: ${#bad[@]} of ${#order[@]} steps failed or did not run: ${bad[*]}"
  exit 1
fi
echo "make-test: all ${#order[@]} steps passed"
