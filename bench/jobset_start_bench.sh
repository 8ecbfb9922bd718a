#!/usr/bin/env bash
# Time to start a JobSet of 1 leader + 100 workers on simulated nodes
# (docs/benchmarks.md, "JobSet start"):
#   bench/jobset_start_bench.sh BUILD_DIR [RUNS=5]
# Starts BUILD_DIR/bin/batchd server --no-local-node (SQLite store) on a free
# loopback port; bench/jobset_start_client.py then creates, per run, 26
# simulated nodes of 4 cpu and the JobSet (every pod 1 cpu, sim-duration 1h),
# and measures from before the JobSet's POST until a pod watch has seen all
# 101 pods bound, then Running: once with the workers as one Indexed Job of
# 100 pods, once as 100 Jobs of one pod. Prints markdown table rows.
set -euo pipefail
BUILD_DIR=${1:?usage: $0 BUILD_DIR [RUNS]}
RUNS=${2:-5}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BATCHD="$BUILD_DIR/bin/batchd"
[[ -x "$BATCHD" ]] || { echo "jobset_start_bench: $BATCHD not built" >&2; exit 2; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/batchd-jsstart.XXXXXX")
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
  ((SECONDS < deadline)) || { echo "jobset_start_bench: server not healthy" >&2; exit 1; }
  sleep 0.1
done
echo "| JobSet | runs | all bound (median s) | all Running (median s) | min s | max s |"
echo "|---|---:|---:|---:|---:|---:|"
python3 "$HERE/jobset_start_client.py" "http://127.0.0.1:$PORT" "$RUNS" 1x100
python3 "$HERE/jobset_start_client.py" "http://127.0.0.1:$PORT" "$RUNS" 100x1
