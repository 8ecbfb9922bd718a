# CronJobs from a manifest and the CronJob table (`kubectl create cronjob`
# itself is in test_typed_create.sh).
source "$E2E_LIB"
ensure_ns

cat >"$E2E_TMP/cj.yaml" <<YAML
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: $NS}
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers: [{name: nightly, image: busybox, command: [echo, hi]}]
YAML
expect_ok k create -f "$E2E_TMP/cj.yaml"
expect_eq "$OUT" "cronjob.batch/nightly created" "create cronjob"
expect_ok k get cronjobs -n "$NS"
expect_match "$(head -n 1 <<<"$OUT")" "^NAME +SCHEDULE +TIMEZONE +SUSPEND +ACTIVE +LAST SCHEDULE +AGE$" "cronjob header"
expect_match "$OUT" "^nightly +0 3 \* \* \* +<none> +False +0 +<none> +" "cronjob row"
expect_eq "$(k get cj nightly -n "$NS" -o jsonpath='{.spec.concurrencyPolicy}/{.spec.successfulJobsHistoryLimit}/{.spec.failedJobsHistoryLimit}')" \
  "Allow/3/1" "cronjob defaults"
expect_eq "$(k get cj nightly -n "$NS" -o jsonpath='{.spec.jobTemplate.spec.template.spec.containers[0].command[*]}')" \
  "echo hi" "cronjob command"

expect_ok k patch cronjob nightly -n "$NS" --type merge -p '{"spec":{"suspend":true}}'
expect_match "$(k get cj nightly -n "$NS" --no-headers)" "^nightly +0 3 \* \* \* +<none> +True " "suspended row"

expect_fail k create -f - <<<"$(sed -e 's/name: nightly, namespace/name: bad, namespace/; s/0 3 \* \* \*/not a schedule/' "$E2E_TMP/cj.yaml")"
expect_contains "$OUT" "spec.schedule" "invalid schedule"
expect_absent cronjob bad
