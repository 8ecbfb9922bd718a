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
source "$HERE/lib.sh"
BATCHD="$BUILD_DIR/bin/batchd"
[[ -x "$BATCHD" ]] || { echo "gang_bind_bench: $BATCHD not built" >&2; exit 2; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/batchd-gang.XXXXXX")
PID=""
cleanup() {
  bench_stop_server
  rm -rf "$WORK"
}
trap cleanup EXIT

bench_start_server "$BATCHD" "$WORK/server.log" --no-local-node --data-dir "$WORK/data"
timeout 600 python3 "$HERE/gang_bind_client.py" "http://127.0.0.1:$PORT" "$RUNS"
