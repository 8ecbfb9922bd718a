# e2e-parallel
# backoffLimit 2 with always-failing pods: exactly 3 pods, then Failed with
# BackoffLimitExceeded (the retry backoff, 10 s then 20 s, makes this ~30 s).
source "$(dirname "$0")/lib.sh"
ensure_ns

cat <<YAML | k create -f - >/dev/null
apiVersion: batch/v1
kind: Job
metadata: {name: bl, namespace: $NS}
spec:
  backoffLimit: 2
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        command: ["sh", "-c", "exit 1"]
YAML
kwait bl failed 120
expect_eq "$(jp job bl '{.status.conditions[?(@.type=="Failed")].reason}')" "BackoffLimitExceeded" "Failed reason"
expect_eq "$(jp job bl '{.status.failed}')" "3" "status.failed"
expect_eq "$(jp job bl '{.status.active}')" "" "status.active"
expect_eq "$(pod_count bl)" "3" "pods created"
phases=$(k get pods -n "$NS" -l job-name=bl -o jsonpath='{range .items[*]}{.status.phase}{"\n"}{end}' | sort | uniq -c | tr -s ' ')
expect_eq "$phases" " 3 Failed" "pod phases"
