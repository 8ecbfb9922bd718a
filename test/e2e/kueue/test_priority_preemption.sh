# e2e-parallel
# withinClusterQueue: LowerPriority — a high-priority job preempts a running
# low-priority one, which is suspended, requeued, and re-admitted after the
# high-priority job finishes.
source "$(dirname "$0")/lib.sh"
ensure_ns
NODE="node-$NS"
sim_node "$NODE" 16 32Gi
flavor "$NS-f" "$NODE"
priority_class "$NS-low" 10
priority_class "$NS-high" 1000
cluster_queue "$NS" "$NS-f" 4 8Gi "preemption: {withinClusterQueue: LowerPriority}"
local_queue "$NS" lq "$NS"

queued_job low lq 4 1h "$NS-low"
poll 30 wl_cond_is low Admitted True || fail "low-priority job not admitted"
poll 30 is_running low || fail "low-priority job not started"
expect_eq "$(wl_field low '{.spec.priority}')" "10" "workload priority from the WorkloadPriorityClass"

queued_job high lq 4 4s "$NS-high"
poll 40 wl_cond_is low Evicted True || fail "low-priority workload not evicted"
expect_eq "$(wl_field low '{.status.conditions[?(@.type=="Preempted")].reason}')" "InClusterQueue" "preemption reason"
poll 30 is_suspended low || fail "preempted job not suspended"
poll 30 no_pods low || fail "preempted job's pods not deleted"
poll 40 wl_cond_is high Admitted True || fail "high-priority job not admitted after the preemption"
kwait high complete 60
poll 30 wl_cond_is high Finished True || fail "high-priority workload not Finished"
# The quota is free again: the low-priority job comes back.
poll 60 wl_cond_is low Admitted True || fail "low-priority job not re-admitted"
poll 30 is_running low || fail "low-priority job not restarted"
