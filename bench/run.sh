#!/usr/bin/env bash
# API benchmarks against a real server: ./bench/run.sh BUILD_DIR
# Starts BUILD_DIR/bin/batchd on a free loopback port with a fresh SQLite
# data dir, once with --store-sync full and once with normal, runs
# BUILD_DIR/bin/apiserver_bench against each and prints a markdown table.
# Extra arguments go to apiserver_bench (e.g. --creates 5000 --updates 500).
set -euo pipefail
BUILD_DIR=${1:?usage: $0 BUILD_DIR [apiserver_bench flags]}
shift
BATCHD="$BUILD_DIR/bin/batchd"
BENCH="$BUILD_DIR/bin/apiserver_bench"
for b in "$BATCHD" "$BENCH"; do
  [[ -x "$b" ]] || { echo "bench/run.sh: $b not built (cmake --build $BUILD_DIR --target batchd apiserver_bench)" >&2; exit 2; }
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/batchd-bench.XXXXXX")
PID=""
cleanup() {
  if [[ -n "$PID" ]]; then kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

run_mode() {  # run_mode SYNC -> $WORK/SYNC.out
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
  mkdir -p "$WORK/data-$1"
  "$BATCHD" server --listen "127.0.0.1:$port" --allow-loopback-admin --data-dir "$WORK/data-$1" --no-local-node \
    --store-sync "$1" >"$WORK/server-$1.log" 2>&1 &
  PID=$!
  local deadline=$((SECONDS + 30))
  until [[ $(curl -s -m 2 "http://127.0.0.1:$port/healthz" 2>/dev/null) == ok ]]; do
    kill -0 "$PID" 2>/dev/null || { cat "$WORK/server-$1.log" >&2; exit 1; }
    ((SECONDS < deadline)) || { echo "bench: server not healthy" >&2; exit 1; }
    sleep 0.1
  done
  echo "bench: sync=$1 on port $port ..." >&2
  timeout 600 "$BENCH" --port "$port" "$@" >"$WORK/$1.out" || {
    echo "bench: apiserver_bench failed (sync=$1)" >&2; tail -n 5 "$WORK/server-$1.log" >&2; exit 1; }
  # Resident memory of the server after the run.
  awk '/VmRSS/ {print "server_rss_mib=" int($2/1024)}' "/proc/$PID/status" >>"$WORK/$1.out" || true
  kill "$PID"; wait "$PID" 2>/dev/null || true; PID=""
}

MODES=(full normal)
for m in "${MODES[@]}"; do run_mode "$m" "$@"; done

val() { grep -E "^$2=" "$WORK/$1.out" | head -n 1 | cut -d= -f2; }
row() {  # row LABEL KEY
  printf '| %s |' "$1"
  for m in "${MODES[@]}"; do printf ' %s |' "$(val "$m" "$2")"; done
  printf '\n'
}
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
echo
echo "batchd API benchmark — $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs ($cpu), $(uname -sr)"
echo "command: bench/run.sh $BUILD_DIR $*"
echo
echo "| metric | sqlite sync=full | sqlite sync=normal |"
echo "|---|---|---|"
row "Job creates (total)" create_total
row "Job creates/s (16 keep-alive conns)" create_per_sec
row "create latency p50 (ms)" create_p50_ms
row "create latency p99 (ms)" create_p99_ms
row "LIST 10k Jobs, JSON, median (ms)" list_json_median_ms
row "LIST 10k Jobs, JSON size (bytes)" list_json_bytes
row "LIST 10k Jobs, Table (kubectl get), median (ms)" list_table_median_ms
row "watchers" watch_watchers
row "updates (label patches, 4 conns)" watch_updates
row "updates/s while watched" watch_updates_per_sec
row "watch events delivered/s (all watchers)" watch_events_per_sec
row "all watchers saw every event, from first write (ms)" watch_all_seen_ms
row "last event seen by all, after last write acked (ms)" watch_lag_after_last_write_ms
row "server RSS after run (MiB)" server_rss_mib
