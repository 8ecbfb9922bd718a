# WorkloadWithJob on a simulated node: an Indexed Job with parallelism =
# completions = 4 gets a Workload and a PodGroup (gang, minCount 4, owned by
# the Job, listed by `kubectl get workloads.scheduling.k8s.io,podgroups`);
# with 3 cpu free it binds nothing, and all 4 at once when the fourth frees;
# its parallelism cannot change; the garbage collector deletes the Workload
# and PodGroup with the Job.
source "$E2E_LIB"
ensure_ns
NODE="sim-$NS"

node_json() {  # node_json NAME CPU
  cat <<JSON
{"apiVersion": "v1", "kind": "Node",
 "metadata": {"name": "$1", "annotations": {"batchd.io/simulated": "true"},
              "labels": {"kubernetes.io/hostname": "$1"}},
 "spec": {"taints": [{"key": "e2e-gang-job", "value": "yes", "effect": "NoSchedule"}]},
 "status": {"capacity": {"cpu": "$2", "memory": "16Gi", "pods": "110"},
            "allocatable": {"cpu": "$2", "memory": "16Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}}
JSON
}
node_json "$NODE" 4 | k create -f - >/dev/null
cleanup() {
  k delete node "$NODE" --wait=false >/dev/null 2>&1 || true
}
trap cleanup EXIT

# Pod spec lines pinning to node $1.
placement() {
  cat <<YAML
      nodeSelector: {kubernetes.io/hostname: $1}
      tolerations: [{key: e2e-gang-job, operator: Equal, value: "yes", effect: NoSchedule}]
YAML
}
# bound JOB: how many of the Job's pods not being deleted have a node.
bound() {
  k get pods -n "$NS" -l "batch.kubernetes.io/job-name=$1" \
    -o jsonpath='{range .items[*]}{.metadata.deletionTimestamp}={.spec.nodeName}{"\n"}{end}' |
    awk -F= '$1 == "" && $2 != ""' | grep -c . || true
}
# pods JOB: the names of the Job's pods not being deleted.
pods() {
  k get pods -n "$NS" -l "batch.kubernetes.io/job-name=$1" \
    -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.deletionTimestamp}{"\n"}{end}' |
    awk 'NF == 1 {print $1}' | sort
}
# wait_for's arguments expand once: each waited-for check is a function.
bound_is() { test "$(bound "$1")" = "$2"; }

cat <<YAML | k create -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: blocker, namespace: $NS, annotations: {batchd.io/sim-duration: 1h}}
spec:
  restartPolicy: Never
$(placement "$NODE" | sed 's/^    //')
  containers:
  - {name: main, image: busybox, resources: {requests: {cpu: "1"}}}
YAML
blocker_bound() { test -n "$(jp pod blocker '{.spec.nodeName}')"; }
wait_for 20 blocker_bound || fail "blocker was not bound"

cat <<YAML | k create -f - >/dev/null
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: $NS}
spec:
  parallelism: 4
  completions: 4
  completionMode: Indexed
  template:
    metadata: {annotations: {batchd.io/sim-duration: 1h}}
    spec:
      restartPolicy: Never
$(placement "$NODE")
      containers:
      - {name: main, image: busybox, resources: {requests: {cpu: "1"}}}
YAML
JOB_UID=$(jp job train '{.metadata.uid}')
four_pods() { test "$(pods train | wc -l)" = 4; }
wait_for 20 four_pods || fail "Job pods not created: $(pods train)"
expect_ok k get workloads.scheduling.k8s.io,podgroups -n "$NS"
expect_match "$OUT" "^workload.scheduling.k8s.io/train-" "Workload listed"
expect_match "$OUT" "^podgroup.scheduling.k8s.io/train-[a-z0-9]+-train-pgt-0-" "PodGroup listed"
WL=$(k get workloads.scheduling.k8s.io -n "$NS" -o jsonpath='{.items[0].metadata.name}')
PG=$(k get podgroups -n "$NS" -o jsonpath='{.items[0].metadata.name}')
expect_eq "$(jp workload.scheduling.k8s.io "$WL" '{.spec.controllerRef.kind}/{.spec.controllerRef.name}/{.spec.podGroupTemplates[0].schedulingPolicy.gang.minCount}')" \
  "Job/train/4" "Workload spec"
expect_eq "$(jp workload.scheduling.k8s.io "$WL" '{.metadata.ownerReferences[0].uid}')" "$JOB_UID" \
  "Workload owned by the Job"
expect_eq "$(jp podgroup "$PG" '{.metadata.ownerReferences[0].uid}/{.spec.schedulingPolicy.gang.minCount}')" \
  "$JOB_UID/4" "PodGroup owned by the Job"
for p in $(pods train); do
  expect_eq "$(jp pod "$p" '{.spec.schedulingGroup.podGroupName}')" "$PG" "$p schedulingGroup"
done
cond() { jp podgroup "$PG" '{.status.conditions[?(@.type=="PodGroupScheduled")].message}'; }
one_short() { test "$(cond)" = "3 of 4 pods can be placed, minCount is 4"; }
wait_for 20 one_short || fail "PodGroupScheduled message: '$(cond)'"
expect_eq "$(bound train)" "0" "Job pods bound while one slot short"

# Its parallelism is the gang's minCount: it cannot change.
expect_fail k patch job train -n "$NS" --type=merge -p '{"spec":{"parallelism":2}}'
expect_contains "$OUT" "spec.parallelism: Forbidden: cannot be changed for an Indexed Job" \
  "parallelism change refused"

# The fourth slot frees: all four bind at once.
k delete pod blocker -n "$NS" --grace-period=0 --force >/dev/null 2>&1
wait_for 30 bound_is train 4 || fail "gang not bound after the slot freed: $(bound train)"
k delete job train -n "$NS" --cascade=foreground --wait=false >/dev/null
# The garbage collector deletes the Workload and PodGroup with the Job.
no_gang_objects() { test -z "$(k get workloads.scheduling.k8s.io,podgroups -n "$NS" -o name)"; }
wait_for 30 no_gang_objects || fail "Workload/PodGroup left after the Job: $(k get workloads.scheduling.k8s.io,podgroups -n "$NS" -o name)"

