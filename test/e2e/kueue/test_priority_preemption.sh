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

# The high-priority job runs 40 s: once it finishes the low one is admitted
# again and its Preempted condition turns False/QuotaReserved. The eviction
# and its reason are read together, in one request, while the high job runs;
# a loaded machine may let that window pass between two polls, so the
# workload's Preempted Event (which outlives the window) is accepted too, but
# only with the in-ClusterQueue reason in its message. The low job's pods of
# its first admission are named now: the re-admission makes new ones.
poll 30 eval '[[ -n $(job_pods low) ]]' || fail "the low-priority job has no pods"
first_pods=$(job_pods low)
first_pods_gone() {
  local out
  out=$(k get pods -n "$NS" $first_pods --ignore-not-found -o name) || return 1
  [[ -z $out ]]
}
queued_job high lq 4 40s "$NS-high"
evicted_in_cq() {
  [[ $(wl_field low '{.status.conditions[?(@.type=="Evicted")].status}/{.status.conditions[?(@.type=="Preempted")].reason}') == "True/InClusterQueue" ]] && return 0
  wl_event_messages low Preempted | grep -q "due to prioritization in the ClusterQueue"
}
poll 40 evicted_in_cq || fail "low-priority workload not evicted with Preempted reason InClusterQueue (now: $(wl_field low '{.status.conditions[?(@.type=="Evicted")].status}/{.status.conditions[?(@.type=="Preempted")].reason}'))"
poll 30 is_suspended low || fail "preempted job not suspended"
poll 30 first_pods_gone || fail "preempted job's pods not deleted: $(k get pods -n "$NS" $first_pods --ignore-not-found --no-headers 2>&1 | head -c 300)"
poll 40 wl_cond_is high Admitted True || fail "high-priority job not admitted after the preemption"
kwait high complete 120
poll 30 wl_cond_is high Finished True || fail "high-priority workload not Finished"
# The quota is free again: the low-priority job comes back.
poll 60 wl_cond_is low Admitted True || fail "low-priority job not re-admitted"
poll 30 is_running low || fail "low-priority job not restarted"
