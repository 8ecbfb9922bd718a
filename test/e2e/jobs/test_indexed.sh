# Indexed Job (completions 8, parallelism 4): every pod sees its own
# JOB_COMPLETION_INDEX, the logs cover 0..7, completedIndexes is "0-7".
source "$(dirname "$0")/lib.sh"
ensure_ns

cat <<YAML | k create -f - >/dev/null
apiVersion: batch/v1
kind: Job
metadata: {name: idx, namespace: $NS}
spec:
  completions: 8
  parallelism: 4
  completionMode: Indexed
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        command: ["sh", "-c", "echo index=\$JOB_COMPLETION_INDEX"]
YAML
kwait idx complete 90

expect_eq "$(jp job idx '{.status.succeeded}')" "8" "status.succeeded"
expect_eq "$(jp job idx '{.status.completedIndexes}')" "0-7" "status.completedIndexes"
expect_eq "$(jp job idx '{.status.failed}')" "" "status.failed"

rows=$(k get pods -n "$NS" -l job-name=idx \
  -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.annotations.batch\.kubernetes\.io/job-completion-index}{"\n"}{end}')
expect_eq "$(grep -c . <<<"$rows")" "8" "pod count"
seen=""
while read -r pod idx; do
  logs=$(k logs -n "$NS" "$pod")
  expect_eq "$logs" "index=$idx" "logs of $pod"
  seen+="$idx"$'\n'
done <<<"$rows"
expect_eq "$(sort -n <<<"$seen" | grep . | tr '\n' ' ')" "0 1 2 3 4 5 6 7 " "indexes in the logs"
