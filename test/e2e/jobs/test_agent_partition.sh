# e2e-parallel
# Node failure without double runs. An Indexed Job (2 indexes) runs on a
# remote agent. 1) The agent is cut off (SIGSTOP) for 15 s, less than the
# 40 s grace: nothing is evicted, no pod is lost or replaced, each index runs
# once. 2) It is cut off past the grace and the pods' unreachable toleration
# (this suite's server adds 5 s ones: --default-unreachable-toleration-
# seconds): the pods are evicted and replaced on another node; when the agent
# comes back (SIGCONT) it kills its stale copies, so each index runs exactly
# once again, and the Job counts each evicted pod once. The agent does not
# fence (--fence-period 0): this is the path of an agent that cannot, and
# test_agent_fence.sh the one of an agent that does; test_agent_cut_60s.sh
# cuts an agent's network for 60 s with Kubernetes' default tolerations.
source "$(dirname "$0")/lib.sh"
ensure_ns
NODE=e2e-partition
SPARE=$(k get nodes -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.annotations.batchd\.io/simulated}{"\n"}{end}' |
  awk 'NF == 1 && $1 !~ /^(e2e-|remote-)/ {print $1; exit}')
[[ -n "$SPARE" ]] || fail "no local node"
ADIR="$E2E_TMP/agent"
MARK=$(new_marker partition)
cleanup() {
  kill -CONT "${AGENT_PID:-}" 2>/dev/null || true
  kill -9 "${AGENT_PID:-}" 2>/dev/null || true
  kill_under "$ADIR" "$MARK"
  k label node "$SPARE" "$NODE"- >/dev/null 2>&1 || true
  k delete node "$NODE" --wait=false >/dev/null 2>&1 || true
}
trap cleanup EXIT
start_remote_agent "$NODE" "$ADIR" --fence-period 0

indexed_sleeper_yaml twice "$MARK" "$(pinned_spec "$NODE")" | k create -f - >/dev/null
two_running() { [[ $(running_pods twice | grep -c .) == 2 ]]; }
poll 60 two_running || fail "the Job's 2 pods are not Running: $(k get pods -n "$NS" -o wide 2>&1 | head -c 400)"
poll 20 eval '[[ $(index_procs "$MARK" 0) == 1 && $(index_procs "$MARK" 1) == 1 ]]' ||
  fail "each index should run once: $(index_procs "$MARK" 0) and $(index_procs "$MARK" 1)"
before=$(k get pods -n "$NS" -l job-name=twice -o jsonpath='{range .items[*]}{.metadata.uid}{"\n"}{end}' | sort)

# 1. A short cut-off: nothing happens.
# 15 s by the clock, not by a count of checks: on a loaded host each check
# (a walk of the processes) can take seconds, and 30 of them outlasted the
# node's grace period, which a short cut-off must stay within.
kill -STOP "$AGENT_PID"
cut_end=$((SECONDS + 15))
while ((SECONDS < cut_end)); do
  [[ $(index_procs "$MARK" 0) -le 1 && $(index_procs "$MARK" 1) -le 1 ]] || fail "an index ran twice during a short cut-off"
  sleep 0.5
done
kill -CONT "$AGENT_PID"
sleep 3
# Read until an answer comes (under load one kubectl may time out right after
# the agent resumes); a replaced pod would show in every answer.
pod_uids() { k get pods -n "$NS" -l job-name=twice -o jsonpath='{range .items[*]}{.metadata.uid}{"\n"}{end}' | sort; }
after=""
for _ in $(seq 10); do after=$(pod_uids) && [[ -n $after ]] && break; sleep 1; done
expect_eq "$after" "$before" "the Job's pods after a 15 s cut-off"
expect_eq "$(jp job twice '{.status.failed}')" "" "failed pods after a short cut-off"
poll 20 two_running || fail "pods not Running after a short cut-off"

# 2. A long cut-off: the pods are evicted and replaced on $SPARE.
expect_ok k label node "$SPARE" "$NODE=yes"
kill -STOP "$AGENT_PID"
evicted() { [[ $(jp job twice '{.status.failed}') == 2 ]]; }
poll 120 evicted || fail "the Job did not count 2 evicted pods: $(jp job twice '{.status}' | head -c 300)"
replaced() {
  local p n=0
  for p in $(running_pods twice); do
    [[ $(jp pod "$p" '{.spec.nodeName}') == "$SPARE" ]] && n=$((n + 1))
  done
  ((n == 2))
}
poll 60 replaced || fail "no 2 replacements Running on $SPARE: $(k get pods -n "$NS" -o wide 2>&1 | head -c 400)"
# The stale copies still run on the cut-off node (its agent cannot act).
expect_eq "$(index_procs "$MARK" 0)" 2 "index 0 processes while the agent is stopped"
kill -CONT "$AGENT_PID"
poll 30 eval '[[ $(index_procs "$MARK" 0) == 1 && $(index_procs "$MARK" 1) == 1 ]]' ||
  fail "stale copies not killed after the agent came back: index 0: $(index_procs "$MARK" 0), index 1: $(index_procs "$MARK" 1)"
# Counted once each, and the replacements run on.
sleep 2
expect_eq "$(jp job twice '{.status.failed}')" 2 "failed count after the agent came back"
poll 10 eval 'replaced' || fail "replacements not Running after the agent came back"
k delete job twice -n "$NS" --wait=false >/dev/null 2>&1 || true
