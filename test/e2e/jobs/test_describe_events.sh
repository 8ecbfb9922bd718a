# `kubectl describe job` shows the Job controller's Events.
source "$(dirname "$0")/lib.sh"
ensure_ns

expect_ok k create job ev -n "$NS" --image=busybox -- sh -c 'echo ev'
kwait ev complete 60
pod=$(job_pods ev)
# Events are written asynchronously; give the last one a moment.
has_completed_event() { k describe job ev -n "$NS" | grep -qE 'Normal +Completed +'; }
poll 20 has_completed_event || true
expect_ok k describe job ev -n "$NS"
expect_match "$OUT" "^Events:" "describe"
expect_match "$OUT" "Normal +SuccessfulCreate +.* job-controller +Created pod: $pod" "SuccessfulCreate event from the Job controller"
expect_match "$OUT" "Normal +Completed +.*Job completed" "Completed event"
expect_match "$OUT" "Pods Statuses: +0 Active .* / 1 Succeeded / 0 Failed" "pod statuses"
