#!/usr/bin/env bash
# Kueue's own scheduler performance test ("baseline": 5 cohorts x 6
# ClusterQueues, 15,000 workloads in small/medium/large classes), end to end
# against a real batchd server on simulated nodes.
#   bench/kueue_perf.sh BUILD_DIR [client flags, e.g. --scale 0.5 --fraction 0.2]
# Other shapes: --shape tas (640 nodes, topology-aware), --shape large-scale
# (Kueue's 1,000 ClusterQueues / 50,000 workloads), --shape deep (one
# ClusterQueue 20,000 deep: admissions per second).
# Starts BUILD_DIR/bin/batchd server --no-local-node on a fresh data dir and a
# free loopback port, runs bench/kueue_perf_client.py against it (see its
# docstring for the shape and what is measured) and prints its key=value
# results. The server is stopped on exit.
set -euo pipefail
BUILD_DIR=${1:?usage: $0 BUILD_DIR [client flags]}
shift
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BATCHD="$BUILD_DIR/bin/batchd"
[[ -x "$BATCHD" ]] || { echo "kueue_perf: $BATCHD not built" >&2; exit 2; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/batchd-kperf.XXXXXX")
. "$HERE/lib.sh"
PID=""
cleanup() {
  bench_stop_server
  [[ -n "${KEEP_WORK:-}" ]] || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# shellcheck disable=SC2086  # SERVER_FLAGS: extra server flags, word-split.
bench_start_server "$BATCHD" "$WORK/server.log" --data-dir "$WORK/data" --no-local-node ${SERVER_FLAGS:-}
echo "machine=$(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo); load=$(cut -d' ' -f1-3 /proc/loadavg)"
echo "date=$(date -u +%Y-%m-%dT%H:%MZ)"
python3 "$HERE/kueue_perf_client.py" --port "$PORT" --server-pid "$PID" "$@"
