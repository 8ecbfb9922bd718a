# e2e-parallel
# JobSet with kubectl, pods as host processes: a leader and 4 workers whose
# workers start only once the leader is Ready (dependsOn); a worker's exit
# code, turned into a PodFailurePolicy Job failure, matches a failure policy
# rule that restarts the JobSet (RESTARTS in `kubectl get jobset`) and, in the
# next attempt, another rule that fails it; a successPolicy Any JobSet that
# completes with its driver; invalid JobSets refused with field paths.
source "$(dirname "$0")/lib.sh"
ensure_ns

READY_FILE="$E2E_TMP/leader-ready"
# Worker 3 fails (exit 3 + attempt) once this file exists: the test makes it
# after it saw all five Jobs, which a slow poll could otherwise miss between
# the workers' creation and the restart.
FAIL_FILE="$E2E_TMP/worker-3-fails"
# jobset_jobs JS: names of the JobSet's Jobs, sorted, space-separated.
jobset_jobs() {
  k get jobs -n "$NS" -l "jobset.sigs.k8s.io/jobset-name=$1" \
    -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | sort | paste -sd' '
}
jobs_are() { [[ $(jobset_jobs "$1") == "$2" ]]; }
# get_row JS: the JobSet's `kubectl get` row, blanks squeezed.
get_row() { k get jobset -n "$NS" "$1" --no-headers | tr -s ' '; }
row_matches() { grep -qE -- "$2" <<<"$(get_row "$1")"; }
job_attempt() {
  k get job -n "$NS" "$1" -o 'jsonpath={.metadata.labels.jobset\.sigs\.k8s\.io/restart-attempt}'
}

# --- dependsOn Ready, then restart and fail by failure policy rules -------
cat <<YAML | k create -f - >/dev/null
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: train, namespace: $NS}
spec:
  failurePolicy:
    maxRestarts: 3
    rules:
    - name: restartOnCode3
      action: RestartJobSet
      onJobFailureReasons: [PodFailurePolicy]
      onJobFailureMessagePatterns: ["exit code 3 "]
      targetReplicatedJobs: [workers]
    - name: failOnCode4
      action: FailJobSet
      onJobFailureMessagePatterns: ["exit code 4 "]
  replicatedJobs:
  - name: leader
    template:
      spec:
        template:
          spec:
            restartPolicy: Never
            terminationGracePeriodSeconds: 1
            containers:
            - name: main
              image: busybox
              command: ["sh", "-c", "exec sleep 300"]
              readinessProbe:
                exec: {command: ["test", "-f", "$READY_FILE"]}
                periodSeconds: 1
  - name: workers
    replicas: 4
    dependsOn: [{name: leader, status: Ready}]
    template:
      spec:
        backoffLimit: 0
        podFailurePolicy:
          rules:
          - action: FailJob
            onExitCodes: {containerName: main, operator: In, values: [3, 4]}
        template:
          spec:
            restartPolicy: Never
            terminationGracePeriodSeconds: 1
            containers:
            - name: main
              image: busybox
              env:
              - name: ATTEMPT
                valueFrom: {fieldRef: {fieldPath: "metadata.labels['jobset.sigs.k8s.io/restart-attempt']"}}
              - name: JOB_INDEX
                valueFrom: {fieldRef: {fieldPath: "metadata.labels['jobset.sigs.k8s.io/job-index']"}}
              command:
              - sh
              - -c
              - |
                if [ "\$JOB_INDEX" = 3 ]; then
                  while [ ! -e "$FAIL_FILE" ]; do sleep 0.2; done
                  exit \$((3 + ATTEMPT))
                fi
                exec sleep 300
YAML

poll 30 jobs_are train "train-leader-0" || fail "leader Job not created: $(jobset_jobs train)"
# The leader runs but is not Ready: no worker Job may appear.
poll 30 has_running_pod train-leader-0 || fail "leader pod not running"
sleep 3
expect_eq "$(jobset_jobs train)" "train-leader-0" "Jobs while the leader is not Ready"
expect_eq "$(jp pod "$(running_pods train-leader-0)" '{.spec.hostname}.{.spec.subdomain}')" \
  "train-leader-0-0.train" "leader pod hostname.subdomain"
expect_eq "$(k get job -n "$NS" train-leader-0 -o 'jsonpath={.metadata.labels.jobset\.sigs\.k8s\.io/job-key}')" \
  "$(printf '%s' "$NS/train-leader-0" | sha1sum | cut -d' ' -f1)" "job-key label"

# The headless Service of the subdomain (kubectl get svc shows it).
expect_eq "$(jp svc train '{.spec.clusterIP} {.spec.selector.jobset\.sigs\.k8s\.io/jobset-name} {.metadata.ownerReferences[0].kind}')" \
  "None train JobSet" "headless Service"

touch "$READY_FILE"
poll 120 jobs_are train "train-leader-0 train-workers-0 train-workers-1 train-workers-2 train-workers-3" ||
  fail "workers not created once the leader is Ready: $(jobset_jobs train)"
touch "$FAIL_FILE"

# Worker 3 exits 3 in attempt 0: PodFailurePolicy -> rule restartOnCode3.
# (Attempt 1 may already have failed by the time a slow poll looks: the
# restart count is what shows the restart.)
poll 90 row_matches train '^train (Failed )?1 ' || fail "no restart; row: $(get_row train)"
# In attempt 1 worker 3 exits 4: rule failOnCode4 fails the JobSet.
poll 120 row_matches train '^train Failed 1 ' || fail "not failed; row: $(get_row train)"
expect_eq "$(jp jobset train '{.status.conditions[?(@.type=="Failed")].reason}')" \
  "FailJobSetFailurePolicyAction" "Failed reason"
expect_eq "$(jp jobset train '{.status.conditions[?(@.type=="Failed")].message}')" \
  "applying FailJobSet failure policy action (first failed job: train-workers-3)" "Failed message"
expect_eq "$(job_attempt train-workers-3)" "1" "failed Job's restart attempt"
events=$(k get events -n "$NS" --field-selector involvedObject.name=train -o jsonpath='{range .items[*]}{.reason}{"\n"}{end}')
expect_contains "$events" "FailurePolicy_restartOnCode3" "JobSet events"
expect_contains "$events" "RestartJobSetFailurePolicyAction" "JobSet events"
expect_contains "$events" "FailJobSetFailurePolicyAction" "JobSet events"
# A finished JobSet deletes its still-active Jobs.
poll 60 jobs_are train "train-workers-3" || fail "active Jobs not deleted: $(jobset_jobs train)"

# --- successPolicy Any on the driver ------------------------------------
cat <<YAML | k create -f - >/dev/null
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: sp, namespace: $NS}
spec:
  successPolicy: {operator: Any, targetReplicatedJobs: [driver]}
  replicatedJobs:
  - name: driver
    template:
      spec:
        template:
          spec:
            containers: [{name: main, image: busybox, command: ["sh", "-c", "sleep 2"]}]
  - name: workers
    replicas: 2
    template:
      spec:
        template:
          spec:
            terminationGracePeriodSeconds: 1
            containers: [{name: main, image: busybox, command: ["sh", "-c", "exec sleep 300"]}]
YAML
poll 60 row_matches sp '^sp Completed 0 True ' || fail "sp not completed; row: $(get_row sp)"
expect_eq "$(jp jobset sp '{.status.terminalState}')" "Completed" "terminalState"
poll 60 jobs_are sp "sp-driver-0" || fail "workers not deleted: $(jobset_jobs sp)"

# --- invalid JobSets are refused with field paths ------------------------
bad() {  # bad NAME SPEC_YAML (4-space indented under spec:)
  printf 'apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: %s, namespace: %s}\nspec:\n%s\n' \
    "$1" "$NS" "$2" | k create -f -
}
RJOB='    template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}'
expect_fail bad bad1 "  failurePolicy: {maxRestarts: -1, rules: [{name: r, action: Retry}]}
  replicatedJobs:
  - name: w
$RJOB
  - name: w
    dependsOn: [{name: later, status: Ready}]
$RJOB"
expect_contains "$OUT" 'The JobSet "bad1" is invalid' "invalid JobSet"
expect_contains "$OUT" 'spec.replicatedJobs[1].name: Duplicate value: "w"' "duplicate name"
expect_contains "$OUT" 'spec.replicatedJobs[1].dependsOn[0].name: Invalid value: "later": replicatedJob: w cannot depend on replicatedJob: later' "dependsOn"
expect_contains "$OUT" 'spec.failurePolicy.maxRestarts: Invalid value: -1' "maxRestarts"
expect_contains "$OUT" 'spec.failurePolicy.rules[0].action: Unsupported value: "Retry"' "action"
expect_fail bad "$(printf 'x%.0s' {1..56})" "  replicatedJobs:
  - name: leader
$RJOB"
expect_contains "$OUT" 'spec.replicatedJobs[0].name: Invalid value:' "long name"
expect_contains "$OUT" 'job names generated for this JobSet will exceed 63 characters' "long name"
expect_fail bad bad3 "  volumeClaimPolicies: [{templates: [{metadata: {name: data}}]}]
  replicatedJobs:
  - name: w
$RJOB"
expect_contains "$OUT" "spec.replicatedJobs: Invalid value: \"array\": replicatedJob containers don't have a matching volumeMount: data from VolumeClaimPolicies" "claim without a mount"
expect_fail bad bad4 "  failurePolicy: {rules: [{name: r, action: RestartJob}]}
  replicatedJobs:
  - name: w
$RJOB"
expect_contains "$OUT" 'spec.failurePolicy.rules[0].action: Forbidden: the RestartJob and RestartJobAndIgnoreMaxRestarts failure policy actions are not supported by batchd yet' "refused action"
expect_absent jobset bad1
