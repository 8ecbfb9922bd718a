# `kubectl delete job` removes its pods and kills their processes.
source "$(dirname "$0")/lib.sh"
ensure_ns
MARK=$(new_marker del)

sleeper_job_yaml dj "$MARK" | k create -f - >/dev/null
poll 60 has_running_pod dj || fail "no Running pod within 60s"
poll 20 proc_alive "$MARK" || fail "pod process ($MARK) not found by pgrep"
poll 10 sleep_tree_up "$MARK" || fail "the pod's sleep 300 child not found"
tree=$TREE
pod=$(running_pods dj)

expect_ok k delete job dj -n "$NS"
expect_eq "$OUT" 'job.batch "dj" deleted' "delete output"
poll 60 no_pods dj || fail "pods still present 60s after the delete: $(job_pods dj | tr '\n' ' ')"
expect_absent pod "$pod"
poll 30 proc_gone "$MARK" || fail "pod process still running 30s after the delete"
# shellcheck disable=SC2086
poll 10 pids_gone $tree || fail "pod processes left after the delete: $(ps -o pid=,args= -p "$(paste -sd, <<<"$tree")" | tr '\n' ';')"
