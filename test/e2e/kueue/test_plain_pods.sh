# e2e-parallel
# Kueue's plain pod integration with kubectl: a queued pod waits behind its
# scheduling gate (kubectl shows SchedulingGated) until quota frees, then
# runs; a group of 3 pods with pod-group-total-count 3 is admitted as one
# Workload; bad group annotations are refused with their field paths.
source "$(dirname "$0")/lib.sh"
ensure_ns
sim_node "$NS-n" 8 32Gi
flavor "$NS-f" "$NS-n"
cluster_queue "$NS" "$NS-f" 3 16Gi
local_queue "$NS" lq "$NS"

# queued_pod NAME CPU [LABEL_LINES] [ANNOTATION_LINES]: a pod in lq that runs an hour.
queued_pod() {
  cat <<YAML | k create -f - >/dev/null
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: $NS
  labels: {kueue.x-k8s.io/queue-name: lq${3:-}}
  annotations: {batchd.io/sim-duration: 1h${4:-}}
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: busybox
    resources: {requests: {cpu: "$2", memory: 100Mi}}
YAML
}
phase() { k get pod -n "$NS" "$1" -o jsonpath='{.status.phase}'; }
is_running_pod() { [[ $(phase "$1") == Running ]]; }
gates() { k get pod -n "$NS" "$1" -o jsonpath='{.spec.schedulingGates[*].name}'; }
# pod_wl POD: the Workload the pod (a single pod) controls.
pod_wl() {
  k get workloads.kueue.x-k8s.io -n "$NS" -o json | python3 -c '
import json, sys
for w in json.load(sys.stdin)["items"]:
    for o in w["metadata"].get("ownerReferences", []):
        if o.get("kind") == "Pod" and o.get("name") == sys.argv[1] and o.get("controller"):
            print(w["metadata"]["name"])' "$1"
}
wl_status() {  # wl_status WORKLOAD TYPE
  k get workloads.kueue.x-k8s.io -n "$NS" "$1" -o "jsonpath={.status.conditions[?(@.type==\"$2\")].status}" 2>/dev/null
}
admitted() { [[ $(wl_status "$1" Admitted) == True ]]; }

# 1. A single pod gets a Workload, is admitted, ungated and runs.
queued_pod first 2
expect_eq "$(k get pod -n "$NS" first -o jsonpath='{.metadata.labels.kueue\.x-k8s\.io/managed}')" \
  "true" "the webhook marks the pod managed"
expect_contains "$(k get pod -n "$NS" first -o jsonpath='{.metadata.finalizers}')" \
  "kueue.x-k8s.io/managed" "and holds it with Kueue's finalizer"
poll 30 is_running_pod first || fail "first pod not running: $(k get pod -n "$NS" first -o wide 2>&1)"
expect_match "$(pod_wl first)" '^pod-first-[0-9a-f]{5}$' "the Workload is named pod-<name>-<hash>"
expect_eq "$(gates first)" "" "the admitted pod has no gate left"

# 2. A second pod does not fit the 3-cpu quota: it waits gated.
queued_pod second 2
has_pod_wl() { [[ -n $(pod_wl "$1") ]]; }
poll 30 has_pod_wl second || fail "second pod got no Workload"
sleep 2
expect_contains "$(gates second)" "kueue.x-k8s.io/admission" "the waiting pod keeps the admission gate"
expect_contains "$(k get pod -n "$NS" second)" "SchedulingGated" "kubectl shows it SchedulingGated"
expect_eq "$(wl_status "$(pod_wl second)" Admitted)" "" "its Workload is not admitted"
expect_eq "$(k get pod -n "$NS" second -o jsonpath='{.spec.nodeName}')" "" "and it is not bound"

# Quota frees: the first pod is deleted; the second is admitted and runs.
k delete pod -n "$NS" first --wait=false >/dev/null
poll 60 is_running_pod second || fail "second pod not running after quota freed: $(k get pod -n "$NS" second 2>&1)"
expect_eq "$(gates second)" "" "ungated once admitted"
expect_eq "$(k get pod -n "$NS" second -o jsonpath='{.spec.nodeSelector.e2e-node}')" "$NS-n" \
  "the flavor's node labels were injected"
gone() { ! k get pod -n "$NS" "$1" >/dev/null 2>&1; }
poll 60 gone first || fail "the deleted pod was kept (finalizer not removed)"

# 3. A group of 3 pods with total count 3 is admitted as one Workload.
for p in g0 g1 g2; do
  queued_pod "$p" 300m ", kueue.x-k8s.io/pod-group-name: grp" ", kueue.x-k8s.io/pod-group-total-count: \"3\""
done
poll 30 admitted grp || fail "group Workload not admitted: $(k get workloads.kueue.x-k8s.io -n "$NS" grp -o yaml 2>&1 | tail -20)"
expect_eq "$(k get workloads.kueue.x-k8s.io -n "$NS" grp -o jsonpath='{.spec.podSets[*].count}')" "3" \
  "one pod set of the group's 3 pods"
expect_eq "$(k get workloads.kueue.x-k8s.io -n "$NS" grp -o jsonpath='{.metadata.annotations.kueue\.x-k8s\.io/is-group-workload}')" \
  "true" "marked as a pod group's Workload"
group_workloads() { k get workloads.kueue.x-k8s.io -n "$NS" -o name | grep -c -v '/pod-' || true; }
expect_eq "$(group_workloads)" "1" "no Workload per pod of the group"
for p in g0 g1 g2; do poll 30 is_running_pod "$p" || fail "group pod $p not running"; done

# 4. A group short of its total count waits without a Workload.
queued_pod h0 100m ", kueue.x-k8s.io/pod-group-name: half" ", kueue.x-k8s.io/pod-group-total-count: \"2\""
sleep 2
expect_fail k get workloads.kueue.x-k8s.io -n "$NS" half
expect_contains "$(gates h0)" "kueue.x-k8s.io/admission" "a lone group member waits gated"

# 5. Bad input is refused with its field path and nothing is created.
out=$(queued_pod bad1 100m ", kueue.x-k8s.io/pod-group-name: g" ", kueue.x-k8s.io/pod-group-total-count: \"0\"" 2>&1 || true)
expect_contains "$out" "metadata.annotations[kueue.x-k8s.io/pod-group-total-count]" "total count 0 refused with its path"
expect_contains "$out" "group total count should be greater than zero" "and says why"
out=$(queued_pod bad2 100m ", kueue.x-k8s.io/pod-group-name: g" 2>&1 || true)
expect_contains "$out" "metadata.annotations[kueue.x-k8s.io/pod-group-total-count]: Required value" \
  "a group name without a total count is refused"
out=$(queued_pod bad3 100m "" ", kueue.x-k8s.io/pod-group-total-count: \"2\"" 2>&1 || true)
expect_contains "$out" "metadata.labels[kueue.x-k8s.io/pod-group-name]: Required value" \
  "a total count without a group name is refused"
expect_fail k get pod -n "$NS" bad1
out=$(k label pod -n "$NS" g0 kueue.x-k8s.io/pod-group-name=other --overwrite 2>&1 || true)
expect_contains "$out" "field is immutable" "the group of a pod cannot change"

for p in second g0 g1 g2 h0; do k delete pod -n "$NS" "$p" --wait=false >/dev/null 2>&1 || true; done
