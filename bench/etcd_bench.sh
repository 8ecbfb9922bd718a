#!/usr/bin/env bash
# etcd and several servers (docs/ha.md), on this machine, in one run:
#   bench/etcd_bench.sh BUILD_DIR [KILLS=10]
# 1. Job creates/s (bench/apiserver_bench, 16 keep-alive connections): one
#    server on SQLite (sync=normal, the default; and sync=full, an fsync per
#    commit as etcd does), one on a single-member etcd and one on a
#    three-member etcd (local, different ports: each write is replicated to
#    a quorum and fsynced on it).
# 2. End-to-end jobs/s: N one-pod Jobs (simulated node, sim-duration 0s)
#    submitted and watched to Complete (bench/ha_client.py jobs), SQLite vs
#    etcd (one and three members), and on etcd submitted through replica A,
#    watched through B.
# 3. Watch latency: a create through A to its event on a watch, through A
#    itself and through replica B (bench/ha_client.py latency), on a
#    one-member and on a three-member etcd (A lists member 1 first, B member
#    2, as replicas on three machines list their own member first).
# 4. Failover: a three-member etcd and three replicas with the default
#    leader election timings (15 s / 10 s / 2 s); KILLS times, kill -9 of the
#    leader, then the time until another replica holds the Lease and until a
#    queued Job created through a survivor right after the kill is admitted
#    and its pod bound (polled every 20 ms through the survivor), with the new
#    leader's own times (lease expiry by its clock, acquired, controllers
#    started); the killed replica restarts each time.
# Env: N (jobs, default 1000), CREATES (default 10000), SECTIONS (which of
# 1 (1 + 2), 3 (2b + 3) and 4 to run; default 134), MODES (section 1's,
# default "sqlite-normal sqlite-full etcd etcd3"), MEMBERS (section 3's etcd
# sizes, default "1 3").
set -euo pipefail
BUILD_DIR=${1:?usage: $0 BUILD_DIR [KILLS]}
KILLS=${2:-10}
N=${N:-1000}
CREATES=${CREATES:-10000}
SECTIONS=${SECTIONS:-134}
MODES=${MODES:-sqlite-normal sqlite-full etcd etcd3}
MEMBERS=${MEMBERS:-1 3}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BATCHD="$BUILD_DIR/bin/batchd"
BENCH="$BUILD_DIR/bin/apiserver_bench"
for b in "$BATCHD" "$BENCH"; do
  [[ -x "$b" ]] || { echo "etcd_bench: $b not built" >&2; exit 2; }
done
command -v etcd >/dev/null || { echo "etcd_bench: no etcd binary (install etcd-server)" >&2; exit 2; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/batchd-etcd-bench.XXXXXX")
PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  [[ -n "${KEEP_WORK:-}" ]] || rm -rf "$WORK"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
OUT="$WORK/results.txt"
: >"$OUT"
res() { echo "$1=$2" | tee -a "$OUT" >&2; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

# etcd_cluster NAME MEMBERS -> ENDPOINTS, EPIDS (member pids)
etcd_cluster() {
  local name=$1 n=$2 i cluster="" m
  local -a cp pp
  ENDPOINTS="" EPIDS=()
  for ((i = 1; i <= n; i++)); do
    cp[i]=$(free_port); pp[i]=$(free_port)
    cluster+="${cluster:+,}$name$i=http://127.0.0.1:${pp[i]}"
    ENDPOINTS+="${ENDPOINTS:+,}http://127.0.0.1:${cp[i]}"
  done
  for ((i = 1; i <= n; i++)); do
    m="$name$i"
    etcd --name "$m" --data-dir "$WORK/$m.etcd" \
      --listen-client-urls "http://127.0.0.1:${cp[i]}" --advertise-client-urls "http://127.0.0.1:${cp[i]}" \
      --listen-peer-urls "http://127.0.0.1:${pp[i]}" --initial-advertise-peer-urls "http://127.0.0.1:${pp[i]}" \
      --initial-cluster "$cluster" --initial-cluster-token "$name-$$" --initial-cluster-state new \
      --logger zap --log-outputs "$WORK/$m.log" >/dev/null 2>&1 &
    EPIDS+=($!)
    PIDS+=($!)
  done
  local deadline=$((SECONDS + 30))
  until ETCDCTL_API=3 etcdctl --endpoints "$ENDPOINTS" endpoint health >/dev/null 2>&1; do
    ((SECONDS < deadline)) || { echo "etcd_bench: etcd not healthy" >&2; exit 1; }
    sleep 0.2
  done
}
# server NAME PORT ARGS... -> SPID
server() {
  local name=$1 port=$2; shift 2
  mkdir -p "$WORK/$name"
  "$BATCHD" server --listen "127.0.0.1:$port" --allow-loopback-admin --data-dir "$WORK/$name" \
    --no-local-node "$@" >>"$WORK/$name.log" 2>&1 &
  SPID=$!
  PIDS+=("$SPID")
  local deadline=$((SECONDS + 40))
  until [[ $(curl -s -m 2 "http://127.0.0.1:$port/readyz" 2>/dev/null) == ok ]]; do
    kill -0 "$SPID" 2>/dev/null || { tail -n 5 "$WORK/$name.log" >&2; exit 1; }
    ((SECONDS < deadline)) || { echo "etcd_bench: $name not ready" >&2; exit 1; }
    sleep 0.1
  done
}
stop() { kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }
val() { grep -E "^$2=" "$1" | head -n 1 | cut -d= -f2; }

res load_before "$(load)"
# --- 1 + 2: SQLite vs etcd, one fresh server (and etcd) per measurement ----
if [[ $SECTIONS == *1* ]]; then
  start_mode() {  # start_mode MODE PORT
    case $1 in
      sqlite-normal) server "$1-$2" "$2" --store-sync normal ;;
      sqlite-full) server "$1-$2" "$2" --store-sync full ;;
      etcd) etcd_cluster "e$RANDOM" 1; server "$1-$2" "$2" --store etcd --etcd-servers "$ENDPOINTS" ;;
      etcd3) etcd_cluster "t$RANDOM" 3; server "$1-$2" "$2" --store etcd --etcd-servers "$ENDPOINTS" ;;
    esac
  }
  stop_mode() {
    local p
    stop "$SPID"
    for p in "${EPIDS[@]:-}"; do [[ -n $p ]] && stop "$p"; done
    EPIDS=()
  }
  for mode in $MODES; do
    port=$(free_port)
    start_mode "$mode" "$port"
    timeout 600 "$BENCH" --port "$port" --creates "$CREATES" --conns 16 --list-runs 1 --watchers 1 --updates 100 \
      >"$WORK/$mode.creates" 2>"$WORK/$mode.creates.err" || { cat "$WORK/$mode.creates.err" >&2; exit 1; }
    res "$mode.creates_per_sec" "$(val "$WORK/$mode.creates" create_per_sec)"
    res "$mode.create_p99_ms" "$(val "$WORK/$mode.creates" create_p99_ms)"
    stop_mode
    [[ $mode == sqlite-full ]] && continue
    port=$(free_port)
    start_mode "$mode" "$port"
    # The etcd server leads once it took the Lease (at its first try).
    sleep 3
    timeout 900 python3 "$HERE/ha_client.py" jobs --port "$port" --n "$N" >"$WORK/$mode.jobs"
    res "$mode.e2e_jobs_per_sec" "$(val "$WORK/$mode.jobs" jobs_per_sec)"
    res "$mode.e2e_all_complete" "$(val "$WORK/$mode.jobs" all_complete)"
    stop_mode
  done
fi

# --- 2b + 3: two replicas on one etcd (one member, then three) --------------
if [[ $SECTIONS == *3* ]]; then
  for members in $MEMBERS; do
    sfx=""; [[ $members == 1 ]] || sfx="_etcd$members"
    etcd_cluster "r$RANDOM" "$members"
    # B lists the members from the second on: its requests and watch go to
    # another member than A's.
    IFS=, read -r -a eps <<<"$ENDPOINTS"
    EB=$(IFS=,; echo "${eps[*]:1}${eps[1]:+,}${eps[0]}")
    PA=$(free_port); PB=$(free_port)
    server "ra$members" "$PA" --store etcd --etcd-servers "$ENDPOINTS"; A=$SPID
    server "rb$members" "$PB" --store etcd --etcd-servers "$EB"; B=$SPID
    sleep 3
    timeout 900 python3 "$HERE/ha_client.py" jobs --port "$PA" --watch-port "$PB" --n "$N" >"$WORK/ab$sfx.jobs"
    res "etcd-A-to-B$sfx.e2e_jobs_per_sec" "$(val "$WORK/ab$sfx.jobs" jobs_per_sec)"
    for w in same:"$PA" cross:"$PB"; do
      timeout 300 python3 "$HERE/ha_client.py" latency --port "$PA" --watch-port "${w#*:}" --n 300 >"$WORK/lat-${w%%:*}$sfx"
      res "watch_latency_${w%%:*}$sfx.p50_ms" "$(val "$WORK/lat-${w%%:*}$sfx" latency_p50_ms)"
      res "watch_latency_${w%%:*}$sfx.p99_ms" "$(val "$WORK/lat-${w%%:*}$sfx" latency_p99_ms)"
    done
    stop "$A"; stop "$B"
    for p in "${EPIDS[@]}"; do stop "$p"; done
  done
  port=$(free_port)
  server sq "$port" --store-sync normal
  timeout 300 python3 "$HERE/ha_client.py" latency --port "$port" --watch-port "$port" --n 300 >"$WORK/lat-sqlite"
  res "watch_latency_sqlite_same.p50_ms" "$(val "$WORK/lat-sqlite" latency_p50_ms)"
  res "watch_latency_sqlite_same.p99_ms" "$(val "$WORK/lat-sqlite" latency_p99_ms)"
  stop "$SPID"
fi

# --- 4: failover -------------------------------------------------------------
# Each kill: wait a random 0-2.5 s (the leader renews every 2 s plus its
# write, so kills fall at any point of the renewal period, as a crash does),
# kill -9 the leader, create a queued Job through a survivor at once and
# poll it (bench/ha_client.py failover): the new Lease holder, the Job's
# Workload admitted and its pod bound; the new leader's log gives when the
# old lease expired by its clock, when it acquired, when its controllers ran.
if [[ $SECTIONS == *4* ]]; then
  etcd_cluster "f$RANDOM" 3
  declare -A FP FPID
  for r in a b c; do FP[$r]=$(free_port); server "f$r" "${FP[$r]}" --store etcd --etcd-servers "$ENDPOINTS"; FPID[$r]=$SPID; done
  holder() {  # holder PORT -> holderIdentity
    curl -s -m 2 "http://127.0.0.1:$1/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/batchd-controller-manager" |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["spec"].get("holderIdentity",""))' 2>/dev/null
  }
  who() {  # who IDENTITY -> replica
    local r
    for r in a b c; do grep -q "leader election: $1 now leads" "$WORK/f$r.log" && { echo "$r"; return; }; done
  }
  python3 "$HERE/ha_client.py" failover-setup --port "${FP[a]}"
  keys="lease_s admitted_s bound_s expired_s acquired_s started_s"
  declare -A COL
  for ((k = 1; k <= KILLS; k++)); do
    id=""
    until [[ -n $id ]] && L=$(who "$id") && [[ -n $L ]]; do id=$(holder "${FP[a]}" || true); [[ -n $id ]] || id=$(holder "${FP[b]}" || true); sleep 0.2; done
    S=a; [[ $L == a ]] && S=b
    sleep "$(python3 -c 'import random; print(f"{random.uniform(0, 2.5):.3f}")')"
    t0=$(date +%s.%N)
    kill -9 "${FPID[$L]}"; wait "${FPID[$L]}" 2>/dev/null || true
    timeout 120 python3 "$HERE/ha_client.py" failover --port "${FP[$S]}" --old-holder "$id" --t0 "$t0" \
      --job "fo-$k-$RANDOM" --logs "$WORK/fa.log,$WORK/fb.log,$WORK/fc.log" >"$WORK/fo-$k"
    line="kill $k: leader $L;"
    for key in $keys; do v=$(val "$WORK/fo-$k" "$key"); COL[$key]+="${COL[$key]:+ }$v"; line+=" $key=$v"; done
    echo "$line" >&2
    server "f$L" "${FP[$L]}" --store etcd --etcd-servers "$ENDPOINTS"; FPID[$L]=$SPID
  done
  median() { tr ' ' '\n' | grep -v '^$' | sort -n | python3 -c 'import sys,statistics; v=[float(x) for x in sys.stdin]; print(f"{statistics.median(v):.2f}" if v else "")'; }
  for key in $keys; do
    res "failover_${key}_each" "${COL[$key]}"
    res "failover_${key}_median" "$(median <<<"${COL[$key]}")"
  done
fi

res load_after "$(load)"
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
echo "etcd bench — $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs ($cpu), etcd $(etcd --version | head -n1 | awk '{print $3}')"
cat "$OUT"
