# e2e-parallel
# disruptionMode PodGroup on a simulated node with 2 cpu, each part with a
# Job whose two pods join a user's PodGroup (gang, minCount 2, disruptionMode
# PodGroup); the Job names the group in its template, so it gets no Workload
# of its own.
# 1. A higher-priority pod needs one member's room: the whole group is
#    evicted (DisruptionTarget PreemptionByScheduler on each pod and on the
#    PodGroup, a Preempted event each); the Job recreates both pods, which
#    wait as a gang while one cpu is free and bind together once the room is
#    back.
# 2. One member is disrupted by someone else (as the node lifecycle
#    controller does on a failed node; simulated nodes never fail, so the
#    test marks the pod and deletes it): the other member goes with it
#    (DisruptionTarget with the same reason, a PodGroupDisrupted event) and
#    the Job's replacements bind as a gang.
# Each part has its own Job: a Job waits 10 s, 20 s, ... after failures.
source "$E2E_LIB"
ensure_ns
NODE="sim-$NS"
LOW="e2e-low-$NS"
HIGH="e2e-high-$NS"

cat <<JSON | k create -f - >/dev/null
{"apiVersion": "v1", "kind": "Node",
 "metadata": {"name": "$NODE", "annotations": {"batchd.io/simulated": "true"},
              "labels": {"kubernetes.io/hostname": "$NODE"}},
 "spec": {"taints": [{"key": "e2e-gang-disruption", "value": "yes", "effect": "NoSchedule"}]},
 "status": {"capacity": {"cpu": "2", "memory": "16Gi", "pods": "110"},
            "allocatable": {"cpu": "2", "memory": "16Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}}
JSON
cleanup() {
  k delete node "$NODE" --wait=false >/dev/null 2>&1 || true
  k delete pc "$LOW" "$HIGH" --wait=false >/dev/null 2>&1 || true
}
trap cleanup EXIT
pc() {  # pc NAME VALUE
  printf 'apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: %s}\nvalue: %s\n' \
    "$1" "$2"
}
expect_ok k apply -f - <<<"$(pc "$LOW" 10)"
expect_ok k apply -f - <<<"$(pc "$HIGH" 1000)"

PLACEMENT="nodeSelector: {kubernetes.io/hostname: $NODE}
tolerations: [{key: e2e-gang-disruption, operator: Equal, value: \"yes\", effect: NoSchedule}]"
indent() { sed "s/^/$1/" <<<"$2"; }

# gang_job NAME GROUP: the PodGroup and a Job of two 1-cpu pods joining it.
gang_job() {
  cat <<YAML | k create -f - >/dev/null
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: $2, namespace: $NS}
spec:
  schedulingPolicy: {gang: {minCount: 2}}
  disruptionMode: PodGroup
YAML
  cat <<YAML | k create -f - >/dev/null
apiVersion: batch/v1
kind: Job
metadata: {name: $1, namespace: $NS}
spec:
  parallelism: 2
  completions: 2
  completionMode: Indexed
  backoffLimit: 10
  template:
    metadata: {annotations: {batchd.io/sim-duration: 1h}}
    spec:
      restartPolicy: Never
      priorityClassName: $LOW
      schedulingGroup: {podGroupName: $2}
$(indent "      " "$PLACEMENT")
      containers:
      - {name: main, image: busybox, resources: {requests: {cpu: "1"}}}
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
all_gone() {  # all_gone POD...
  local p
  for p in "$@"; do ! k get pod -n "$NS" "$p" >/dev/null 2>&1 || return 1; done
}
replaced() { test "$(pods "$1" | wc -l)" = 2 && test "$(pods "$1")" != "$2"; }

# --- 1. Preemption evicts the whole group ---------------------------------
gang_job pair dpg
wait_for 30 bound_is pair 2 || fail "pair not bound: $(k get pods -n "$NS" -o wide)"
FIRST=$(pods pair)
expect_eq "$(k get workloads.scheduling.k8s.io -n "$NS" -o name)" "" \
  "no Workload for a Job with its own group"
cat <<YAML | k create -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: high, namespace: $NS, annotations: {batchd.io/sim-duration: 1h}}
spec:
  restartPolicy: Never
  priorityClassName: $HIGH
$(indent "  " "$PLACEMENT")
  containers:
  - {name: main, image: busybox, resources: {requests: {cpu: "1"}}}
YAML
high_bound() { test "$(jp pod high '{.spec.nodeName}')" = "$NODE"; }
wait_for 30 high_bound || fail "high pod not bound: $(k get pods -n "$NS" -o wide)"
expect_eq "$(jp pod high '{.status.nominatedNodeName}')" "" "nominatedNodeName cleared once bound"
# shellcheck disable=SC2086
wait_for 30 all_gone $FIRST || fail "the group was not evicted whole: $(k get pods -n "$NS" -o wide)"
expect_eq "$(jp podgroup dpg '{.status.conditions[?(@.type=="DisruptionTarget")].reason}')" \
  "PreemptionByScheduler" "PodGroup DisruptionTarget"
expect_ok k get events -n "$NS" --field-selector reason=Preempted
for p in $FIRST; do expect_contains "$OUT" "pod/$p" "Preempted event of $p"; done
# The Job recreates both; with one cpu free they wait as a gang.
pair_replaced() { replaced pair "$FIRST"; }
wait_for 45 pair_replaced || fail "Job did not recreate the pair: $(pods pair)"
expect_eq "$(bound pair)" "0" "recreated pair bound with one cpu free"
k delete pod high -n "$NS" --grace-period=0 --force >/dev/null 2>&1
wait_for 30 bound_is pair 2 || fail "recreated pair not bound: $(k get pods -n "$NS" -o wide)"
k delete job pair -n "$NS" --wait=false >/dev/null
# shellcheck disable=SC2046
wait_for 30 all_gone $(pods pair) || fail "pair's pods not deleted with the Job"

# --- 2. One disrupted member takes the other ------------------------------
gang_job pair2 dpg2
wait_for 30 bound_is pair2 2 || fail "pair2 not bound: $(k get pods -n "$NS" -o wide)"
SECOND=$(pods pair2)
VICTIM=$(head -1 <<<"$SECOND")
OTHER=$(tail -1 <<<"$SECOND")
k patch pod "$VICTIM" -n "$NS" --subresource=status --type=strategic -p \
  '{"status":{"conditions":[{"type":"DisruptionTarget","status":"True","reason":"DeletionByTaintManager","message":"Taint manager: deleting pod"}]}}' \
  >/dev/null
k delete pod "$VICTIM" -n "$NS" --wait=false >/dev/null
wait_for 30 all_gone "$OTHER" || fail "the other member was not evicted: $(k get pods -n "$NS" -o wide)"
expect_ok k get events -n "$NS" --field-selector reason=PodGroupDisrupted
expect_contains "$OUT" "pod/$OTHER" "PodGroupDisrupted event"
expect_contains "$OUT" "disrupted as a whole (disruptionMode PodGroup)" "PodGroupDisrupted message"
expect_eq "$(jp podgroup dpg2 '{.status.conditions[?(@.type=="DisruptionTarget")].reason}')" \
  "DeletionByTaintManager" "PodGroup DisruptionTarget"
pair2_replaced() { replaced pair2 "$SECOND"; }
wait_for 45 pair2_replaced || fail "Job did not recreate pair2: $(pods pair2)"
wait_for 30 bound_is pair2 2 || fail "replacements not bound: $(k get pods -n "$NS" -o wide)"
