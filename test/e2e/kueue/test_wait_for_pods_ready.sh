# e2e-parallel
# waitForPodsReady (config.yaml: timeout 15s, backoffLimitCount 1, base 2s):
# a job admitted to a flavor whose nodes do not exist never gets ready pods;
# it is evicted with PodsReadyTimeout, requeued with backoff, admitted again,
# and after the second timeout deactivated (RequeuingLimitExceeded).
source "$(dirname "$0")/lib.sh"
ensure_ns
# The flavor selects nodes labelled e2e-node=nowhere-$NS: there are none.
flavor "$NS-f" "nowhere-$NS"
cluster_queue "$NS" "$NS-f" 4 8Gi
local_queue "$NS" lq "$NS"
queued_job stuck lq 1 1h
poll 30 wl_cond_is stuck Admitted True || fail "job not admitted"
poll 30 is_running stuck || fail "admitted job not unsuspended"
expect_ne "$(wl_cond stuck PodsReady)" "True" "PodsReady of a job whose pods cannot be scheduled"

evicted_for_timeout() {
  [[ $(wl_field stuck '{.status.conditions[?(@.type=="Evicted")].reason}') == PodsReadyTimeout &&
     $(wl_cond stuck Evicted) == True ]]
}
poll 45 evicted_for_timeout || fail "not evicted with PodsReadyTimeout; conditions: $(wl_field stuck '{.status.conditions}' | head -c 400)"
expect_eq "$(wl_field stuck '{.status.requeueState.count}')" "1" "requeueState.count after the first timeout"
poll 30 is_suspended stuck || fail "evicted job not suspended"

# Requeued after the backoff (2 s), admitted again, timed out again: the
# requeue limit (1) is reached and the workload is deactivated.
deactivated() { [[ $(wl_field stuck '{.spec.active}') == false ]]; }
poll 90 deactivated || fail "workload not deactivated after the second timeout; requeueState: $(wl_field stuck '{.status.requeueState}')"
reason=$(wl_field stuck '{.status.conditions[?(@.type=="Evicted")].reason}')
expect_eq "$reason" "DeactivatedDueToRequeuingLimitExceeded" "eviction reason after the limit"
poll 30 is_suspended stuck || fail "deactivated job not suspended"
