# The issue's example: kubectl create job ... -- sh -c 'echo hi'; wait; logs.
source "$(dirname "$0")/lib.sh"
ensure_ns

expect_ok k create job hi -n "$NS" --image=busybox -- sh -c 'echo hi'
expect_eq "$OUT" "job.batch/hi created" "create output"
kwait hi complete 60
expect_eq "$(k logs -n "$NS" job/hi)" "hi" "kubectl logs job/hi"
expect_eq "$(jp job hi '{.status.succeeded}')" "1" "status.succeeded"
pod=$(job_pods hi)
expect_eq "$(jp pod "$pod" '{.status.phase}')" "Succeeded" "pod phase"
expect_eq "$(jp pod "$pod" '{.status.containerStatuses[0].state.terminated.exitCode}')" "0" "exit code"
expect_ne "$(jp pod "$pod" '{.spec.nodeName}')" "" "pod nodeName"
