# e2e-parallel
# Two ClusterQueues in a cohort: one borrows the other's idle quota, and the
# lender reclaims it by preemption when its own work arrives.
source "$(dirname "$0")/lib.sh"
ensure_ns
NODE="node-$NS"
sim_node "$NODE" 32 64Gi
flavor "$NS-f" "$NODE"
for q in a b; do
  cluster_queue "$NS-$q" "$NS-f" 4 8Gi "cohortName: $NS-pool" "preemption: {reclaimWithinCohort: Any}"
  local_queue "$NS" "lq-$q" "$NS-$q"
done

# Queue a borrows: 4 jobs x 2 cpu = 8 cpu against its 4 + b's idle 4.
for i in 1 2 3 4; do queued_job "a$i" lq-a 2 1h; done
poll 40 admitted_count_is 4 a1 a2 a3 a4 || fail "borrowing: admitted $(admitted_count a1 a2 a3 a4) of 4, want 4"
borrowed() { k get cq "$NS-a" -o jsonpath='{.status.flavorsReservation[0].resources[?(@.name=="cpu")].borrowed}'; }
borrowed_is() { [[ $(borrowed) == "$1" ]]; }
poll 20 borrowed_is 4 || fail "cq a borrowed cpu: '$(borrowed)', want 4"

# Queue b's own work reclaims its quota: two of a's workloads are preempted.
for i in 1 2; do queued_job "b$i" lq-b 2 1h; done
poll 60 admitted_count_is 2 b1 b2 || fail "reclaim: b admitted $(admitted_count b1 b2) of 2"
poll 30 admitted_count_is 2 a1 a2 a3 a4 || fail "after reclaim a has $(admitted_count a1 a2 a3 a4) admitted, want 2"
preempted=""
for j in a1 a2 a3 a4; do
  [[ $(wl_cond "$j" Admitted) == True ]] || preempted="$j"
done
reason=$(wl_field "$preempted" '{.status.conditions[?(@.type=="Preempted")].reason}')
expect_eq "$reason" "InCohortReclamation" "preemption reason of $preempted"
expect_eq "$(wl_field "$preempted" '{.status.conditions[?(@.type=="Evicted")].reason}')" "Preempted" "eviction reason"
poll 30 is_suspended "$preempted" || fail "preempted job $preempted not suspended again"
poll 30 no_pods "$preempted" || fail "preempted job $preempted still has pods"
requeued() { [[ $(wl_cond "$preempted" Requeued) == True && $(wl_cond "$preempted" QuotaReserved) == False ]]; }
poll 30 requeued || fail "preempted workload not requeued: QuotaReserved=$(wl_cond "$preempted" QuotaReserved) Requeued=$(wl_cond "$preempted" Requeued)"
poll 20 borrowed_is 0 || fail "cq a still borrows '$(borrowed)' cpu after the reclaim"
