# Pod-priority preemption on a simulated node: a Job's two low-priority pods
# fill the node's 2 cpu; a high-priority pod arrives, is nominated to the
# node and preempts exactly one of them (DisruptionTarget
# PreemptionByScheduler, deleted, a Preempted event); the Job replaces the
# victim, the replacement stays Pending (the room is the nominated pod's),
# and the high-priority pod binds (its nominatedNodeName is then cleared).
# A `preemptionPolicy: Never` pod preempts nothing.
source "$E2E_LIB"
ensure_ns
NODE="sim-$NS"
LOW="e2e-low-$NS"
HIGH="e2e-high-$NS"
NEVER="e2e-never-$NS"

cat <<JSON | k create -f - >/dev/null
{"apiVersion": "v1", "kind": "Node",
 "metadata": {"name": "$NODE", "annotations": {"batchd.io/simulated": "true"},
              "labels": {"kubernetes.io/hostname": "$NODE"}},
 "spec": {"taints": [{"key": "e2e-preempt", "value": "yes", "effect": "NoSchedule"}]},
 "status": {"capacity": {"cpu": "2", "memory": "16Gi", "pods": "110"},
            "allocatable": {"cpu": "2", "memory": "16Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}}
JSON
WATCH_PID=""
cleanup() {
  [[ -n "$WATCH_PID" ]] && kill "$WATCH_PID" 2>/dev/null || true
  k delete node "$NODE" --wait=false >/dev/null 2>&1 || true
  k delete pc "$LOW" "$HIGH" "$NEVER" --wait=false >/dev/null 2>&1 || true
}
trap cleanup EXIT

pc() {  # pc NAME VALUE [EXTRA]
  printf 'apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: %s}\nvalue: %s\n%s\n' \
    "$1" "$2" "${3:-}"
}
expect_ok k apply -f - <<<"$(pc "$LOW" 10)"
expect_ok k apply -f - <<<"$(pc "$HIGH" 1000)"
expect_ok k apply -f - <<<"$(pc "$NEVER" 2000 'preemptionPolicy: Never')"

# Every DisruptionTarget reason and nominatedNodeName seen on a pod of the
# namespace (the victim is gone soon after it gets one; the nomination ends
# when the preemptor binds).
k get pods -n "$NS" -w --output-watch-events=false \
  -o 'jsonpath={.metadata.name} {.status.conditions[?(@.type=="DisruptionTarget")].reason} nominated={.status.nominatedNodeName}{"\n"}' \
  >"$E2E_TMP/watch" 2>/dev/null &
WATCH_PID=$!

PLACEMENT="  nodeSelector: {kubernetes.io/hostname: $NODE}
  tolerations: [{key: e2e-preempt, operator: Equal, value: \"yes\", effect: NoSchedule}]"
cat <<YAML | k create -f - >/dev/null
apiVersion: batch/v1
kind: Job
metadata: {name: low, namespace: $NS}
spec:
  parallelism: 2
  completions: 2
  backoffLimit: 6
  template:
    metadata:
      labels: {app: low}
      annotations: {batchd.io/sim-duration: 1h}
    spec:
      restartPolicy: Never
      priorityClassName: $LOW
$(sed 's/^/    /' <<<"$PLACEMENT")
      containers:
      - {name: main, image: busybox, resources: {requests: {cpu: "1"}}}
YAML
bound_low() {
  k get pods -n "$NS" -l app=low -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' |
    grep -c . || true
}
# wait_for's arguments expand once: each waited-for check is a function.
low_bound_is() { test "$(bound_low)" = "$1"; }
wait_for 30 low_bound_is 2 || fail "low Job pods not bound: $(bound_low)"
VICTIMS_BEFORE=$(k get pods -n "$NS" -l app=low -o jsonpath='{.items[*].metadata.name}')

pod() {  # pod NAME CLASS
  cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: $NS, annotations: {batchd.io/sim-duration: 1h}}
spec:
  restartPolicy: Never
  priorityClassName: $2
$PLACEMENT
  containers:
  - {name: main, image: busybox, resources: {requests: {cpu: "1"}}}
YAML
}

# preemptionPolicy Never: waits, preempts no one.
expect_ok k create -f - <<<"$(pod never "$NEVER")"
never_reported() { test -n "$(jp pod never '{.status.conditions[?(@.type=="PodScheduled")].message}')"; }
wait_for 20 never_reported ||
  fail "Never pod not reported unschedulable"
expect_eq "$(jp pod never '{.spec.nodeName}{.status.nominatedNodeName}')" "" "Never pod not nominated"
expect_eq "$(bound_low)" "2" "Never pod preempted nobody"
k delete pod never -n "$NS" --wait=false >/dev/null

# The high-priority pod preempts one low pod.
expect_ok k create -f - <<<"$(pod high "$HIGH")"
high_bound() { test "$(jp pod high '{.spec.nodeName}')" = "$NODE"; }
wait_for 30 high_bound ||
  fail "high pod not bound: node '$(jp pod high '{.spec.nodeName}')' nominated '$(jp pod high '{.status.nominatedNodeName}')'"
wait_for 10 grep -q "^high  nominated=$NODE\$" "$E2E_TMP/watch" ||
  fail "nominatedNodeName $NODE not seen on high: $(grep '^high ' "$E2E_TMP/watch")"
expect_eq "$(jp pod high '{.status.nominatedNodeName}')" "" "nominatedNodeName cleared once bound"
wait_for 10 grep -q ' PreemptionByScheduler nominated=$' "$E2E_TMP/watch" ||
  fail "no DisruptionTarget PreemptionByScheduler seen: $(cat "$E2E_TMP/watch")"
VICTIM=$(grep ' PreemptionByScheduler nominated=$' "$E2E_TMP/watch" | head -1 | cut -d' ' -f1)
expect_contains "$VICTIMS_BEFORE" "$VICTIM" "victim is a low Job pod"
expect_eq "$(grep ' PreemptionByScheduler nominated=$' "$E2E_TMP/watch" | cut -d' ' -f1 | sort -u | wc -l)" \
  "1" "exactly one victim"
gone() { ! k get pod -n "$NS" "$1" >/dev/null 2>&1; }
wait_for 30 gone "$VICTIM" || fail "victim $VICTIM not deleted"
expect_ok k get events -n "$NS" --field-selector reason=Preempted
expect_contains "$OUT" "Preempted by pod $(jp pod high '{.metadata.uid}') on node $NODE" "Preempted event"

# The Job replaced the victim; the replacement stays Pending.
pending_low() {
  k get pods -n "$NS" -l app=low -o jsonpath='{range .items[*]}{.metadata.name}={.spec.nodeName}{"\n"}{end}' |
    grep -c '=$' || true
}
one_pending() { test "$(pending_low)" = 1; }
wait_for 30 one_pending || fail "no Pending replacement: $(k get pods -n "$NS" -o wide)"
expect_eq "$(pending_low)" "1" "replacement stays Pending"
expect_eq "$(bound_low)" "1" "one low pod still bound"
expect_eq "$(jp pod high '{.spec.nodeName}')" "$NODE" "high pod stays bound"
