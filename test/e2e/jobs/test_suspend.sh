# Suspending a running Job deletes its pods and kills their processes;
# resuming it starts a new pod.
source "$(dirname "$0")/lib.sh"
ensure_ns
MARK=$(new_marker susp)

sleeper_job_yaml sus "$MARK" | k create -f - >/dev/null
poll 60 has_running_pod sus || fail "no Running pod within 60s"
poll 20 proc_alive "$MARK" || fail "pod process ($MARK) not found by pgrep"
poll 10 sleep_tree_up "$MARK" || fail "the pod's sleep 300 child not found"
tree=$TREE
first=$(running_pods sus)

expect_ok k patch job sus -n "$NS" --type merge -p '{"spec":{"suspend":true}}'
poll 40 no_pods sus || fail "pods still present 40s after suspend: $(job_pods sus | tr '\n' ' ')"
poll 30 proc_gone "$MARK" || fail "pod process still running 30s after suspend"
# shellcheck disable=SC2086
poll 10 pids_gone $tree || fail "pod processes left after suspend: $(ps -o pid=,args= -p "$(paste -sd, <<<"$tree")" | tr '\n' ';')"
poll 20 job_cond_is sus Suspended True || fail "condition Suspended not True: $(jp job sus '{.status.conditions}')"
expect_eq "$(jp job sus '{.status.conditions[?(@.type=="Suspended")].reason}')" "JobSuspended" "Suspended reason"
expect_eq "$(jp job sus '{.status.active}')" "" "status.active while suspended"

expect_ok k patch job sus -n "$NS" --type merge -p '{"spec":{"suspend":false}}'
poll 60 has_running_pod sus || fail "no Running pod within 60s of resume"
expect_ne "$(running_pods sus)" "$first" "pod after resume"
poll 20 proc_alive "$MARK" || fail "pod process not running after resume"
expect_eq "$(job_cond sus Suspended)" "False" "Suspended after resume"

expect_ok k delete job sus -n "$NS" --wait=true --timeout=60s
poll 40 proc_gone "$MARK" || fail "pod process still running after the Job was deleted"
