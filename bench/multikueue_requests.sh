#!/usr/bin/env bash
# The requests a MultiKueue manager sends its workers, per workload.
#   bench/multikueue_requests.sh BUILD_DIR [JOBS] [SECONDS]
# Starts three `batchd server`s on free loopback ports (--no-local-node,
# simulated nodes): a manager and two workers, w1 with room for every job
# and w2 with none (so copies wait there the whole time). JOBS Jobs (default
# 20) of SECONDS each (default 30, batchd.io/sim-duration) are submitted to
# the manager's MultiKueue queue at once; when all are Complete on the
# manager the script prints, from each worker's apiserver_request_total,
# the requests by verb on workloads, jobs and jobsets, and GETs per workload.
# The servers are stopped on exit. Used for the before/after figures of
# docs/benchmarks.md (polling: a GET per copy every 2 s; watches: none).
set -euo pipefail
BUILD_DIR=${1:?usage: $0 BUILD_DIR [JOBS] [SECONDS]}
JOBS=${2:-20}
DURATION=${3:-30}
BATCHD="$BUILD_DIR/bin/batchd"
[[ -x "$BATCHD" ]] || { echo "multikueue_requests: $BATCHD not built" >&2; exit 2; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/batchd-mkreq.XXXXXX")
PIDS=()
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  [[ -n "${KEEP_WORK:-}" ]] || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
# start NAME [FLAGS...]: prints the port.
start() {
  local name=$1 port
  shift
  port=$(free_port)
  "$BATCHD" server --listen "127.0.0.1:$port" --allow-loopback-admin --data-dir "$WORK/$name" \
    --no-local-node "$@" >"$WORK/$name.log" 2>&1 &
  PIDS+=($!)
  local deadline=$((SECONDS + 30))
  until curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || { tail -n 20 "$WORK/$name.log" >&2; exit 1; }
    sleep 0.1
  done
  echo "$port"
}
k() { kubectl -s "http://127.0.0.1:$1" --cache-dir "$WORK/kcache" --request-timeout=30s "${@:2}"; }

cat >"$WORK/config.yaml" <<'YAML'
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
integrations:
  frameworks: ["batch/job", "jobset.x-k8s.io/jobset"]
YAML
MGR=$(start manager --config "$WORK/config.yaml")
W1=$(start w1)
W2=$(start w2)

# setup PORT CPU: namespace, simulated node, flavor, ClusterQueue, LocalQueue.
setup() {
  cat <<YAML | k "$1" apply -f - >/dev/null
apiVersion: v1
kind: Namespace
metadata: {name: mk}
---
apiVersion: v1
kind: Node
metadata:
  name: node
  annotations: {batchd.io/simulated: "true"}
  labels: {kubernetes.io/hostname: node}
status:
  capacity: {cpu: "1000", memory: 4000Gi, pods: "1000"}
  allocatable: {cpu: "1000", memory: 4000Gi, pods: "1000"}
  conditions: [{type: Ready, status: "True", reason: KubeletReady}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: fl}
spec: {nodeLabels: {kubernetes.io/hostname: node}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  ${3:-}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors: [{name: fl, resources: [{name: cpu, nominalQuota: "$2"}, {name: memory, nominalQuota: 4000Gi}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: mk}
spec: {clusterQueue: cq}
YAML
}
setup "$W1" "$JOBS"
setup "$W2" 0
k "$MGR" create namespace kueue-system >/dev/null
for w in w1 w2; do
  port=$W1; [[ $w == w2 ]] && port=$W2
  cat >"$WORK/$w.kubeconfig" <<YAML
apiVersion: v1
kind: Config
clusters: [{name: $w, cluster: {server: "http://127.0.0.1:$port"}}]
users: [{name: admin, user: {}}]
contexts: [{name: $w, context: {cluster: $w, user: admin}}]
current-context: $w
YAML
  k "$MGR" create secret generic "$w" -n kueue-system --from-file=kubeconfig="$WORK/$w.kubeconfig" >/dev/null
done
cat <<YAML | k "$MGR" apply -f - >/dev/null
apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueCluster
metadata: {name: w1}
spec: {clusterSource: {kubeConfig: {locationType: Secret, location: w1}}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueCluster
metadata: {name: w2}
spec: {clusterSource: {kubeConfig: {locationType: Secret, location: w2}}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueConfig
metadata: {name: workers}
spec: {clusters: [w1, w2]}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {name: mk}
spec:
  controllerName: kueue.x-k8s.io/multikueue
  parameters: {apiGroup: kueue.x-k8s.io, kind: MultiKueueConfig, name: workers}
YAML
setup "$MGR" "$JOBS" "admissionChecksStrategy: {admissionChecks: [{name: mk}]}"
deadline=$((SECONDS + 60))
until [[ $(k "$MGR" get clusterqueue cq -o jsonpath='{.status.conditions[?(@.type=="Active")].status}') == True ]]; do
  ((SECONDS < deadline)) || { echo "multikueue_requests: ClusterQueue not active" >&2; exit 1; }
  sleep 0.5
done

echo "machine=$(nproc) cores; load=$(cut -d' ' -f1-3 /proc/loadavg)"
echo "date=$(date -u +%Y-%m-%dT%H:%MZ) jobs=$JOBS duration=${DURATION}s"
start_t=$SECONDS
for i in $(seq "$JOBS"); do
  cat <<YAML
---
apiVersion: batch/v1
kind: Job
metadata: {name: j$i, namespace: mk, labels: {kueue.x-k8s.io/queue-name: lq}}
spec:
  template:
    metadata: {annotations: {batchd.io/sim-duration: ${DURATION}s}}
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox, resources: {requests: {cpu: "1", memory: 100Mi}}}]
YAML
done | k "$MGR" create -f - >/dev/null
deadline=$((SECONDS + DURATION + 300))
while :; do
  done_n=$(k "$MGR" get jobs -n mk -o jsonpath='{range .items[*]}{.status.succeeded}{"\n"}{end}' | grep -c '^1$' || true)
  [[ $done_n -ge $JOBS ]] && break
  ((SECONDS < deadline)) || { echo "multikueue_requests: only $done_n of $JOBS complete" >&2; exit 1; }
  sleep 1
done
echo "elapsed=$((SECONDS - start_t))s"
for w in w1 w2; do
  port=$W1; [[ $w == w2 ]] && port=$W2
  curl -fsS "http://127.0.0.1:$port/metrics" | python3 -c '
import re, sys
jobs, name = int(sys.argv[1]), sys.argv[2]
by = {}
for line in sys.stdin:
    m = re.match(r"apiserver_request_total\{verb=\"(\w+)\",resource=\"(workloads|jobs|jobsets)\",code=\"\d+\"\} (\d+)", line)
    if m:
        by[(m.group(1), m.group(2))] = by.get((m.group(1), m.group(2)), 0) + int(m.group(3))
gets = sum(v for (verb, _), v in by.items() if verb == "GET")
print(name, " ".join("%s_%s=%d" % (verb, res, v) for (verb, res), v in sorted(by.items())),
      "gets_per_workload=%.1f" % (gets / jobs))' "$JOBS" "$w"
done
