# e2e-parallel
# resource-in-use finalizers: deleting a ClusterQueue whose workload runs
# leaves it Terminating (admitting nothing, its usage still counted in the
# cohort) until the workload finishes, so a borrower never over-commits the
# cohort; a ResourceFlavor or AdmissionCheck in use stays until no
# ClusterQueue names it.
source "$(dirname "$0")/lib.sh"
ensure_ns
NODE="node-$NS"
trap 'k delete jobs -n "$NS" --all --wait=false >/dev/null 2>&1 || true; k delete node "$NODE" --wait=false >/dev/null 2>&1 || true' EXIT
sim_node "$NODE" 16 32Gi
flavor "$NS-f" "$NODE"
fin() { k get "$1" "$2" -o jsonpath='{.metadata.finalizers}'; }
cluster_queue "$NS-a" "$NS-f" 2 8Gi "cohortName: $NS"
cluster_queue "$NS-b" "$NS-f" 2 8Gi "cohortName: $NS"
local_queue "$NS" lqa "$NS-a"
local_queue "$NS" lqb "$NS-b"
has_fin() { [[ $(fin "$1" "$2") == *kueue.k8s.io/resource-in-use* ]]; }
poll 20 has_fin clusterqueue "$NS-b" || fail "no resource-in-use finalizer on the ClusterQueue: '$(fin clusterqueue "$NS-b")'"
poll 20 has_fin resourceflavor "$NS-f" || fail "no finalizer on the flavor: '$(fin resourceflavor "$NS-f")'"

# big borrows a's whole quota from the cohort and runs until deleted.
queued_job big lqb 4 1h
poll 30 wl_cond_is big Admitted True || fail "big not admitted"
poll 30 is_running big || fail "big not running"
expect_ok k delete clusterqueue "$NS-b" --wait=false
expect_ne "$(k get cq "$NS-b" -o jsonpath='{.metadata.deletionTimestamp}')" "" "a busy ClusterQueue is kept (Terminating)"
terminating() { [[ $(k get cq "$NS-b" -o jsonpath='{.status.conditions[?(@.type=="Active")].reason}') == Terminating ]]; }
poll 20 terminating || fail "deleted ClusterQueue not Active=False Terminating"
# The flavor both queues use is held too.
expect_ok k delete resourceflavor "$NS-f" --wait=false
expect_ne "$(k get resourceflavor "$NS-f" -o jsonpath='{.metadata.deletionTimestamp}')" "" "flavor in use kept"

# Room in a's own quota is lent to big: small must wait, however long.
queued_job small lqa 2 1s
queued_job late lqb 1 1s
sleep 4
expect_eq "$(is_running big && echo running)" "running" "big still running"
expect_eq "$(wl_cond small QuotaReserved)" "False" "small while the deleted queue's workload runs (cohort over-commit)"
expect_ne "$(wl_cond late QuotaReserved)" "True" "admission into a terminating ClusterQueue"

# big goes (its Workload with it): the ClusterQueue goes, small runs.
k delete job -n "$NS" big --cascade=foreground --wait=false >/dev/null
gone() { ! k get cq "$NS-b" >/dev/null 2>&1; }
poll 30 gone || fail "ClusterQueue still there after its last workload finished: $(k get cq "$NS-b" -o jsonpath='{.metadata}')"
poll 30 wl_cond_is small Admitted True || fail "small not admitted once the cohort has room"
kwait small complete 60
expect_ne "$(wl_cond late QuotaReserved)" "True" "a workload of the deleted queue"
