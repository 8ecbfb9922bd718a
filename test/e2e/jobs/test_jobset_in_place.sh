# e2e-parallel
# JobSet in-place restart (failurePolicy.restartStrategy InPlaceRestart) with
# pods as host processes: 4 pods run; one container exits 3; every pod's
# containers run again in place — the same pods (uids) on the same node,
# restartCount 1, status.currentInPlaceRestartAttempt 1 and
# previousInPlaceRestartAttempt 0, no Job failed (backoffLimit 0) and no
# restart by recreate (RESTARTS 0). A second failure would pass maxRestarts
# 1: the JobSet fails with ReachedMaxRestarts.
source "$(dirname "$0")/lib.sh"
ensure_ns
RUNS="$E2E_TMP/runs"
mkdir -p "$RUNS"
chmod 777 "$RUNS"  # the pods (the unprivileged pod user) write and remove files here

cat <<YAML | k create -f - >/dev/null
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: ip, namespace: $NS}
spec:
  failurePolicy: {maxRestarts: 1, restartStrategy: InPlaceRestart}
  replicatedJobs:
  - name: w
    replicas: 2
    template:
      spec:
        parallelism: 2
        completions: 2
        backoffLimit: 0
        template:
          spec:
            restartPolicy: Never
            terminationGracePeriodSeconds: 1
            containers:
            - name: main
              image: busybox
              command:
              - sh
              - -c
              - |
                echo run >> "$RUNS/\$HOSTNAME"
                while sleep 0.2; do
                  if [ -f "$RUNS/fail-\$HOSTNAME" ]; then rm -f "$RUNS/fail-\$HOSTNAME"; exit 3; fi
                done
YAML

status_is() { [[ $(jp jobset ip "{.status.currentInPlaceRestartAttempt}/{.status.previousInPlaceRestartAttempt}") == "$1" ]]; }
pods_of() {
  k get pods -n "$NS" -l jobset.sigs.k8s.io/jobset-name=ip \
    -o jsonpath="{range .items[*]}$1{\"\\n\"}{end}" | sort
}
poll 60 status_is "0/" || fail "attempt 0 never current: $(jp jobset ip '{.status}')"
expect_eq "$(pods_of '{.status.phase}' | uniq -c | tr -s ' ')" " 4 Running" "pods running"
before=$(pods_of '{.metadata.uid} {.spec.nodeName}')

# Worker 1 of Job 0 fails: all four run again, in place.
touch "$RUNS/fail-ip-w-0-1"
poll 60 status_is "1/0" || fail "no in-place restart: $(jp jobset ip '{.status}')"
expect_eq "$(pods_of '{.metadata.uid} {.spec.nodeName}')" "$before" "pods and nodes after the restart"
expect_eq "$(pods_of '{.status.containerStatuses[0].restartCount} {.metadata.annotations.jobset\.sigs\.k8s\.io/in-place-restart-attempt}' | uniq -c | tr -s ' ')" \
  " 4 1 1" "restart counts and attempts"
for h in ip-w-0-0 ip-w-0-1 ip-w-1-0 ip-w-1-1; do
  expect_eq "$(wc -l <"$RUNS/$h" | tr -d ' ')" "2" "runs of $h"
done
expect_eq "$(jp jobset ip '{.status.restarts}')" "0" "restarts by recreate"
expect_eq "$(k get jobs -n "$NS" -o jsonpath='{range .items[*]}{.status.failed}{end}')" "" "failed pods counted by the Jobs"
expect_contains "$(k get events -n "$NS" --field-selector involvedObject.name=ip -o jsonpath='{range .items[*]}{.reason}: {.message}{"\n"}{end}')" \
  "InPlaceRestart: restarting every pod in place (attempt 1): pod ip-w-0-1" "InPlaceRestart event"

# A second failure would be restart 2 > maxRestarts 1.
touch "$RUNS/fail-ip-w-1-0"
failed() { [[ $(jp jobset ip '{.status.terminalState} {.status.conditions[?(@.type=="Failed")].reason}') == "Failed ReachedMaxRestarts" ]]; }
poll 60 failed || fail "not failed: $(jp jobset ip '{.status}')"

# Jobs whose replicated job cannot run all pods at once are refused.
expect_fail k create -f - <<YAML
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: bad, namespace: $NS}
spec:
  failurePolicy: {restartStrategy: InPlaceRestart}
  replicatedJobs:
  - name: w
    template: {spec: {parallelism: 2, completions: 4, template: {spec: {containers: [{name: c, image: busybox}]}}}}
YAML
expect_contains "$OUT" "spec.replicatedJobs[0].template.spec.completions: Invalid value: 4: must be set and equal to parallelism" "bad completions"
