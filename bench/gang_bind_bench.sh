#!/usr/bin/env bash
# Gang binding latency against a real server (DESIGN.md: a 256-pod gang bound
# within 1 s of its capacity existing).
#   bench/gang_bind_bench.sh BUILD_DIR [RUNS=5]
# Starts BUILD_DIR/bin/batchd server --no-local-node (SQLite store, as
# deployed) on a free loopback port; per run: 32 simulated nodes of 8 cpu,
# one 1-cpu blocker pod, a PodGroup (gang, minCount 256) and 256 1-cpu pods
# naming it (sim-duration 1h). Once the PodGroup says "255 of 256 pods can be
# placed", bench/gang_bind_client.py deletes the blocker (grace 0) over HTTP
# and polls the PodGroup until PodGroupScheduled=True, which the scheduler
# writes after the group's 256 binds; then it checks that all 256 pods have a
# node. Prints each run's milliseconds from the delete's response to the
# observed condition, then the median.
set -euo pipefail
BUILD_DIR=${1:?usage: $0 BUILD_DIR [RUNS]}
RUNS=${2:-5}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BATCHD="$BUILD_DIR/bin/batchd"
[[ -x "$BATCHD" ]] || { echo "gang_bind_bench: $BATCHD not built" >&2; exit 2; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/batchd-gang.XXXXXX")
PID=""
cleanup() {
  if [[ -n "$PID" ]]; then
    kill "$PID" 2>/dev/null || true
    wait "$PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
"$BATCHD" server --no-local-node --allow-loopback-admin --listen "127.0.0.1:$PORT" --data-dir "$WORK/data" \
  >"$WORK/server.log" 2>&1 &
PID=$!
deadline=$((SECONDS + 30))
until [[ $(curl -s -m 2 "http://127.0.0.1:$PORT/healthz" 2>/dev/null) == ok ]]; do
  kill -0 "$PID" 2>/dev/null || { tail -n 20 "$WORK/server.log" >&2; exit 1; }
  ((SECONDS < deadline)) || { echo "gang_bind_bench: server not healthy" >&2; exit 1; }
  sleep 0.1
done
timeout 600 python3 "$HERE/gang_bind_client.py" "http://127.0.0.1:$PORT" "$RUNS"
