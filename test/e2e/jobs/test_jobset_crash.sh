# kill -9 the server in the middle of a JobSet restart (20 child Jobs being
# replaced) and start it again on the same data dir and port: the restart is
# finished with exactly one Job per name, all of the new attempt, the restart
# counted once, and the JobSet then completes. Uses its own server (the
# suite's must not be killed).
source "$(dirname "$0")/lib.sh"
DATA="$E2E_TMP/crash-data"
LOG="$E2E_TMP/crash-server.log"
MARK=$(new_marker jscrash)
mkdir -p "$DATA"
PORT=$(free_port)
SERVER="http://127.0.0.1:$PORT"
PID=""

cleanup() {
  own_server_stop
  kill_under "$DATA" "$MARK"
}
trap cleanup EXIT

own_server_start
ensure_ns
# Attempt 0: worker 0 fails after 1 s, the others run 30 s. Attempt 1:
# every worker succeeds after 2 s.
cat <<YAML | k create -f - >/dev/null
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: crash, namespace: $NS}
spec:
  failurePolicy: {maxRestarts: 5}
  replicatedJobs:
  - name: w
    replicas: 20
    template:
      spec:
        backoffLimit: 0
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
                echo $MARK
                if [ "\$ATTEMPT" != 0 ]; then sleep 2; exit 0; fi
                if [ "\$JOB_INDEX" = 0 ]; then sleep 1; exit 1; fi
                sleep 30
YAML

restarts() { jp jobset crash '{.status.restarts}'; }
restarted() { [[ $(restarts) == 1 ]]; }
poll 60 restarted || fail "no restart within 60s: $(jp jobset crash '{.status}' | head -c 300)"
kill -9 "$PID"
wait "$PID" 2>/dev/null || true
PID=""
# Where the restart stood at the kill (for the log).
echo "killed mid-restart; Jobs by attempt: $(k get jobs -n "$NS" -o 'jsonpath={range .items[*]}{.metadata.labels.jobset\.sigs\.k8s\.io/restart-attempt}{"\n"}{end}' 2>/dev/null | sort | uniq -c | tr -s ' \n' ' ')" || true

own_server_start
completed() { [[ $(jp jobset crash '{.status.terminalState}') == Completed ]]; }
poll 150 completed || fail "not completed after the restart: $(jp jobset crash '{.status}' | head -c 400)"
expect_eq "$(restarts)" "1" "status.restarts"
expect_eq "$(jp jobset crash '{.status.restartsCountTowardsMax}')" "1" "status.restartsCountTowardsMax"
attempts=$(k get jobs -n "$NS" -l jobset.sigs.k8s.io/jobset-name=crash \
  -o 'jsonpath={range .items[*]}{.metadata.name} {.metadata.labels.jobset\.sigs\.k8s\.io/restart-attempt}{"\n"}{end}')
expect_eq "$(wc -l <<<"$attempts" | tr -d ' ')" "20" "child Jobs"
expect_eq "$(cut -d' ' -f2 <<<"$attempts" | sort -u)" "1" "restart attempts of the child Jobs"
expect_eq "$(cut -d' ' -f1 <<<"$attempts" | sort -u | wc -l | tr -d ' ')" "20" "distinct Job names"
expect_eq "$(jp jobset crash '{.status.replicatedJobsStatus[0].succeeded}')" "20" "succeeded Jobs"
own_server_stop
