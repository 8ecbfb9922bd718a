#!/usr/bin/env bash
# System calls per pod start: the shims' and containers' side, and the
# in-server node agent's thread.
#   bench/pod_syscalls.sh BUILD_DIR [N=50] [MODE=c|ff] [OUT_DIR]
# Starts BUILD_DIR/bin/batchd server (local node agent on) with a fresh data
# dir on a free loopback port, runs two one-pod Jobs so that the shim
# launcher is up, then attaches strace to the launcher (-f: every shim it
# forks and every container those start) and to the first node-agent thread
# (the agent's workers share that name: divide its counts by its `mkdir`s,
# one per pod it started) while N one-pod Jobs (`true`) run
# (bench/e2e_jobs_client.py). MODE c: counts
# (OUT_DIR/pods.txt, OUT_DIR/agent.txt; divide by N); ff: one full trace per
# process (OUT_DIR/pods.PID, OUT_DIR/agent). Needs strace.
set -euo pipefail
BUILD=${1:?usage: $0 BUILD_DIR [N] [c|ff] [OUT_DIR]}
N=${2:-50}
MODE=${3:-c}
OUT=${4:-$(mktemp -d "${TMPDIR:-/tmp}/batchd-syscalls.XXXXXX")}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
command -v strace >/dev/null || { echo "pod_syscalls: strace not installed" >&2; exit 2; }
mkdir -p "$OUT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/batchd-syscalls-run.XXXXXX")
chmod 711 "$WORK"  # pods run as the unprivileged pod user
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
"$BUILD/bin/batchd" server --listen "127.0.0.1:$PORT" --allow-loopback-admin \
  --data-dir "$WORK/data" >"$WORK/server.log" 2>&1 &
PID=$!
S1="" S2=""
cleanup() {
  [[ -n "$S1$S2" ]] && kill -INT $S1 $S2 2>/dev/null || true
  kill "$PID" 2>/dev/null || true
  wait "$PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
for _ in $(seq 150); do [[ $(curl -s -m 2 "http://127.0.0.1:$PORT/healthz") == ok ]] && break; sleep 0.2; done
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$PORT/api/v1/namespaces/default" && break; sleep 0.1; done
for _ in $(seq 100); do [[ $(curl -s "http://127.0.0.1:$PORT/api/v1/nodes" | grep -c '"name"') -gt 0 ]] && break; sleep 0.1; done
timeout 120 python3 "$HERE/e2e_jobs_client.py" jobs --port "$PORT" --n 2 --conns 1 >/dev/null
sleep 1.2  # a second run_id (the client names Jobs by the second)
LAUNCHER=""
for p in /proc/[0-9]*; do
  [[ $(awk '{print $4}' "$p/stat" 2>/dev/null) == "$PID" ]] || continue
  grep -q -- '--launcher' "$p/cmdline" 2>/dev/null && LAUNCHER=$(basename "$p") && break
done
AGENT=""
for t in /proc/$PID/task/*; do
  [[ $(cat "$t/comm" 2>/dev/null) == node-agent ]] && AGENT=$(basename "$t") && break
done
[[ -n "$LAUNCHER" && -n "$AGENT" ]] || { echo "pod_syscalls: no launcher or node-agent thread" >&2; exit 1; }
if [[ $MODE == c ]]; then
  strace -f -c -S calls -o "$OUT/pods.txt" -p "$LAUNCHER" & S1=$!
  strace -c -S calls -o "$OUT/agent.txt" -p "$AGENT" & S2=$!
else
  strace -f -ff -tt -o "$OUT/pods" -p "$LAUNCHER" & S1=$!
  strace -tt -o "$OUT/agent" -p "$AGENT" & S2=$!
fi
sleep 1
timeout 300 python3 "$HERE/e2e_jobs_client.py" jobs --port "$PORT" --n "$N" --conns 2 >"$OUT/client.out"
sleep 1
kill -INT $S1 $S2 2>/dev/null || true
wait $S1 $S2 2>/dev/null || true
S1="" S2=""
if [[ $MODE == c ]]; then
  echo "system calls per pod (N=$N), shims and containers:"
  awk -v n="$N" '$NF == "total" { printf "  total %.1f\n", $(NF-2) / n }' "$OUT/pods.txt" ||
    true
fi
echo "reports: $OUT"
