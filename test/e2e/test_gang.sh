# Gang scheduling with scheduling.k8s.io/v1alpha2 PodGroups on a simulated
# node: a gang of 8 on 7 free cpu slots binds nothing until the eighth slot
# frees, then all 8 bind; `kubectl explain` and `get` know the kinds, and
# the API refuses malformed groups and changes to a pod's group.
source "$E2E_LIB"
ensure_ns
NODE="sim-$NS"

cat <<JSON | k create -f - >/dev/null
{"apiVersion": "v1", "kind": "Node",
 "metadata": {"name": "$NODE", "annotations": {"batchd.io/simulated": "true"},
              "labels": {"kubernetes.io/hostname": "$NODE"}},
 "spec": {"taints": [{"key": "e2e-gang", "value": "yes", "effect": "NoSchedule"}]},
 "status": {"capacity": {"cpu": "8", "memory": "16Gi", "pods": "110"},
            "allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}}
JSON
trap 'k delete node "$NODE" --wait=false >/dev/null 2>&1 || true' EXIT

# pod_yaml NAME [GROUP]: a 1-cpu pod pinned to the node that runs for an hour.
pod_yaml() {
  local labels="{}" group=""
  if [[ -n "${2:-}" ]]; then
    labels="{gang: $2}"
    group="schedulingGroup: {podGroupName: $2}"
  fi
  cat <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: $NS
  labels: $labels
  annotations: {batchd.io/sim-duration: 1h}
spec:
  restartPolicy: Never
  nodeSelector: {kubernetes.io/hostname: $NODE}
  tolerations: [{key: e2e-gang, operator: Equal, value: "yes", effect: NoSchedule}]
  $group
  containers:
  - name: main
    image: busybox
    resources: {requests: {cpu: "1"}}
YAML
}
bound_count() {
  k get pods -n "$NS" -l gang=pg -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' |
    grep -c . || true
}

pod_yaml blocker | k create -f - >/dev/null
# Checks wait_for retries are functions: an argument like "$(f)" would be
# expanded once, before the waiting starts.
blocker_bound() { test -n "$(jp pod blocker '{.spec.nodeName}')"; }
wait_for 20 blocker_bound || fail "blocker was not bound"

cat <<YAML | k create -f - >/dev/null
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: pg, namespace: $NS}
spec:
  schedulingPolicy: {gang: {minCount: 8}}
YAML
expect_ok k get podgroups -n "$NS"
expect_match "$OUT" "^NAME +POLICY +MINCOUNT +SCHEDULED +AGE$" "podgroup header"
expect_match "$OUT" "^pg +Gang +8 +<none> +" "podgroup row"
expect_eq "$(jp podgroup pg '{.spec.disruptionMode}')" "Pod" "disruptionMode default"

for i in $(seq 0 7); do
  pod_yaml "g$i" pg | k create -f - >/dev/null
done
cond() { jp podgroup pg '{.status.conditions[?(@.type=="PodGroupScheduled")].message}'; }
one_short() { test "$(cond)" = "7 of 8 pods can be placed, minCount is 8"; }
wait_for 20 one_short || fail "PodGroupScheduled message: '$(cond)'"
expect_eq "$(bound_count)" "0" "gang members bound while one slot short"
expect_contains "$(jp pod g0 '{.status.conditions[?(@.type=="PodScheduled")].message}')" \
  'pod group "pg": 7 of 8 pods can be placed, minCount is 8' "member's PodScheduled message"

# The eighth slot frees: all eight bind.
k delete pod blocker -n "$NS" --grace-period=0 --force >/dev/null 2>&1
all_bound() { test "$(bound_count)" = 8; }
wait_for 30 all_bound || fail "gang not bound after the slot freed: $(bound_count)"
expect_eq "$(jp podgroup pg '{.status.conditions[?(@.type=="PodGroupScheduled")].status}/{.status.conditions[?(@.type=="PodGroupScheduled")].reason}')" \
  "True/Scheduled" "PodGroupScheduled"

# kubectl explain uses the served schema.
expect_ok k explain podgroup.spec
expect_contains "$OUT" "schedulingPolicy" "explain podgroup.spec"
expect_ok k explain podgroups.spec.schedulingPolicy.gang
expect_contains "$OUT" "minCount" "explain gang"
expect_ok k explain pod.spec.schedulingGroup
expect_contains "$OUT" "podGroupName" "explain pod.spec.schedulingGroup"

# Validation with field paths; unimplemented fields are refused.
expect_fail k create -f - <<YAML
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: bad, namespace: $NS}
spec:
  schedulingPolicy: {basic: {}, gang: {minCount: 0}}
  schedulingConstraints: {topologyConstraints: [{topologyKey: rack}]}
YAML
expect_contains "$OUT" "spec.schedulingPolicy: Invalid value" "both policies"
expect_contains "$OUT" "spec.schedulingPolicy.gang.minCount: Invalid value: 0" "minCount"
expect_contains "$OUT" "spec.schedulingConstraints: Forbidden: is not supported by batchd" \
  "schedulingConstraints refused"
expect_fail k patch podgroup pg -n "$NS" --type=merge -p '{"spec":{"schedulingPolicy":{"gang":{"minCount":2}}}}'
expect_contains "$OUT" "spec.schedulingPolicy: Invalid value" "PodGroup spec immutable"
expect_fail k patch pod g0 -n "$NS" --type=merge -p '{"spec":{"schedulingGroup":{"podGroupName":"other"}}}'
expect_contains "$OUT" "spec.schedulingGroup: Invalid value" "pod schedulingGroup immutable"
expect_contains "$OUT" "field is immutable" "pod schedulingGroup immutable"

# The 1.35 form: a v1alpha1 Workload reads back as v1alpha2 and vice versa.
cat <<YAML | k create -f - >/dev/null
apiVersion: scheduling.k8s.io/v1alpha1
kind: Workload
metadata: {name: train, namespace: $NS}
spec:
  podGroups:
  - {name: workers, policy: {gang: {minCount: 4}}}
YAML
expect_eq "$(k get workloads.v1alpha2.scheduling.k8s.io train -n "$NS" -o jsonpath='{.spec.podGroupTemplates[0].name}/{.spec.podGroupTemplates[0].schedulingPolicy.gang.minCount}')" \
  "workers/4" "v1alpha1 Workload as v1alpha2"
expect_eq "$(k get workloads.v1alpha1.scheduling.k8s.io train -n "$NS" -o jsonpath='{.spec.podGroups[0].policy.gang.minCount}')" \
  "4" "v1alpha1 Workload read back"
