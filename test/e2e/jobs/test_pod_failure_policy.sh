# podFailurePolicy FailJob on exit code 42 fails the Job at once with reason
# PodFailurePolicy (not after backoffLimit retries).
source "$(dirname "$0")/lib.sh"
ensure_ns

cat <<YAML | k create -f - >/dev/null
apiVersion: batch/v1
kind: Job
metadata: {name: pfp, namespace: $NS}
spec:
  backoffLimit: 6
  podFailurePolicy:
    rules:
    - action: FailJob
      onExitCodes: {containerName: main, operator: In, values: [42]}
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        command: ["sh", "-c", "exit 42"]
YAML
kwait pfp failed 60
expect_eq "$(jp job pfp '{.status.conditions[?(@.type=="Failed")].reason}')" "PodFailurePolicy" "Failed reason"
expect_eq "$(jp job pfp '{.status.conditions[?(@.type=="Failed")].status}')" "True" "Failed status"
expect_contains "$(jp job pfp '{.status.conditions[?(@.type=="Failed")].message}')" "42" "Failed message"
expect_eq "$(jp job pfp '{.status.failed}')" "1" "status.failed"
expect_eq "$(pod_count pfp)" "1" "pods created"
