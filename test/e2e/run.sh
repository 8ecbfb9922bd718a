#!/usr/bin/env bash
# End-to-end tests with the real kubectl: ./test/e2e/run.sh BIN_DIR
#
# Starts `BIN_DIR/batchd server` on a free loopback port with a fresh data
# directory, runs every test/e2e/test_*.sh (each in its own bash process,
# sourcing lib.sh; those with a `# e2e-parallel` line in the background
# alongside the others) and then crash_test.sh, printing `PASS name` or
# `FAIL name: reason` per test and finally `N passed, N failed`.
# Then the jobs suite: a second server WITH the local node (own port, data
# dir and cleanup) runs test/e2e/jobs/test_*.sh, whose pods are host
# processes; scripts with a `# e2e-parallel` line run in the background
# alongside the others (names are prefixed `jobs/`; E2E_JOBS_TIMEOUT, default
# 240 s, bounds each). Then the kueue suite the same way: a third server
# with --no-local-node and --config kueue/config.yaml runs
# test/e2e/kueue/test_*.sh on simulated nodes. The closing
# `N passed, N failed` covers every suite.
# Exit status is non-zero when any test fails. Set E2E_FILTER=regex to run a
# subset, E2E_VERBOSE=1 to print each failed test's log.
set -euo pipefail

BIN_DIR=${1:?usage: $0 BIN_DIR}
BIN_DIR=$(cd "$BIN_DIR" && pwd)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BATCHD="$BIN_DIR/batchd"
TEST_TIMEOUT=${E2E_TEST_TIMEOUT:-90}

[[ -x "$BATCHD" ]] || { echo "run.sh: $BATCHD not found or not executable" >&2; exit 2; }
command -v kubectl >/dev/null || { echo "run.sh: kubectl not found in PATH" >&2; exit 2; }
command -v curl >/dev/null || { echo "run.sh: curl not found in PATH" >&2; exit 2; }

# A bare chroot made with `mktemp -d` has "/" at mode 0700, where the
# unprivileged pod user can run nothing (a root agent refuses to start there
# and says so). Every installed Debian root is 0755: give the test host that.
if [[ $(id -u) == 0 && $(( 0$(stat -c %a /) & 1 )) == 0 ]]; then
  echo "run.sh: / is mode $(stat -c %a /); making it searchable (chmod o+x /) so pods can run as the pod user" >&2
  chmod o+x /
fi

# Every batchd the suites start keeps Abseil's lock-order checking on (off by
# default in the binary for speed): an inversion aborts the test run.
export BATCHD_MUTEX_DEADLOCK_CHECK=1
WORK=$(mktemp -d "${TMPDIR:-/tmp}/batchd-e2e.XXXXXX")
# Pods run as the unprivileged pod user (docs/security.md "Pods"): the
# scratch directories their volumes and mount paths lie in must be
# traversable, as /tmp itself is.
chmod 711 "$WORK"
# The suites run python3 hundreds of times (free ports, JSON, helpers; the
# standard library only). Where python3 on the PATH is a version manager's
# shim (pyenv's costs ~0.35 CPU-s a call, ten times the interpreter's own
# start), they run Debian's /usr/bin/python3 instead.
if [[ -x /usr/bin/python3 && $(command -v python3) != /usr/bin/python3 ]]; then
  mkdir -p "$WORK/bin"
  ln -s /usr/bin/python3 "$WORK/bin/python3"
  PATH="$WORK/bin:$PATH"
fi
SERVER_PID=""
SUITE_PID=""
stop_server() {  # stop_server PID: SIGTERM, then SIGKILL after 5 s.
  if [[ -n "$1" ]] && kill -0 "$1" 2>/dev/null; then
    kill "$1" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
  fi
}
# kill_pods_under DIR: SIGKILL the processes (pods, shims, agents) whose
# working directory or command line is under DIR; the jobs suite's pods live
# under $WORK.
kill_pods_under() {
  local d cwd
  for d in /proc/[0-9]*; do
    [[ ${d#/proc/} == "$$" ]] && continue
    cwd=$(readlink "$d/cwd" 2>/dev/null) || continue
    if [[ $cwd == "$1"/* ]] || tr '\0' ' ' <"$d/cmdline" 2>/dev/null | grep -qF -- "$1/"; then
      kill -9 "${d#/proc/}" 2>/dev/null || true
    fi
  done
}
cleanup() {
  stop_server "$SERVER_PID"
  stop_server "$SUITE_PID"
  kill_pods_under "$WORK"
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# wait_healthy PORT PID SECONDS
wait_healthy() {
  local deadline=$((SECONDS + $3))
  while ((SECONDS < deadline)); do
    kill -0 "$2" 2>/dev/null || return 1
    if [[ $(curl -s -m 2 "http://127.0.0.1:$1/healthz" 2>/dev/null) == ok ]]; then return 0; fi
    sleep 0.1
  done
  return 1
}

PORT=$(free_port)
mkdir -p "$WORK/data" "$WORK/cache" "$WORK/logs"
"$BATCHD" server --listen "127.0.0.1:$PORT" --allow-loopback-admin --data-dir "$WORK/data" --no-local-node \
  >"$WORK/logs/server.log" 2>&1 &
SERVER_PID=$!
if ! wait_healthy "$PORT" "$SERVER_PID" 30; then
  echo "run.sh: server did not become healthy on port $PORT; its log:" >&2
  tail -n 30 "$WORK/logs/server.log" >&2 || true
  echo "0 passed, 1 failed"
  exit 1
fi

passed=0
failed=0
skipped=0
# Tests listed in test/e2e/KNOWN_FAILING ("name: reason", for an open issue)
# are skipped in the default run and reported as SKIP with their reason; they
# run when E2E_FILTER names them or E2E_RUN_KNOWN_FAILING=1.
known_failing() {  # known_failing NAME -> prints the reason, status 0 when listed
  [[ -n "${E2E_FILTER:-}" || "${E2E_RUN_KNOWN_FAILING:-}" == 1 ]] && return 1
  [[ -f "$HERE/KNOWN_FAILING" ]] || return 1
  local line
  line=$(grep -E "^$1:" "$HERE/KNOWN_FAILING" | head -n 1) || return 1
  [[ -n "$line" ]] || return 1
  echo "${line#*: }"
}
report() {  # report NAME RC LOG REASON_FILE [SECONDS [LIMIT]]
  local took=""
  [[ -n "${5:-}" ]] && took=" (${5}s)"
  if [[ $2 == 0 ]]; then
    echo "PASS $1$took"
    passed=$((passed + 1))
    return
  fi
  local reason=""
  [[ -s "$4" ]] && reason=$(head -n 1 "$4")
  if [[ -z "$reason" ]]; then
    if [[ $2 == 124 ]]; then reason="timed out after ${6:-$TEST_TIMEOUT}s"
    else reason="exit $2: $(grep -v '^+' "$3" | tail -n 1 || true)"; fi
  fi
  echo "FAIL $1$took: $reason"
  if [[ "${E2E_VERBOSE:-}" == 1 ]]; then sed 's/^/    /' "$3" | tail -n 40; fi
  failed=$((failed + 1))
}

# exec_one NAME SCRIPT [extra env...]: runs one test; its exit status lands
# in $WORK/t-NAME/rc (so it can run in the background).
exec_one() {
  local name=$1 script=$2; shift 2
  local tmp="$WORK/t-${name//\//-}"
  mkdir -p "$tmp"
  : >"$tmp/reason"
  local rc=0 limit=$TEST_TIMEOUT own
  # A test that starts servers of its own may raise its limit: `# e2e-timeout: N`.
  own=$(sed -n 's/^# e2e-timeout: \([0-9][0-9]*\)$/\1/p' "$script" | head -n 1)
  [[ -n "$own" ]] && ((own > limit)) && limit=$own
  local start=$SECONDS
  env PORT="$PORT" E2E_NAME="${name//\//-}" E2E_TMP="$tmp" E2E_CACHE="$WORK/cache" \
      E2E_REASON="$tmp/reason" E2E_LIB="$HERE/lib.sh" BIN_DIR="$BIN_DIR" \
      E2E_DATA="${E2E_DATA:-$WORK/data}" "$@" \
      timeout -k 5 "$limit" bash "$script" >"$tmp/log" 2>&1 </dev/null || rc=$?
  echo "$((SECONDS - start))" >"$tmp/secs"
  echo "$limit" >"$tmp/limit"
  echo "$rc" >"$tmp/rc"
}
report_one() {  # report_one NAME
  local tmp="$WORK/t-${1//\//-}"
  report "$1" "$(cat "$tmp/rc" 2>/dev/null || echo 1)" "$tmp/log" "$tmp/reason" \
    "$(cat "$tmp/secs" 2>/dev/null)" "$(cat "$tmp/limit" 2>/dev/null)"
}
run_one() {  # run_one NAME SCRIPT [extra env...]
  exec_one "$@"
  report_one "$1"
}

# Scripts with a `# e2e-parallel` line (ones that mostly wait: on their own
# servers, on Prometheus, on backoff timers) run in the background alongside
# the others; every one is reported before the crash test.
top_bg_names=()
top_bg_pids=()
for script in "$HERE"/test_*.sh; do
  name=$(basename "$script" .sh)
  name=${name#test_}
  [[ -z "${E2E_FILTER:-}" || "$name" =~ $E2E_FILTER ]] || continue
  grep -q '^# e2e-parallel' "$script" || continue
  exec_one "$name" "$script" &
  top_bg_pids+=($!)
  top_bg_names+=("$name")
done
for script in "$HERE"/test_*.sh; do
  name=$(basename "$script" .sh)
  name=${name#test_}
  [[ -z "${E2E_FILTER:-}" || "$name" =~ $E2E_FILTER ]] || continue
  grep -q '^# e2e-parallel' "$script" && continue
  grep -q '^# e2e-quiet' "$script" && continue
  run_one "$name" "$script"
done
for i in "${!top_bg_pids[@]}"; do
  wait "${top_bg_pids[$i]}" || true
  report_one "${top_bg_names[$i]}"
done
# Scripts with a `# e2e-quiet` line time something (latency under held
# connections, an Event TTL to the second): they run last, alone.
for script in "$HERE"/test_*.sh; do
  name=$(basename "$script" .sh)
  name=${name#test_}
  [[ -z "${E2E_FILTER:-}" || "$name" =~ $E2E_FILTER ]] || continue
  grep -q '^# e2e-quiet' "$script" || continue
  run_one "$name" "$script"
done

# The server must have survived everything the tests sent it.
if ! kill -0 "$SERVER_PID" 2>/dev/null; then
  echo "FAIL server_alive: the server exited during the tests; log tail: $(tail -n 3 "$WORK/logs/server.log" | tr '\n' ' ')"
  failed=$((failed + 1))
fi

if [[ -z "${E2E_FILTER:-}" || "crash" =~ $E2E_FILTER ]]; then
  run_one crash "$HERE/crash_test.sh" E2E_TEST_TIMEOUT="$TEST_TIMEOUT"
fi
stop_server "$SERVER_PID"
SERVER_PID=""

# run_suite NAME DIR [SERVER FLAGS...]: a suite with its own server (own port,
# data dir and log) running DIR/test_*.sh; tests are reported as NAME/test.
# Scripts with a `# e2e-parallel` line run in the background alongside the
# others. E2E_JOBS_TIMEOUT (default 240 s) bounds each test.
run_suite() {
  local suite=$1 dir=$2; shift 2
  local tests=() script name why
  for script in "$dir"/test_*.sh; do
    [[ -e $script ]] || continue
    name=$(basename "$script" .sh)
    name="$suite/${name#test_}"
    [[ -z "${E2E_FILTER:-}" || "$name" =~ $E2E_FILTER ]] || continue
    if why=$(known_failing "$name"); then
      echo "SKIP $name: known failing: $why"
      skipped=$((skipped + 1))
      continue
    fi
    tests+=("$script")
  done
  ((${#tests[@]} > 0)) || return 0
  local saved_timeout=$TEST_TIMEOUT saved_port=$PORT
  TEST_TIMEOUT=${E2E_JOBS_TIMEOUT:-240}
  PORT=$(free_port)
  mkdir -p "$WORK/$suite-data"
  local saved_data=${E2E_DATA:-}
  E2E_DATA="$WORK/$suite-data"  # the suite server's data dir (its pki/, for node credentials)
  "$BATCHD" server --listen "127.0.0.1:$PORT" --allow-loopback-admin --data-dir "$WORK/$suite-data" "$@" \
    >"$WORK/logs/$suite-server.log" 2>&1 &
  SUITE_PID=$!
  if ! wait_healthy "$PORT" "$SUITE_PID" 30; then
    echo "FAIL $suite/server: the $suite suite's server did not become healthy; log tail: $(tail -n 3 "$WORK/logs/$suite-server.log" | tr '\n' ' ')"
    failed=$((failed + 1))
  else
    local bg_names=() bg_pids=() i
    for script in "${tests[@]}"; do
      grep -q '^# e2e-parallel' "$script" || continue
      name=$(basename "$script" .sh)
      name="$suite/${name#test_}"
      exec_one "$name" "$script" &
      bg_pids+=($!)
      bg_names+=("$name")
    done
    for script in "${tests[@]}"; do
      grep -q '^# e2e-parallel' "$script" && continue
      name=$(basename "$script" .sh)
      run_one "$suite/${name#test_}" "$script"
    done
    for i in "${!bg_pids[@]}"; do
      wait "${bg_pids[$i]}" || true
      report_one "${bg_names[$i]}"
    done
    if ! kill -0 "$SUITE_PID" 2>/dev/null; then
      echo "FAIL $suite/server_alive: the $suite server exited during the tests; log tail: $(tail -n 3 "$WORK/logs/$suite-server.log" | tr '\n' ' ')"
      failed=$((failed + 1))
    fi
  fi
  stop_server "$SUITE_PID"
  SUITE_PID=""
  TEST_TIMEOUT=$saved_timeout
  PORT=$saved_port
  E2E_DATA=$saved_data
}

# --- The jobs suite: its own server with the local node (pods are host
# processes under batchd-shim supervisors). ---
# Pods tolerate a lost node for 5 s (not the default 300 s), so node-failure
# tests see evictions within a minute.
run_suite jobs "$HERE/jobs" --default-unreachable-toleration-seconds 5 \
  --default-not-ready-toleration-seconds 5

# --- The kueue suite: queueing and admission on simulated nodes only, with
# the queueing configuration in kueue/config.yaml. ---
run_suite kueue "$HERE/kueue" --no-local-node --config "$HERE/kueue/config.yaml"
if [[ -z "${E2E_FILTER:-}" || "kueue_crash" =~ $E2E_FILTER ]]; then TEST_TIMEOUT=${E2E_JOBS_TIMEOUT:-240} run_one kueue_crash "$HERE/kueue_crash_test.sh"; fi

echo "e2e took ${SECONDS}s"
echo "$passed passed, $failed failed, $skipped skipped"
((failed == 0))
