# Helpers for the jobs suite (test/e2e/jobs/test_*.sh), sourced after the
# API suite's lib.sh ($E2E_LIB). This suite's server runs WITH the local node,
# so pods really run as host processes under batchd-shim supervisors.
# Polls run every 0.5 s (not 0.1 s): several of these tests run at once on a
# small machine, and every poll is a kubectl process.
source "${E2E_LIB:?E2E_LIB not set}"

# poll SECONDS CMD...: retries CMD every 0.5 s until it succeeds.
poll() {
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.5
  done
}

# A marker unique to this run and test, for pgrep -f on pod processes.
new_marker() {
  echo "mk-$1-$$-$RANDOM$RANDOM"
}

# proc_alive REGEX: some process's command line matches (pgrep -f).
proc_alive() { pgrep -f -- "$1" >/dev/null; }
proc_gone() { ! pgrep -f -- "$1" >/dev/null; }

# job_pods JOB: names of the Job's pods, one per line.
job_pods() {
  k get pods -n "$NS" -l "job-name=$1" -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}'
}
pod_count() { job_pods "$1" | grep -c . || true; }

# job_cond JOB TYPE: the status of condition TYPE ("" when absent).
job_cond() {
  k get job -n "$NS" "$1" -o "jsonpath={.status.conditions[?(@.type==\"$2\")].status}"
}
job_cond_is() { [[ $(job_cond "$1" "$2") == "$3" ]]; }

# running_pods JOB: names of the Job's Running pods.
running_pods() {
  k get pods -n "$NS" -l "job-name=$1" --field-selector status.phase=Running \
    -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}'
}
has_running_pod() { [[ -n $(running_pods "$1") ]]; }
no_pods() { [[ $(pod_count "$1") == 0 ]]; }

# kwait JOB CONDITION SECONDS: kubectl wait, failing the test with the Job's
# status on timeout.
kwait() {
  k wait -n "$NS" --for="condition=$2" "job/$1" --timeout="${3}s" >/dev/null 2>&1 ||
    fail "job $1 not $2 within ${3}s; status: $(k get job -n "$NS" "$1" -o jsonpath='{.status}' 2>&1 | head -c 400)"
}

# A Job running one long pod `sh -c 'sleep 300; echo MARKER'`:
# sleeper_job_yaml NAME MARKER [EXTRA_POD_SPEC_LINES (6-space indent)]
sleeper_job_yaml() {
  cat <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: $1, namespace: $NS}
spec:
  backoffLimit: 6
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 2
${3:-}
      containers:
      - name: main
        image: busybox
        command: ["sh", "-c", "sleep 300; echo $2"]
YAML
}
