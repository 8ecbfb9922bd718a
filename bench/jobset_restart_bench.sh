#!/usr/bin/env bash
# In-place restart vs recreate (docs/benchmarks.md, "JobSet restarts"):
# bench/jobset_restart_bench.sh BUILD_DIR [PODS] [REPS]
#
# Starts `batchd server` (own port and data dir, the local node runs the
# pods as host processes) and, for each restart strategy (InPlaceRestart,
# Recreate), a JobSet of PODS pods (default 8: 2 Jobs x PODS/2) whose
# containers log the time they start and, when a trigger file appears, the
# time they exit (code 3). REPS times (default 5) one container is made to
# fail; the figure is the time from that container's exit to the last pod's
# container of the new attempt starting (from the containers' own clock
# readings, so kubectl is not in the measurement). Recreate: backoffLimit 0
# fails the Job, the JobSet restarts by deleting and recreating its Jobs and
# pods. InPlaceRestart: the same pods re-run their containers on their node.
# Prints one markdown table row per strategy (median, min, max in seconds).
set -euo pipefail
BUILD=$(cd "${1:?usage: $0 BUILD_DIR [PODS] [REPS]}" && pwd)
PODS=${2:-8}
REPS=${3:-5}
((PODS % 2 == 0)) || { echo "PODS must be even" >&2; exit 2; }
PER_JOB=$((PODS / 2))
WORK=$(mktemp -d /tmp/jobset-restart-bench.XXXXXX)
chmod 711 "$WORK"  # pods run as the unprivileged pod user: their dirs must be reachable
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
SERVER="http://127.0.0.1:$PORT"
export KUBECONFIG=/dev/null
k() { kubectl -s "$SERVER" --request-timeout=30s "$@"; }
(cd "$WORK" && exec "$BUILD/bin/batchd" server --listen "127.0.0.1:$PORT" --allow-loopback-admin --data-dir "$WORK/data" \
  >"$WORK/server.log" 2>&1) &
SERVER_PID=$!
cleanup() {
  kill "$SERVER_PID" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$SERVER_PID" 2>/dev/null || true
  for p in $(pgrep -f -- "$WORK/" || true); do kill -9 "$p" 2>/dev/null || true; done
  [[ -n ${KEEP:-} ]] && echo "kept $WORK" >&2 || rm -rf "$WORK"
}
trap cleanup EXIT
for _ in $(seq 300); do [[ $(curl -s -m 1 "$SERVER/healthz" || true) == ok ]] && break; sleep 0.1; done
until k get nodes 2>/dev/null | grep -q ' Ready'; do sleep 0.2; done

# hosts: the pods' host names (Indexed Jobs: <jobset>-w-<job>-<index>).
hosts() { for j in 0 1; do for i in $(seq 0 $((PER_JOB - 1))); do echo "$1-w-$j-$i"; done; done; }
lines() { [[ -f $1 ]] && wc -l <"$1" | tr -d ' ' || echo 0; }
# all_started NAME DIR N: every pod's start log has N lines.
all_started() {
  local h
  for h in $(hosts "$1"); do [[ $(lines "$2/start-$h") -ge $3 ]] || return 1; done
}

run() {  # run STRATEGY NAME
  local strategy=$1 name=$2 dir="$WORK/$2" h
  mkdir -p "$dir"
  chmod 777 "$dir"  # the containers (the unprivileged pod user) write here and remove the trigger files
  cat <<YAML | k create -f - >/dev/null
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: $name}
spec:
  failurePolicy: {maxRestarts: 1000, restartStrategy: $strategy}
  network: {enableDNSHostnames: false}
  replicatedJobs:
  - name: w
    replicas: 2
    template:
      spec:
        parallelism: $PER_JOB
        completions: $PER_JOB
        backoffLimit: 0
        template:
          spec:
            restartPolicy: Never
            terminationGracePeriodSeconds: 1
            containers:
            - name: main
              image: busybox
              command:
              - sh
              - -c
              - |
                date +%s.%N >> "$dir/start-\$HOSTNAME"
                while sleep 0.05; do
                  if [ -f "$dir/fail-\$HOSTNAME" ]; then
                    rm -f "$dir/fail-\$HOSTNAME"; date +%s.%N >> "$dir/exit-\$HOSTNAME"; exit 3
                  fi
                done
YAML
  local deadline=$((SECONDS + 120))
  until all_started "$name" "$dir" 1; do
    ((SECONDS < deadline)) || { echo "$name: pods did not start" >&2; exit 1; }
    sleep 0.1
  done
  sleep 1
  local times=() victim exit_at last n
  for r in $(seq "$REPS"); do
    victim=$(hosts "$name" | sed -n "$(((r % PODS) + 1))p")
    touch "$dir/fail-$victim"
    deadline=$((SECONDS + 120))
    until all_started "$name" "$dir" $((r + 1)); do
      ((SECONDS < deadline)) || { echo "$name: restart $r did not finish" >&2; exit 1; }
      sleep 0.05
    done
    exit_at=$(tail -1 "$dir/exit-$victim")
    last=0
    for h in $(hosts "$name"); do
      n=$(sed -n "$((r + 1))p" "$dir/start-$h")
      last=$(awk -v a="$last" -v b="$n" 'BEGIN{print (b > a) ? b : a}')
    done
    times+=("$(awk -v a="$last" -v b="$exit_at" 'BEGIN{printf "%.3f", a - b}')")
    sleep 1  # Let the attempt settle (status written) before the next failure.
  done
  printf '%s\n' "${times[@]}" | sort -g | awk -v s="$strategy" -v p="$PODS" '
    {a[NR]=$1} END{printf "| %s | %d | %d | %.3f | %.3f | %.3f |\n", s, p, NR, a[int((NR+1)/2)], a[1], a[NR]}'
  k delete jobset "$name" --wait=false >/dev/null
}

echo "| strategy | pods | restarts | median s | min s | max s |"
echo "|---|---:|---:|---:|---:|---:|"
run InPlaceRestart inplace
run Recreate recreate
