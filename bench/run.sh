#!/usr/bin/env bash
# API benchmarks against a real server: ./bench/run.sh BUILD_DIR
# Starts BUILD_DIR/bin/batchd on a free loopback port with a fresh SQLite
# data dir, once with --store-sync full and once with normal, runs
# BUILD_DIR/bin/apiserver_bench against each and prints a markdown table.
# BENCH_MODES picks the runs (default "full normal"); a mode ending in "+tls"
# serves HTTPS with the generated CA (--serve-https always) and the client
# verifies it: BENCH_MODES="normal normal+tls" compares TLS with plain.
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

run_mode() {  # run_mode SYNC[+tls] -> $WORK/MODE.out
  local mode=$1 sync=${1%+tls} tls=() client_tls=() scheme=http curl_tls=()
  shift
  if [[ $mode == *+tls ]]; then
    tls=(--serve-https always); scheme=https
    client_tls=(--tls-ca "$WORK/data-$mode/pki/ca.crt"); curl_tls=(--cacert "$WORK/data-$mode/pki/ca.crt")
  fi
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
  mkdir -p "$WORK/data-$mode"
  "$BATCHD" server --listen "127.0.0.1:$port" --allow-loopback-admin --data-dir "$WORK/data-$mode" --no-local-node \
    --store-sync "$sync" "${tls[@]}" >"$WORK/server-$mode.log" 2>&1 &
  PID=$!
  local deadline=$((SECONDS + 30))
  until [[ $(curl -s -m 2 "${curl_tls[@]}" "$scheme://127.0.0.1:$port/healthz" 2>/dev/null) == ok ]]; do
    kill -0 "$PID" 2>/dev/null || { cat "$WORK/server-$mode.log" >&2; exit 1; }
    ((SECONDS < deadline)) || { echo "bench: server not healthy" >&2; exit 1; }
    sleep 0.1
  done
  echo "bench: $mode on port $port ..." >&2
  timeout 600 "$BENCH" --port "$port" "${client_tls[@]}" "$@" >"$WORK/$mode.out" || {
    echo "bench: apiserver_bench failed ($mode)" >&2; tail -n 5 "$WORK/server-$mode.log" >&2; exit 1; }
  # Resident memory of the server after the run.
  awk '/VmRSS/ {print "server_rss_mib=" int($2/1024)}' "/proc/$PID/status" >>"$WORK/$mode.out" || true
  kill "$PID"; wait "$PID" 2>/dev/null || true; PID=""
}

read -r -a MODES <<<"${BENCH_MODES:-full normal}"
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
printf '| metric |'; for m in "${MODES[@]}"; do printf ' sqlite sync=%s |' "$m"; done; printf '\n'
printf '|---|'; for m in "${MODES[@]}"; do printf -- '---|'; done; printf '\n'
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
