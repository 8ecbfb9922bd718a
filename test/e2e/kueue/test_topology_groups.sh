# e2e-parallel
# Topology annotations Kueue has and batchd now honours: multi-layer slices
# (podset-slice-required-topology-constraints) place each slice of each
# layer in one domain; a pod set group (podset-group-name: a leader pod and
# its workers, here a plain pod group of two roles) shares one rack; bad
# annotations are refused with their field paths.
source "$(dirname "$0")/lib.sh"
ensure_ns
RACK=topology.batchd.io/rack
HOST=kubernetes.io/hostname

tas_node() {  # tas_node NAME RACK: a simulated 4-cpu node of this test's pool.
  cat <<JSON | k apply -f - >/dev/null
{"apiVersion": "v1", "kind": "Node",
 "metadata": {"name": "$1", "annotations": {"batchd.io/simulated": "true"},
              "labels": {"$HOST": "$1", "$RACK": "$2", "e2e-pool": "$NS"}},
 "spec": {"taints": [{"key": "e2e-pool", "value": "$NS", "effect": "NoSchedule"}]},
 "status": {"capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
            "allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}}
JSON
}
for r in 0 1; do
  for h in 0 1 2 3; do tas_node "$NS-r$r-h$h" "$NS-r$r"; done
done
cat <<YAML | k apply -f - >/dev/null
apiVersion: $KQ
kind: Topology
metadata: {name: $NS-topo}
spec:
  levels:
  - nodeLabel: $RACK
  - nodeLabel: $HOST
---
apiVersion: $KQ
kind: ResourceFlavor
metadata: {name: $NS-tas}
spec:
  nodeLabels: {e2e-pool: $NS}
  topologyName: $NS-topo
  tolerations: [{key: e2e-pool, operator: Equal, value: $NS, effect: NoSchedule}]
YAML
cluster_queue "$NS" "$NS-tas" 32 128Gi
local_queue "$NS" lq "$NS"

# sliced_job NAME CONSTRAINTS: 8 Indexed 1-cpu pods with the multi-layer annotation.
sliced_job() {
  cat <<YAML | k create -f - 2>&1
apiVersion: batch/v1
kind: Job
metadata: {name: $1, namespace: $NS, labels: {kueue.x-k8s.io/queue-name: lq}}
spec:
  parallelism: 8
  completions: 8
  completionMode: Indexed
  template:
    metadata:
      annotations:
        batchd.io/sim-duration: 1h
        kueue.x-k8s.io/podset-slice-required-topology-constraints: '$2'
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox, resources: {requests: {cpu: "1", memory: 100Mi}}}]
YAML
}

# Bad input first: not a JSON array of layers, and layers that do not divide.
out=$(sliced_job bad-json 'rack=4' || true)
expect_contains "$out" "spec.template.metadata.annotations[kueue.x-k8s.io/podset-slice-required-topology-constraints]" \
  "a bad constraints annotation is refused with its path"
out=$(sliced_job bad-sizes "[{\"topology\":\"$RACK\",\"size\":4},{\"topology\":\"$HOST\",\"size\":3}]" || true)
expect_contains "$out" "podset-slice-required-topology-constraints][1].size: Invalid value: 3: must evenly divide the parent layer size 4" \
  "an inner layer must divide the outer one"

# 8 pods in slices of 4 per rack, each made of slices of 2 per host.
sliced_job sliced "[{\"topology\":\"$RACK\",\"size\":4},{\"topology\":\"$HOST\",\"size\":2}]" >/dev/null
poll 30 wl_cond_is sliced Admitted True || fail "the sliced job was not admitted"
layers=$(wl_field sliced '{.spec.podSets[0].topologyRequest.podsetSliceRequiredTopologyConstraints}')
expect_contains "$layers" "\"size\":2" "the Workload carries both layers"
# by_index JOB: "index node" per bound pod.
by_index() {
  k get pods -n "$NS" -l "job-name=$1" -o jsonpath='{range .items[*]}{.metadata.labels.batch\.kubernetes\.io/job-completion-index} {.spec.nodeName}{"\n"}{end}' |
    grep -v ' $' | sort -n
}
all_bound() { [[ $(by_index "$1" | grep -c .) == "$2" ]]; }
poll 60 all_bound sliced 8 || fail "sliced job's pods not all bound: $(by_index sliced)"
by_index sliced | python3 -c '
import sys
node = {int(i): n for i, n in (l.split() for l in sys.stdin if l.strip())}
rack = lambda n: n.rsplit("-h", 1)[0]
for k in range(0, 8, 2):
    assert node[k] == node[k + 1], f"pods {k},{k+1} split over {node[k]} and {node[k+1]}"
for k in range(0, 8, 4):
    assert len({rack(node[k + j]) for j in range(4)}) == 1, f"slice at {k} spans racks"
' || fail "slices not kept together: $(by_index sliced | tr '\n' ' ')"
k delete job -n "$NS" sliced --wait=false >/dev/null
poll 60 no_pods sliced || fail "sliced job's pods not gone"

# Bad input on a pod: a group name without a required or preferred level.
out=$(cat <<YAML | k create -f - 2>&1 || true
apiVersion: v1
kind: Pod
metadata:
  name: ungrouped
  namespace: $NS
  labels: {kueue.x-k8s.io/queue-name: lq}
  annotations: {kueue.x-k8s.io/podset-group-name: lws}
spec:
  containers: [{name: main, image: busybox}]
YAML
)
expect_contains "$out" "metadata.annotations[kueue.x-k8s.io/podset-group-name]: Forbidden" \
  "podset-group-name needs a level"

# A leader (2 cpu) and 3 workers (1 cpu): one pod group, two roles, one
# podset group. Rack r0 keeps 4 free cpus (one host): the leader alone would
# take them (the tightest fit) and push the workers to r1; as a group, all
# five cpus go to r1 together.
for h in 0 1 2; do
  cat <<YAML | k create -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: blocker-$h, namespace: $NS, annotations: {batchd.io/sim-duration: 1h}}
spec:
  nodeSelector: {$HOST: $NS-r0-h$h}
  tolerations: [{key: e2e-pool, operator: Equal, value: $NS, effect: NoSchedule}]
  containers: [{name: main, image: busybox, resources: {requests: {cpu: "4"}}}]
YAML
done
bound() { [[ -n $(k get pod -n "$NS" "$1" -o jsonpath='{.spec.nodeName}') ]]; }
for h in 0 1 2; do poll 30 bound "blocker-$h" || fail "blocker-$h not bound"; done
member() {  # member NAME CPU
  cat <<YAML | k create -f - >/dev/null
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: $NS
  labels: {kueue.x-k8s.io/queue-name: lq, kueue.x-k8s.io/pod-group-name: lws}
  annotations:
    batchd.io/sim-duration: 1h
    kueue.x-k8s.io/pod-group-total-count: "4"
    kueue.x-k8s.io/podset-required-topology: $RACK
    kueue.x-k8s.io/podset-group-name: lws
spec:
  tolerations: [{key: e2e-pool, operator: Equal, value: $NS, effect: NoSchedule}]
  containers: [{name: main, image: busybox, resources: {requests: {cpu: "$2", memory: 100Mi}}}]
YAML
}
member leader 2
for w in 0 1 2; do member "worker-$w" 1; done
group_admitted() {
  [[ $(k get workloads.kueue.x-k8s.io -n "$NS" lws -o jsonpath='{.status.conditions[?(@.type=="Admitted")].status}' 2>/dev/null) == True ]]
}
poll 30 group_admitted || fail "the pod group was not admitted: $(k get workloads.kueue.x-k8s.io -n "$NS" lws -o yaml 2>&1 | tail -15)"
expect_eq "$(k get workloads.kueue.x-k8s.io -n "$NS" lws -o jsonpath='{.spec.podSets[*].topologyRequest.podSetGroupName}')" \
  "lws lws" "both roles are one podset group"
for p in leader worker-0 worker-1 worker-2; do poll 60 bound "$p" || fail "$p not bound"; done
racks=$(for p in leader worker-0 worker-1 worker-2; do k get pod -n "$NS" "$p" -o jsonpath='{.spec.nodeName}'; echo; done |
  sed 's/-h[0-9]*$//' | sort -u)
expect_eq "$racks" "$NS-r1" "the leader and its workers share the rack with room for all of them"

for p in leader worker-0 worker-1 worker-2 blocker-0 blocker-1 blocker-2; do
  k delete pod -n "$NS" "$p" --wait=false >/dev/null 2>&1 || true
done
