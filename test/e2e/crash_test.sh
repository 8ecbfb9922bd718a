#!/usr/bin/env bash
# kill -9 crash test: acknowledged writes survive, the store reopens cleanly,
# and resourceVersions keep growing. Run by run.sh; standalone:
#   BIN_DIR=build/bin test/e2e/crash_test.sh
# Two rounds on one data directory: --store-sync full, then normal (both
# promise durability across a process crash). Each round fires 1,000
# concurrent creates and kill -9s the server after 400 were acknowledged.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BATCHD="${BIN_DIR:?BIN_DIR not set}/batchd"
REASON=${E2E_REASON:-/dev/null}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/batchd-crash.XXXXXX")
PID=""

cleanup() {
  if [[ -n "$PID" ]] && kill -0 "$PID" 2>/dev/null; then
    kill -9 "$PID" 2>/dev/null || true
    wait "$PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

fail() {
  [[ -s "$REASON" ]] || echo "$*" >"$REASON" 2>/dev/null || true
  echo "FAIL: $*" >&2
  [[ -f "$WORK/server.log" ]] && tail -n 20 "$WORK/server.log" >&2
  exit 1
}

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')

start_server() {  # start_server SYNC
  "$BATCHD" server --listen "127.0.0.1:$PORT" --allow-loopback-admin --data-dir "$WORK/data" --no-local-node \
    --store-sync "$1" >>"$WORK/server.log" 2>&1 &
  PID=$!
  local deadline=$((SECONDS + 30))
  until [[ $(curl -s -m 2 "http://127.0.0.1:$PORT/healthz" 2>/dev/null) == ok ]]; do
    kill -0 "$PID" 2>/dev/null || fail "server (sync $1) exited while starting"
    ((SECONDS < deadline)) || fail "server (sync $1) not healthy within 30s"
    sleep 0.1
  done
}

crash_round() {  # crash_round SYNC PREFIX
  start_server "$1"
  timeout 120 python3 "$HERE/crash_client.py" burst "$PORT" "$2" 1000 400 "$PID" "$WORK/$2.json" \
    || fail "burst client failed (round $2)"
  wait "$PID" 2>/dev/null || true  # Reap the killed server.
  PID=""
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["killed_mid_burst"] else 1)' \
    "$WORK/$2.json" || fail "round $2: the burst finished before 400 creates were acknowledged"
}

crash_round full r1
start_server normal
timeout 60 python3 "$HERE/crash_client.py" verify "$PORT" "$WORK/r1.json" || fail "after round 1: see above"
kill -9 "$PID"; wait "$PID" 2>/dev/null || true; PID=""

crash_round normal r2
start_server full
timeout 60 python3 "$HERE/crash_client.py" verify "$PORT" "$WORK/r1.json" "$WORK/r2.json" \
  || fail "after round 2: see above"
grep -qiE "corrupt|malformed" "$WORK/server.log" \
  && fail "server log reports store damage: $(grep -iE 'corrupt|malformed' "$WORK/server.log" | head -n 1)"
echo "crash test passed"
