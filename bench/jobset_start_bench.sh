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
source "$HERE/lib.sh"
BATCHD="$BUILD_DIR/bin/batchd"
[[ -x "$BATCHD" ]] || { echo "jobset_start_bench: $BATCHD not built" >&2; exit 2; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/batchd-jsstart.XXXXXX")
PID=""
cleanup() {
  bench_stop_server
  rm -rf "$WORK"
}
trap cleanup EXIT
bench_start_server "$BATCHD" "$WORK/server.log" --no-local-node --data-dir "$WORK/data"
echo "| JobSet | runs | all bound (median s) | all Running (median s) | min s | max s |"
echo "|---|---:|---:|---:|---:|---:|"
python3 "$HERE/jobset_start_client.py" "http://127.0.0.1:$PORT" "$RUNS" 1x100
python3 "$HERE/jobset_start_client.py" "http://127.0.0.1:$PORT" "$RUNS" 100x1
