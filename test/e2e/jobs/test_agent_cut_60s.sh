# e2e-parallel
# A remote agent cut off for 60 s loses no pod and runs no index twice. An
# Indexed Job (2 indexes) runs on a remote agent (default fence period, 40 s)
# that reaches the suite's server through a TCP proxy; the test freezes the
# proxy (SIGSTOP: connections stay open and nothing passes, as in a network
# partition) for 60 s, past the 40 s node-monitor grace: the server marks the
# node Unknown (and taints it unreachable:NoExecute), but the pods tolerate
# that taint for 300 s (Kubernetes' DefaultTolerationSeconds; this suite's server
# adds 5 s ones, so the pods state 300 s themselves), so nothing is evicted,
# fenced or replaced. Sampled every 0.5 s from the cut to the end, each index
# runs in exactly one process (never none, never two); when the proxy thaws
# the node is Ready again, its taint gone, and the Job's pods are the same
# ones, Running, none counted failed.
source "$(dirname "$0")/lib.sh"
ensure_ns
NODE=e2e-cut60
ADIR="$E2E_TMP/agent"
MARK=$(new_marker cut60)
cleanup() {
  kill -CONT "${PROXY_PID:-}" 2>/dev/null || true
  stop_index_sampler
  kill -9 "${AGENT_PID:-}" "${PROXY_PID:-}" 2>/dev/null || true
  kill_under "$ADIR" "$MARK"
  k delete node "$NODE" --wait=false >/dev/null 2>&1 || true
}
trap cleanup EXIT
start_cut_proxy "$PORT"
AGENT_SERVER=$PROXY_URL start_remote_agent "$NODE" "$ADIR"

indexed_sleeper_yaml cut "$MARK" "$(pinned_spec "$NODE" "      " \
  "{key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 300}" \
  "{key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 300}")" |
  k create -f - >/dev/null
two_running() { [[ $(running_pods cut | grep -c .) == 2 ]]; }
uids() {
  k get pods -n "$NS" -l job-name=cut -o jsonpath='{range .items[*]}{.metadata.uid}{"\n"}{end}' | sort
}
poll 60 two_running || fail "the Job's 2 pods are not Running: $(k get pods -n "$NS" -o wide 2>&1 | head -c 400)"
poll 20 eval '[[ $(index_procs "$MARK" 0) == 1 && $(index_procs "$MARK" 1) == 1 ]]' ||
  fail "each index should run once: $(index_procs "$MARK" 0) and $(index_procs "$MARK" 1)"
before=$(uids)
expect_eq "$(grep -c . <<<"$before")" 2 "the Job's pods before the cut"

# The cut.
start_index_sampler "$MARK" "$E2E_TMP/samples" 1 0.5 0 1
kill -STOP "$PROXY_PID"
cut_at=$SECONDS
# (Its unreachable taint is not asserted: with other nodes of this suite cut
# off at the same time by parallel tests, the zone's disruption rules may
# hold taints back, as Kubernetes' do.)
poll 58 node_ready_is "$NODE" Unknown ||
  fail "the server did not see the cut within 58 s: $(k get node "$NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")]} {.spec.taints}' | head -c 400)"
seen=$((SECONDS - cut_at))
while ((SECONDS - cut_at < 60)); do sleep 1; done
expect_eq "$(uids)" "$before" "the Job's pods at the end of the cut (node Unknown after ${seen} s)"
kill -CONT "$PROXY_PID"

# Back.
poll 60 node_ready_is "$NODE" True || fail "node not Ready after the proxy thawed: $(tail -n 3 "$ADIR.log" | tr '\n' ' ')"
poll 30 eval '[[ $(k get node "$NODE" -o jsonpath="{.spec.taints[*].key}") != *node.kubernetes.io/unreachable* ]]' ||
  fail "the unreachable taint stayed: $(k get node "$NODE" -o jsonpath='{.spec.taints}')"
poll 20 two_running || fail "pods not Running after the cut: $(k get pods -n "$NS" -o wide 2>&1 | head -c 400)"
sleep 2
stop_index_sampler
expect_eq "$(cat "$E2E_TMP/samples")" "" "moments an index ran twice or not at all"
expect_eq "$(uids)" "$before" "the Job's pods after the cut"
expect_eq "$(jp job cut '{.status.failed}')" "" "failed pods after the cut"
expect_eq "$(index_procs "$MARK" 0) $(index_procs "$MARK" 1)" "1 1" "processes per index at the end"
k delete job cut -n "$NS" --wait=false >/dev/null 2>&1 || true
