# kubectl create cronjob and the CronJob table.
source "$E2E_LIB"
ensure_ns

expect_ok k create cronjob nightly -n "$NS" --image=busybox --schedule='0 3 * * *' -- echo hi
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

expect_fail k create cronjob bad -n "$NS" --image=busybox --schedule='not a schedule'
expect_contains "$OUT" "spec.schedule" "invalid schedule"
expect_absent cronjob bad
