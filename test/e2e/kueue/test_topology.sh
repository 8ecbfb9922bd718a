# e2e-parallel
# Topology-aware admission: a 16-pod Job with podset-required-topology: rack
# on 4 racks x 4 hosts (4 cpus each) lands in one rack; with one slot taken
# in every rack the next one waits with a message naming the level and the
# count that fits, and is admitted once a slot frees.
source "$(dirname "$0")/lib.sh"
ensure_ns
RACK=topology.batchd.io/rack
HOST=kubernetes.io/hostname

# tas_node NAME RACK: a simulated 4-cpu node of this test's pool.
tas_node() {
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
for r in 0 1 2 3; do
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
cluster_queue "$NS" "$NS-tas" 64 256Gi
local_queue "$NS" lq "$NS"

# tas_job NAME [PODS]: Indexed pods (16) of 1 cpu that must share one rack.
tas_job() {
  cat <<YAML | k create -f - >/dev/null
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  namespace: $NS
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  parallelism: ${2:-16}
  completions: ${2:-16}
  completionMode: Indexed
  template:
    metadata:
      annotations:
        batchd.io/sim-duration: 1h
        kueue.x-k8s.io/podset-required-topology: $RACK
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        command: ["true"]
        resources:
          requests: {cpu: "1", memory: 100Mi}
YAML
}

# racks_of JOB: the distinct racks of the Job's bound pods, and how many are bound.
racks_of() {
  k get pods -n "$NS" -l "job-name=$1" -o json | python3 -c '
import json, sys
pods = json.load(sys.stdin)["items"]
bound = [p["spec"]["nodeName"] for p in pods if p["spec"].get("nodeName")]
print(len(bound), " ".join(sorted({n.rsplit("-h", 1)[0] for n in bound})))'
}
all_bound_in_one_rack() { [[ $(racks_of "$1") =~ ^16\ [^\ ]+$ ]]; }

# Bad input: a slice size that does not divide the pod count is refused.
out=$(cat <<YAML | k create -f - 2>&1 || true
apiVersion: batch/v1
kind: Job
metadata: {name: bad-slice, namespace: $NS, labels: {kueue.x-k8s.io/queue-name: lq}}
spec:
  parallelism: 16
  completions: 16
  completionMode: Indexed
  template:
    metadata:
      annotations:
        kueue.x-k8s.io/podset-slice-required-topology: $HOST
        kueue.x-k8s.io/podset-slice-size: "5"
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox, resources: {requests: {cpu: "1"}}}]
YAML
)
expect_contains "$out" "podset-slice-size" "slice size refused with its field path"
expect_contains "$out" "must divide the pod count 16" "slice size refusal says why"

tas_job first
poll 30 wl_cond_is first Admitted True || fail "the TAS job was not admitted"
levels=$(wl_field first '{.status.admission.podSetAssignments[0].topologyAssignment.levels}')
expect_contains "$levels" "$RACK" "topologyAssignment lists the levels"
poll 60 all_bound_in_one_rack first || fail "pods not bound in one rack: $(racks_of first)"
gates=$(k get pods -n "$NS" -l job-name=first -o jsonpath='{.items[*].spec.schedulingGates}')
expect_eq "$gates" "" "every pod was ungated"
first_rack=$(racks_of first | cut -d' ' -f2)
out=$("$BIN_DIR/batchctl" -s "$SERVER" list workloads -n "$NS")
expect_contains "$out" "TOPOLOGY" "batchctl list workloads has a topology column"
expect_contains "$out" "rack=$first_rack hostname x4" "batchctl list workloads shows the domains"
out=$("$BIN_DIR/batchctl" -s "$SERVER" describe workload -n "$NS" "$(wl_of first)")
expect_contains "$out" "Placement: rack=$first_rack" "batchctl describe workload shows the placement"
expect_contains "$out" "$first_rack-h3" "batchctl describe workload lists each host"
k delete job -n "$NS" first --wait=false >/dev/null
poll 60 no_pods first || fail "first job's pods not gone"

# One slot taken in every rack by a pod outside TAS.
for r in 0 1 2 3; do
  cat <<YAML | k create -f - >/dev/null
apiVersion: v1
kind: Pod
metadata:
  name: blocker-$r
  namespace: $NS
  annotations: {batchd.io/sim-duration: 1h}
spec:
  nodeSelector: {$HOST: $NS-r$r-h0}
  tolerations: [{key: e2e-pool, operator: Equal, value: $NS, effect: NoSchedule}]
  containers:
  - name: main
    image: busybox
    resources: {requests: {cpu: "1"}}
YAML
done
blocker_bound() { [[ -n $(k get pod -n "$NS" "blocker-$1" -o jsonpath='{.spec.nodeName}') ]]; }
for r in 0 1 2 3; do poll 30 blocker_bound "$r" || fail "blocker-$r not bound"; done

tas_job second
msg() { wl_field second '{.status.conditions[?(@.type=="QuotaReserved")].message}'; }
waits_with_message() { [[ $(msg) == *"15 out of 16"* ]]; }
poll 30 waits_with_message || fail "second job's message: '$(msg)'"
expect_contains "$(msg)" "$RACK" "the message names the level"
out=$("$BIN_DIR/batchctl" -s "$SERVER" describe workload -n "$NS" "$(wl_of second)")
expect_contains "$out" "15 out of 16" "batchctl describe workload says why it waits"
expect_eq "$(wl_cond second Admitted)" "" "second job not admitted while no rack has 16 free slots"
expect_eq "$(suspended second)" "true" "second job stays suspended"

k delete pod -n "$NS" blocker-2 --wait=false >/dev/null
poll 60 wl_cond_is second Admitted True || fail "second job not admitted after a slot freed"
poll 60 all_bound_in_one_rack second || fail "second job's pods not in one rack: $(racks_of second)"
expect_contains "$(racks_of second)" "$NS-r2" "the freed rack"
k delete job -n "$NS" second --wait=false >/dev/null
poll 60 no_pods second || fail "second job's pods not gone"

# Node failure: a 2-pod job's node goes away; its pods get another node of
# the same rack, and the replacement pods land there.
tas_job third 2
poll 30 wl_cond_is third Admitted True || fail "third job not admitted"
# assigned_hosts JOB: the hosts of the Job's topology assignment (slices expanded).
assigned_hosts() {
  wl_field "$1" '{.status.admission.podSetAssignments[0].topologyAssignment}' | python3 -c '
import json, sys
raw = sys.stdin.read().strip()
ta = json.loads(raw) if raw else {}
out = []
for s in ta.get("slices", []):
    lv = s["valuesPerLevel"][-1]
    for i in range(s["domainCount"]):
        out.append(lv["universalValue"] if "universalValue" in lv
                   else lv.get("prefix", "") + lv["roots"][i] + lv.get("suffix", ""))
print(" ".join(sorted(out)))'
}
node_of_third() { k get pods -n "$NS" -l job-name=third -o jsonpath='{.items[0].spec.nodeName}'; }
third_bound() { [[ $(racks_of third) =~ ^2\ [^\ ]+$ ]]; }
poll 60 third_bound || fail "third job's pods not bound in one rack: $(racks_of third)"
failed=$(node_of_third)
rack=$(racks_of third | cut -d' ' -f2)
expect_contains "$(assigned_hosts third)" "$failed" "the assignment names the pods' node"
k delete node "$failed" >/dev/null
not_on_failed() { local a; a=$(assigned_hosts third); [[ -n $a && $a != *"$failed"* ]]; }
poll 30 not_on_failed || fail "assignment still names $failed: $(assigned_hosts third)"
expect_eq "$(wl_cond third Admitted)" "True" "third job stays admitted"
# What the node lifecycle does to a lost node's pods: they go; the Job replaces them.
k delete pods -n "$NS" -l job-name=third --field-selector "spec.nodeName=$failed" --force --grace-period=0 >/dev/null 2>&1
replaced() {
  local out
  out=$(k get pods -n "$NS" -l job-name=third -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}')
  [[ $(grep -c . <<<"$out") == 2 ]] && ! grep -q "^$failed\$" <<<"$out" && ! grep -q '^$' <<<"$out"
}
poll 60 replaced || fail "replacement pods not bound off $failed: $(racks_of third)"
expect_eq "$(racks_of third)" "2 $rack" "the replacements stay in rack $rack"
k delete job -n "$NS" third --wait=false >/dev/null
