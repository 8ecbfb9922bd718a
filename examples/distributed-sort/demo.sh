#!/usr/bin/env bash
# The distributed sort, end to end (`make demo`, `make demo N=10000000`):
# uses the batchd server at $SERVER, or one answering on 127.0.0.1:$PORT
# (default 8080, `make run`'s), or else starts one on a free port with its
# data under /tmp; submits jobset.yaml for N numbers (default 100 million)
# on WORKERS pods per phase (default: this machine's CPUs); waits; prints
# each phase's time, the verifier's verdict and the throughput; and stops
# what it started (the server, the sort data unless KEEP=1).
#
# Environment: N, WORKERS, SEED (default 1), SERVER, PORT, BIN_DIR (default
# build/bin), DATA (the shared directory; default a new /tmp/dsort-data.*),
# NODE (the node to run on; default the server's first node that is not
# simulated), TIMEOUT (seconds, default 3600), KEEP=1.
# Exit status: 0 when the output is verified, 1 otherwise.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BIN_DIR=$(cd "${BIN_DIR:-$REPO/build/bin}" && pwd)
N=${N:-100000000}
WORKERS=${WORKERS:-$(nproc)}
SEED=${SEED:-1}
TIMEOUT=${TIMEOUT:-3600}
NS=distributed-sort
NAME="dsort-$(date +%H%M%S)"

for b in batchd sort-gen sort-map sort-reduce sort-verify; do
  [[ -x "$BIN_DIR/$b" ]] || { echo "demo: $BIN_DIR/$b missing: run 'make build' first" >&2; exit 2; }
done
command -v kubectl >/dev/null || { echo "demo: kubectl not found in PATH" >&2; exit 2; }
[[ $N =~ ^[0-9]+$ && $WORKERS =~ ^[1-9][0-9]*$ ]] || { echo "demo: N and WORKERS must be numbers" >&2; exit 2; }

STARTED_PID="" WORK="" MADE_DATA=""
cleanup() {
  local rc=$?
  if [[ -n $STARTED_PID ]] && kill -0 "$STARTED_PID" 2>/dev/null; then
    echo "demo: stopping the server it started (pid $STARTED_PID)"
    kill "$STARTED_PID" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$STARTED_PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$STARTED_PID" 2>/dev/null || true
  fi
  # Pod processes still running (an interrupted demo) are under the data dir.
  if [[ -n $MADE_DATA ]]; then
    for p in $(pgrep -f -- "--dir $DATA" || true); do kill -9 "$p" 2>/dev/null || true; done
    if [[ ${KEEP:-0} == 1 ]]; then echo "demo: sort data kept in $DATA"; else rm -rf "$DATA"; fi
  fi
  [[ -n $WORK ]] && rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# sub A B: A - B for decimal seconds.
sub() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", a - b}'; }
healthy() { [[ $(curl -s -m 2 "$1/healthz" 2>/dev/null) == ok ]]; }

# --- a server --------------------------------------------------------------
if [[ -z ${SERVER:-} ]]; then
  SERVER="http://127.0.0.1:${PORT:-8080}"
  if ! healthy "$SERVER"; then
    WORK=$(mktemp -d /tmp/dsort-demo.XXXXXX)
    chmod 711 "$WORK"  # pods run as the unprivileged pod user
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    SERVER="http://127.0.0.1:$port"
    echo "demo: starting batchd server on $SERVER (data in $WORK)"
    (cd "$WORK" && exec "$BIN_DIR/batchd" server --listen "127.0.0.1:$port" --allow-loopback-admin --data-dir "$WORK/batchd" \
      >"$WORK/server.log" 2>&1) &
    STARTED_PID=$!
    for _ in $(seq 300); do healthy "$SERVER" && break; sleep 0.1; done
    healthy "$SERVER" || { echo "demo: the server did not start; see $WORK/server.log" >&2; tail -20 "$WORK/server.log" >&2; exit 1; }
  fi
fi
echo "demo: using $SERVER"
export KUBECONFIG=/dev/null
k() { kubectl -s "$SERVER" --request-timeout=30s "$@"; }

if [[ -z ${NODE:-} ]]; then
  for _ in $(seq 100); do
    NODE=$(k get nodes -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.annotations.batchd\.io/simulated}{"\n"}{end}' 2>/dev/null |
      awk 'NF == 1 {print $1; exit}' || true)
    [[ -n $NODE ]] && break
    sleep 0.1
  done
  [[ -n $NODE ]] || { echo "demo: the server has no node that runs real processes" >&2; exit 1; }
fi
if [[ -z ${DATA:-} ]]; then
  DATA=$(mktemp -d /tmp/dsort-data.XXXXXX)
  # The phases run as the node's unprivileged pod user (docs/security.md
  # "Pods"), not as whoever runs this script: they must be able to write here.
  chmod 1777 "$DATA"
fi
MADE_DATA=1

# --- submit ----------------------------------------------------------------
k get namespace "$NS" >/dev/null 2>&1 ||
  printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n' "$NS" | k apply -f - >/dev/null
gb=$(awk -v n="$N" 'BEGIN{printf "%.2f", n*8/1e9}')
echo "demo: sorting $N 64-bit numbers ($gb GB) with $WORKERS pods per phase on node $NODE"
# The watch starts first, so no phase can end before it sees it.
coproc WATCH {
  exec timeout "$TIMEOUT" kubectl -s "$SERVER" get jobsets -n "$NS" --field-selector "metadata.name=$NAME" --watch \
    -o go-template='{{.status.terminalState}}|{{range .status.replicatedJobsStatus}}{{.name}}={{.succeeded}} {{end}}{{"\n"}}'
} 2>/dev/null
sleep 1  # kubectl starts and opens the watch.
sed -e "s|@NAME@|$NAME|g; s|@N@|$N|g; s|@WORKERS@|$WORKERS|g; s|@SEED@|$SEED|g" \
    -e "s|@DATA@|$DATA|g; s|@BIN@|$BIN_DIR|g; s|@NODE@|$NODE|g" "$HERE/jobset.yaml" |
  k create -n "$NS" -f - >/dev/null
t0=$(date +%s.%N)

# --- wait, noting when each phase completes (from a watch) ---------------
# Each replicated job has one child Job: a phase is done when its Job is.
declare -A done_at=()
phases=(generate map reduce verify)
state=""
while IFS= read -r out <&"${WATCH[0]}"; do
  now=$(date +%s.%N)
  state=${out%%|*}
  [[ -n ${DEBUG:-} ]] && echo "$out"
  for p in "${phases[@]}"; do
    if [[ -z ${done_at[$p]:-} && " ${out#*|}" == *" $p=1 "* ]]; then
      done_at[$p]=$now
      printf 'demo: %-8s done at %6.2f s\n' "$p" "$(sub "$now" "$t0")"
    fi
  done
  [[ -n $state && $state != "<no value>" ]] && break
done
kill "$WATCH_PID" 2>/dev/null || true
t1=$(date +%s.%N)

for p in map reduce; do
  k logs -n "$NS" -l "jobset.sigs.k8s.io/jobset-name=$NAME,jobset.sigs.k8s.io/replicatedjob-name=$p" \
    --tail=1 2>/dev/null | sed 's/^/  /' || true
done
echo "--- verifier ---"
k logs -n "$NS" "job/$NAME-verify-0" 2>/dev/null || echo "(no verifier log)"
echo "----------------"
if [[ $state != Completed ]]; then
  echo "demo: JobSet $NAME ended as '${state:-still running after ${TIMEOUT}s}'"
  k get jobset,jobs -n "$NS" -l "jobset.sigs.k8s.io/jobset-name=$NAME" 2>/dev/null || true
  k get jobset -n "$NS" "$NAME" -o jsonpath='{range .status.conditions[*]}{.type}={.status} {.reason}: {.message}{"\n"}{end}' 2>/dev/null || true
  exit 1
fi
total=$(sub "$t1" "$t0")
sort_s=$(sub "${done_at[reduce]}" "${done_at[generate]}")
awk -v n="$N" -v t="$total" -v s="$sort_s" 'BEGIN{
  printf "demo: JobSet completed in %.2f s (submit to verified)\n", t;
  printf "demo: map + reduce took %.2f s: %.3f GB/s (%.1f million numbers/s)\n", s, n*8/1e9/s, n/1e6/s }'
