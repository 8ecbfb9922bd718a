# e2e-parallel
# maximumExecutionTimeSeconds and elastic scale-down with kubectl:
# - a Job labelled kueue.x-k8s.io/max-exec-time-seconds=3 that would run an
#   hour is deactivated and evicted (DeactivatedDueToMaximumExecutionTimeExceeded)
#   and suspended after about 3 s of admission;
# - an elastic Job (kueue.x-k8s.io/elastic-job: "true") running 4 pods that is
#   patched down to 2 keeps 2 of its original pods (not restarted), keeps its
#   Workload (count 2, still admitted) and gives the quota back at once: a
#   waiting job is admitted; scaling it up again is refused with a clear error.
source "$(dirname "$0")/lib.sh"
ensure_ns
NODE="node-$NS"
FL="fl-$NS"
CQ="cq-$NS"
sim_node "$NODE" 32 128Gi
flavor "$FL" "$NODE"
cluster_queue "$CQ" "$FL" 4 8Gi
local_queue "$NS" lq "$CQ"

# --- maximumExecutionTimeSeconds ---
cat <<YAML | k create -f - >/dev/null
apiVersion: batch/v1
kind: Job
metadata:
  name: limited
  namespace: $NS
  labels: {kueue.x-k8s.io/queue-name: lq, kueue.x-k8s.io/max-exec-time-seconds: "3"}
spec:
  template:
    metadata:
      annotations: {batchd.io/sim-duration: 1h}
    spec:
      restartPolicy: Never
      containers:
      - {name: main, image: busybox, command: ["true"], resources: {requests: {cpu: "1", memory: 100Mi}}}
YAML
poll 30 has_wl limited || fail "no workload for limited"
expect_eq "$(wl_field limited '{.spec.maximumExecutionTimeSeconds}')" "3" "workload limit from the label"
# Admitted, then evicted about 3 s later (too short a window to poll for
# Admitted=True on a busy machine; the eviction reason says it ran).
evicted_reason() { wl_field limited '{.status.conditions[?(@.type=="Evicted")].reason}'; }
deactivated() { [[ $(evicted_reason) == DeactivatedDueToMaximumExecutionTimeExceeded ]]; }
poll 60 deactivated || fail "limited not evicted for its execution time; Evicted reason: '$(evicted_reason)'"
expect_eq "$(wl_field limited '{.spec.active}')" "false" "limited workload deactivated"
poll 30 is_suspended limited || fail "limited job not suspended after the eviction"
bad=$(k create -f - 2>&1 <<YAML || true
apiVersion: batch/v1
kind: Job
metadata: {name: bad, namespace: $NS, labels: {kueue.x-k8s.io/queue-name: lq, kueue.x-k8s.io/max-exec-time-seconds: "0"}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox, command: ["true"]}]
YAML
)
expect_contains "$bad" "should be greater than 0" "max-exec-time 0 refused"

# --- elastic scale-down ---
cat <<YAML | k create -f - >/dev/null
apiVersion: batch/v1
kind: Job
metadata:
  name: elastic
  namespace: $NS
  labels: {kueue.x-k8s.io/queue-name: lq}
  annotations: {kueue.x-k8s.io/elastic-job: "true"}
spec:
  parallelism: 4
  completions: 8
  template:
    metadata:
      annotations: {batchd.io/sim-duration: 1h}
    spec:
      restartPolicy: Never
      containers:
      - {name: main, image: busybox, command: ["true"], resources: {requests: {cpu: "1", memory: 100Mi}}}
YAML
poll 60 wl_cond_is elastic Admitted True || fail "elastic not admitted"
four() { [[ $(job_pods elastic | grep -c .) == 4 ]]; }
poll 30 four || fail "elastic has $(job_pods elastic | grep -c .) pods, want 4"
before=$(job_pods elastic | sort)
wl_before=$(wl_of elastic)
queued_job waiting lq 1 1h
sleep 2
expect_eq "$(wl_cond waiting Admitted)" "" "waiting job not admitted while 4 of 4 cpu are held"

k patch job -n "$NS" elastic --type=merge -p '{"spec":{"parallelism":2}}' >/dev/null
two() { [[ $(job_pods elastic | grep -c .) == 2 ]]; }
poll 30 two || fail "elastic has $(job_pods elastic | grep -c .) pods after scale-down, want 2"
after=$(job_pods elastic | sort)
kept=$(comm -12 <(echo "$before") <(echo "$after") | grep -c .)
expect_eq "$kept" "2" "pods kept across the scale-down (no restart)"
expect_eq "$(wl_of elastic)" "$wl_before" "the same Workload"
expect_eq "$(wl_field elastic '{.spec.podSets[0].count}')" "2" "workload count"
expect_eq "$(wl_cond elastic Admitted)" "True" "still admitted"
expect_eq "$(suspended elastic)" "false" "never suspended"
poll 30 wl_cond_is waiting Admitted True || fail "waiting job not admitted after the scale-down released 2 cpu"

up=$(k patch job -n "$NS" elastic --type=merge -p '{"spec":{"parallelism":6}}' 2>&1 || true)
expect_contains "$up" "not supported" "scale-up of a running elastic job refused"
expect_eq "$(k get job -n "$NS" elastic -o jsonpath='{.spec.parallelism}')" "2" "parallelism unchanged"
