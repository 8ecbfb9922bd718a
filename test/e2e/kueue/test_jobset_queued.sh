# e2e-parallel
# A queued JobSet (kueue.x-k8s.io/queue-name) waits for quota as one Workload
# with a pod set per replicated job, and starts whole: its ClusterQueue has
# 6 cpu; a Job of 2 x 1 cpu runs first, then a JobSet of a 1-pod leader and 2 x 2
# workers (5 cpu) — which fits only with that Job gone — is created
# suspended, with its child Jobs suspended and no Workload of their own. Once
# the Job is gone, the JobSet is admitted, its child Jobs run on the flavor's
# node (its nodeSelector merged into every pod), and it completes; the
# Workload is Finished. (The Job is deleted to free its quota.)
source "$(dirname "$0")/lib.sh"
ensure_ns
NODE="node-$NS"
FL="fl-$NS"
CQ="cq-$NS"
sim_node "$NODE" 16 64Gi
flavor "$FL" "$NODE"
cluster_queue "$CQ" "$FL" 6 24Gi
local_queue "$NS" lq "$CQ"

# A Job of 2 x 1 cpu holds 2 of the 6 cpu until it is deleted.
queued_job blocker lq 1 1h "" 2
poll 30 wl_cond_is blocker Admitted True || fail "blocker not admitted"

queued_jobset train lq 3s leader:1 workers:2:2
expect_eq "$CREATED_SUSPEND" "true" "the JobSet is created suspended"

poll 30 has_jobset_wl train || fail "no Workload for the JobSet"
WL=$(jobset_wl train)
expect_eq "$(k get workloads.kueue.x-k8s.io -n "$NS" "$WL" -o jsonpath='{range .spec.podSets[*]}{.name}={.count} {end}')" \
  "leader=1 workers=4 " "pod sets"
# 5 cpu do not fit next to the blocker's 2: pending, child Jobs suspended,
# and only the blocker's and the JobSet's Workloads exist.
sleep 2
expect_eq "$(k get workloads.kueue.x-k8s.io -n "$NS" "$WL" -o jsonpath='{.status.conditions[?(@.type=="QuotaReserved")].status}')" \
  "False" "JobSet Workload while the blocker runs"
expect_eq "$(k get jobs -n "$NS" -l jobset.sigs.k8s.io/jobset-name=train -o jsonpath='{range .items[*]}{.spec.suspend} {end}')" \
  "true true true " "child Jobs while pending"
expect_eq "$(k get workloads.kueue.x-k8s.io -n "$NS" --no-headers | wc -l | tr -d ' ')" "2" "Workloads"
expect_eq "$(k get pods -n "$NS" -l jobset.sigs.k8s.io/jobset-name=train --no-headers 2>/dev/null | wc -l | tr -d ' ')" \
  "0" "pods while pending"

# The blocker goes: the JobSet is admitted and runs whole on the flavor's node.
k delete job -n "$NS" blocker --wait=false >/dev/null
wl_admitted() { [[ $(k get workloads.kueue.x-k8s.io -n "$NS" "$WL" -o jsonpath='{.status.conditions[?(@.type=="Admitted")].status}') == True ]]; }
poll 60 wl_admitted || fail "JobSet Workload not admitted: $(k get workloads.kueue.x-k8s.io -n "$NS" "$WL" -o jsonpath='{.status.conditions}')"
five_pods() { [[ $(k get pods -n "$NS" -l jobset.sigs.k8s.io/jobset-name=train -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c "^$NODE$") == 5 ]]; }
poll 30 five_pods || fail "5 pods not on $NODE: $(k get pods -n "$NS" -o wide 2>&1 | head -c 600)"
expect_eq "$(k get pods -n "$NS" -l jobset.sigs.k8s.io/jobset-name=train -o jsonpath='{range .items[*]}{.spec.nodeSelector.e2e-node} {end}')" \
  "$NODE $NODE $NODE $NODE $NODE " "flavor node selector on every pod"
completed() { [[ $(k get jobset -n "$NS" train -o jsonpath='{.status.terminalState}') == Completed ]]; }
poll 60 completed || fail "JobSet not completed"
wl_finished() { [[ $(k get workloads.kueue.x-k8s.io -n "$NS" "$WL" -o jsonpath='{.status.conditions[?(@.type=="Finished")].status}') == True ]]; }
poll 30 wl_finished || fail "JobSet Workload not Finished"
