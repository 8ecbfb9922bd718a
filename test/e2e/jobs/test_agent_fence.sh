# e2e-parallel
# Node fencing (docs/operations.md "Node failure and fencing"). Its own server
# (no local node, 6 s grace, 2 s not-ready/unreachable tolerations) and two
# remote agents renewing every second: fence-a reaches the server through a
# TCP proxy that the test freezes (SIGSTOP: whatever it holds stays held, as in
# a network partition), fence-b is the spare. An Indexed Job (2 indexes) runs
# on fence-a. Once cut off, fence-a's shims kill its pods 8 s (--fence-period)
# after its last lease renewal; the server evicts them no sooner than 13 s
# after it (8 s + the 5 s margin) and the Job replaces them on fence-b.
# Sampled every 0.2 s from the cut to the end, no index ever runs twice at
# once (process markers). When the proxy thaws, fence-a is Ready again, the
# old pods are gone, the replacements run on, and each evicted pod counted once.
source "$(dirname "$0")/lib.sh"
BATCHD="${BIN_DIR:?}/batchd"
DATA="$E2E_TMP/server"
ADIR="$E2E_TMP/agent-a"
BDIR="$E2E_TMP/agent-b"
MARK=$(new_marker fence)
PORT=$(free_port)
SERVER="http://127.0.0.1:$PORT"
mkdir -p "$DATA" "$ADIR" "$BDIR"
cleanup() {
  kill -CONT "${PROXY_PID:-}" 2>/dev/null || true
  kill -9 "${SAMPLER_PID:-}" "${A_PID:-}" "${B_PID:-}" "${PROXY_PID:-}" 2>/dev/null || true
  kill_under "$ADIR" "$MARK"
  kill_under "$BDIR" "$MARK"
  kill "${SERVER_PID:-}" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "${SERVER_PID:-}" 2>/dev/null || break; sleep 0.1; done
  kill -9 "${SERVER_PID:-}" 2>/dev/null || true
}
trap cleanup EXIT

"$BATCHD" server --listen "127.0.0.1:$PORT" --allow-loopback-admin --data-dir "$DATA" \
  --no-local-node --node-monitor-grace-period 6s \
  --default-unreachable-toleration-seconds 2 --default-not-ready-toleration-seconds 2 \
  >"$E2E_TMP/server.log" 2>&1 &
SERVER_PID=$!
poll 30 eval '[[ $(curl -s -m 2 "$SERVER/healthz") == ok ]]' ||
  fail "server not healthy: $(tail -n 3 "$E2E_TMP/server.log" | tr '\n' ' ')"

# fence-a reaches the server through a proxy the test freezes (jobs/lib.sh).
start_cut_proxy "$PORT"

# Each agent joins with its node credential from this test's own server, as
# jobs/lib.sh's node_credentials does for the suite's server.
creds() {
  "${BIN_DIR:?}/batchctl" create node-token "$1" --data-dir "$DATA" >"$E2E_TMP/$1.token" || return 1
  echo "--token-file $E2E_TMP/$1.token --client-ca-file $DATA/pki/ca.crt"
}
read -ra A_CREDS <<<"$(creds fence-a)"
read -ra B_CREDS <<<"$(creds fence-b)"
((${#A_CREDS[@]} == 4 && ${#B_CREDS[@]} == 4)) || fail "no node credentials from $DATA"
"$BATCHD" agent --server "$PROXY_URL" --node-name fence-a --data-dir "$ADIR" \
  "${A_CREDS[@]}" --log-port "$(free_port)" --labels fence-a=yes --taints fence-a=yes:NoSchedule \
  --fence-period 8s --node-lease-duration-seconds 4 >"$ADIR.log" 2>&1 &
A_PID=$!
"$BATCHD" agent --server "$SERVER" --node-name fence-b --data-dir "$BDIR" \
  "${B_CREDS[@]}" --log-port "$(free_port)" --node-lease-duration-seconds 4 >"$BDIR.log" 2>&1 &
B_PID=$!
for n in fence-a fence-b; do
  poll 30 node_ready_is "$n" True ||
    fail "node $n not Ready: $(tail -n 3 "$ADIR.log" "$BDIR.log" 2>&1 | tr '\n' ' ')"
done
expect_eq "$(k get node fence-a -o jsonpath='{.metadata.annotations.batchd\.io/fence-period-seconds}')" 8 \
  "fence-a's announced fence period"
expect_eq "$(k get node fence-b -o jsonpath='{.metadata.annotations.batchd\.io/fence-period-seconds}')" 40 \
  "fence-b's (default) fence period"

ensure_ns
indexed_sleeper_yaml fenced "$MARK" "$(pinned_spec fence-a)" | k create -f - >/dev/null
running_on() {  # running_on NODE: the Job's Running pods on NODE
  local p n=0
  for p in $(running_pods fenced); do
    [[ $(jp pod "$p" '{.spec.nodeName}') == "$1" ]] && n=$((n + 1))
  done
  echo "$n"
}
poll 60 eval '[[ $(running_on fence-a) == 2 ]]' ||
  fail "the Job's 2 pods are not Running on fence-a: $(k get pods -n "$NS" -o wide 2>&1 | head -c 400)"
poll 20 eval '[[ $(index_procs "$MARK" 0) == 1 && $(index_procs "$MARK" 1) == 1 ]]' ||
  fail "each index should run once: $(index_procs "$MARK" 0) and $(index_procs "$MARK" 1)"

# The sampler: a line per moment an index ran twice.
start_index_sampler "$MARK" "$E2E_TMP/twice" 0 0.2 0 1

# The cut. The replacements may go to fence-b only.
kill -STOP "$PROXY_PID"
expect_ok k label node fence-b fence-a=yes
# Fenced: fence-a's copies die although its agent cannot reach the server.
poll 40 eval '[[ $(index_procs "$MARK" 0) == 0 && $(index_procs "$MARK" 1) == 0 ]]' ||
  fail "fence-a's pods were not fenced: index 0: $(index_procs "$MARK" 0), index 1: $(index_procs "$MARK" 1)"
expect_match "$(cat "$ADIR/pods/shims.log" 2>/dev/null)" "fenced" "fence-a's shims logged the fence"
poll 60 eval '[[ $(running_on fence-b) == 2 ]]' ||
  fail "no 2 replacements Running on fence-b: $(k get pods -n "$NS" -o wide 2>&1 | head -c 400)"
poll 20 eval '[[ $(index_procs "$MARK" 0) == 1 && $(index_procs "$MARK" 1) == 1 ]]' ||
  fail "the replacements' processes: index 0: $(index_procs "$MARK" 0), index 1: $(index_procs "$MARK" 1)"

# Back.
kill -CONT "$PROXY_PID"
poll 30 node_ready_is fence-a True || fail "fence-a not Ready after the proxy thawed"
# The evicted pods were deleted while fence-a was away; its agent finishes
# that, and the Job counted each once.
poll 30 eval '[[ $(job_pods fenced | grep -c .) == 2 ]]' ||
  fail "old pods left: $(k get pods -n "$NS" -o wide 2>&1 | head -c 400)"
poll 20 eval '[[ $(jp job fenced "{.status.failed}") == 2 ]]' ||
  fail "the Job's failed count: $(jp job fenced '{.status}' | head -c 300)"
expect_eq "$(running_on fence-b)" 2 "replacements Running on fence-b after fence-a came back"
sleep 1
stop_index_sampler
expect_eq "$(cat "$E2E_TMP/twice")" "" "moments an index ran twice"
expect_eq "$(index_procs "$MARK" 0) $(index_procs "$MARK" 1)" "1 1" "processes per index at the end"
