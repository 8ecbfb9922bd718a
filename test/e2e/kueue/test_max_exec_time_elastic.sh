# e2e-parallel
# maximumExecutionTimeSeconds and elastic scale-down with kubectl:
# - a Job labelled kueue.x-k8s.io/max-exec-time-seconds=3 that would run an
#   hour is deactivated and evicted (DeactivatedDueToMaximumExecutionTimeExceeded)
#   and suspended after about 3 s of admission;
# - an elastic Job (kueue.x-k8s.io/elastic-job: "true") running 4 pods that is
#   patched down to 2 keeps 2 of its original pods (not restarted), keeps its
#   Workload (count 2, still admitted) and gives the quota back at once: a
#   waiting job is admitted; scaled up past the quota, the bigger Workload
#   slice waits, the new pods stay gated and the job keeps running 2 pods.
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

# Scaling up past the quota (2 + 1 waiting + 4 more > 4 cpu): the bigger
# slice waits and the job keeps running its 2 pods; the new pods stay gated.
k patch job -n "$NS" elastic --type=merge -p '{"spec":{"parallelism":6}}' >/dev/null
slice_pending() {
  k get workloads.kueue.x-k8s.io -n "$NS" -o jsonpath='{range .items[*]}{.metadata.annotations.kueue\.x-k8s\.io/workload-slice-replacement-for} {.status.conditions[?(@.type=="QuotaReserved")].status}{"\n"}{end}' |
    grep -q "^$NS/$wl_before False$"
}
poll 30 slice_pending || fail "no pending slice replacing $wl_before"
gated() {
  k get pods -n "$NS" -l job-name=elastic -o jsonpath='{range .items[*]}{.spec.schedulingGates[0].name}{"\n"}{end}' |
    grep -c kueue.x-k8s.io/elastic-job
}
has_gated() { [[ $(gated) == 4 ]]; }
poll 30 has_gated || fail "elastic: $(gated) gated pods, want 4"
sleep 2
expect_eq "$(k get workloads.kueue.x-k8s.io -n "$NS" "$wl_before" -o jsonpath='{.status.conditions[?(@.type=="Admitted")].status}/{.status.conditions[?(@.type=="Finished")].status}')" \
  "True/" "the running slice stays admitted, not replaced"
expect_eq "$(comm -12 <(echo "$after") <(job_pods elastic | sort) | grep -c .)" "2" "the running pods kept"
expect_eq "$(suspended elastic)" "false" "never suspended while its slice waits"
