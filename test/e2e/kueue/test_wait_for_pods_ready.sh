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
# Time is counted from before the create: the deactivation comes two 15 s
# timeouts (and a 2 s backoff) after the admission, so at least that long
# after the create however long the polls below take on a loaded machine.
created_at=$SECONDS
queued_job stuck lq 1 1h
poll 30 wl_cond_is stuck Admitted True || fail "job not admitted"
poll 30 is_running stuck || fail "admitted job not unsuspended"
expect_ne "$(wl_cond stuck PodsReady)" "True" "PodsReady of a job whose pods cannot be scheduled"

# The workload is evicted for PodsReadyTimeout after 15 s, requeued after a
# 2 s backoff, admitted again, and at the second timeout deactivated (the
# requeue limit is 1). The state between is short-lived, so the
# test checks what lasts: the deactivation, the eviction metric, the events
# and the elapsed time.
deactivated() { [[ $(wl_field stuck '{.spec.active}') == false ]]; }
poll 120 deactivated || fail "workload not deactivated after two timeouts; conditions: $(wl_field stuck '{.status.conditions}' | head -c 400)"
elapsed=$((SECONDS - created_at))
((elapsed >= 30)) || fail "deactivated ${elapsed}s after the create; two 15 s PodsReady timeouts cannot pass that fast"
reason=$(wl_field stuck '{.status.conditions[?(@.type=="Evicted")].reason}')
expect_eq "$reason" "DeactivatedDueToRequeuingLimitExceeded" "eviction reason after the limit"
metric=$(curl -s "$SERVER/metrics" | grep -F "kueue_evicted_workloads_total{cluster_queue=\"$NS\",reason=\"PodsReadyTimeout\"}" || true)
expect_eq "${metric##* }" "1" "kueue_evicted_workloads_total for PodsReadyTimeout (the second timeout deactivates)"
wl=$(wl_of stuck)
events=$(k get events -n "$NS" --field-selector "involvedObject.name=$wl" -o jsonpath='{range .items[*]}{.reason}{"\n"}{end}')
expect_contains "$events" "EvictedDueToPodsReadyTimeout" "the workload's events"
poll 30 is_suspended stuck || fail "deactivated job not suspended"
poll 30 no_pods stuck || fail "deactivated job still has pods"
