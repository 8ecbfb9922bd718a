# e2e-parallel
# A `*/1 * * * *` CronJob made with kubectl create cronjob creates a Job
# owned by it within ~65 s (the server's CronJob controller uses the real
# clock), and that Job runs to completion.
source "$(dirname "$0")/lib.sh"
ensure_ns

expect_ok k create cronjob every -n "$NS" --image=busybox --schedule='*/1 * * * *' -- sh -c 'echo tick'
expect_eq "$OUT" "cronjob.batch/every created" "create output"
owned_jobs() {
  k get jobs -n "$NS" -o jsonpath='{range .items[*]}{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name} {.metadata.name}{"\n"}{end}' |
    awk '$1 == "CronJob/every" {print $2}'
}
has_owned_job() { [[ -n $(owned_jobs) ]]; }
poll 75 has_owned_job || fail "no Job owned by cronjob/every within 75s; jobs: $(k get jobs -n "$NS" -o name | tr '\n' ' ')"
jobs=$(owned_jobs); job=${jobs%%$'\n'*}  # not `| head`: SIGPIPE under pipefail
expect_match "$job" "^every-[0-9]+$" "job name"
expect_eq "$(jp job "$job" '{.metadata.ownerReferences[0].controller}')" "true" "ownerReference.controller"
kwait "$job" complete 60
expect_eq "$(k logs -n "$NS" "job/$job")" "tick" "logs of the scheduled job"
has_last_schedule() { [[ -n $(jp cronjob every '{.status.lastScheduleTime}') ]]; }
poll 20 has_last_schedule || fail "cronjob status.lastScheduleTime not set"
expect_ok k delete cronjob every -n "$NS"
