# e2e-parallel
# Elastic Jobs via workload slices (Kueue's ElasticJobsViaWorkloadSlices) with
# kubectl: an elastic Job running 2 pods is patched to 6. A new Workload
# slice (kueue.x-k8s.io/workload-slice-replacement-for) is admitted for 6
# while the first slice's quota counts as its own; the first slice is
# Finished (WorkloadSliceReplaced), the 4 new pods start and the 2 running
# ones are never restarted. Scaled down to 3, the admitted slice shrinks in
# place and the first two pods still run.
source "$(dirname "$0")/lib.sh"
ensure_ns
NODE="node-$NS"
FL="fl-$NS"
CQ="cq-$NS"
trap 'k delete jobs -n "$NS" --all --wait=false >/dev/null 2>&1 || true' EXIT
sim_node "$NODE" 32 128Gi
flavor "$FL" "$NODE"
cluster_queue "$CQ" "$FL" 6 16Gi
local_queue "$NS" lq "$CQ"

cat <<YAML | k create -f - >/dev/null
apiVersion: batch/v1
kind: Job
metadata:
  name: grow
  namespace: $NS
  labels: {kueue.x-k8s.io/queue-name: lq}
  annotations: {kueue.x-k8s.io/elastic-job: "true"}
spec:
  parallelism: 2
  completions: 40
  template:
    metadata:
      annotations: {batchd.io/sim-duration: 1h}
    spec:
      restartPolicy: Never
      containers:
      - {name: main, image: busybox, command: ["true"], resources: {requests: {cpu: "1", memory: 100Mi}}}
YAML

# "name count reserved finished-reason replaces" of each Workload of the job.
slices() {
  k get workloads.kueue.x-k8s.io -n "$NS" -o json | python3 -c '
import json, sys
for w in json.load(sys.stdin)["items"]:
    if not any(o.get("name") == "grow" for o in w["metadata"].get("ownerReferences", [])):
        continue
    conds = {c["type"]: c for c in w.get("status", {}).get("conditions", [])}
    fin = conds.get("Finished", {})
    print(w["metadata"]["name"], w["spec"]["podSets"][0]["count"],
          "admitted" if conds.get("Admitted", {}).get("status") == "True" else "-",
          fin.get("reason", "-") if fin.get("status") == "True" else "-",
          w["metadata"].get("annotations", {}).get("kueue.x-k8s.io/workload-slice-replacement-for", "-"))'
}
# running_pods: names of the job's Running pods without a scheduling gate.
running_pods() {
  k get pods -n "$NS" -l job-name=grow -o json | python3 -c '
import json, sys
for p in json.load(sys.stdin)["items"]:
    if p["status"].get("phase") == "Running" and not p["spec"].get("schedulingGates") \
       and not p["metadata"].get("deletionTimestamp"):
        print(p["metadata"]["name"])' | sort
}
n_running() { [[ $(running_pods | grep -c .) == "$1" ]]; }

poll 60 n_running 2 || fail "grow: $(running_pods | grep -c .) running pods, want 2; workloads: $(slices)"
first=$(running_pods)
wl1=$(slices | awk '{print $1}')
expect_eq "$(slices)" "$wl1 2 admitted - -" "the first slice"

k patch job -n "$NS" grow --type=merge -p '{"spec":{"parallelism":6}}' >/dev/null
replaced() { slices | grep -q "^$wl1 2 admitted WorkloadSliceReplaced -$"; }
poll 60 replaced || fail "first slice not replaced: $(slices)"
grown() { slices | grep -q " 6 admitted - $NS/$wl1$"; }
poll 30 grown || fail "no admitted 6-pod slice replacing $wl1: $(slices)"
poll 60 n_running 6 || fail "grow: $(running_pods | grep -c .) running pods after the scale-up, want 6"
kept=$(comm -12 <(echo "$first") <(running_pods) | grep -c .)
expect_eq "$kept" "2" "the first two pods kept running across the scale-up"
expect_eq "$(k get job -n "$NS" grow -o jsonpath='{.spec.suspend}')" "false" "never suspended"
expect_eq "$(k get cq "$CQ" -o jsonpath='{.status.flavorsUsage[0].resources[0].total}')" "6" \
  "ClusterQueue usage: the 6 pods, the replaced slice not counted"

wl2=$(slices | awk '$2 == 6 {print $1}')
k patch job -n "$NS" grow --type=merge -p '{"spec":{"parallelism":3}}' >/dev/null
poll 60 n_running 3 || fail "grow: $(running_pods | grep -c .) running pods after the scale-down, want 3"
shrunk() { slices | grep -q "^$wl2 3 admitted - "; }
poll 30 shrunk || fail "the admitted slice did not shrink in place: $(slices)"
kept=$(comm -12 <(echo "$first") <(running_pods) | grep -c .)
expect_eq "$kept" "2" "the first two pods kept running across the scale-down"
cq_usage_is() { [[ $(k get cq "$CQ" -o jsonpath='{.status.flavorsUsage[0].resources[0].total}') == "$1" ]]; }
poll 30 cq_usage_is 3 || fail "ClusterQueue usage after the scale-down: $(k get cq "$CQ" -o jsonpath='{.status.flavorsUsage}')"
