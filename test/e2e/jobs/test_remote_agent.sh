# e2e-parallel
# A remote node agent (`batchd agent`) registers Node remote-1, runs a pod
# pinned to it, serves its logs through the server; when the agent dies, the
# node goes NotReady/Unknown after the 40 s lease grace, its pods fail with a
# DisruptionTarget condition and the Job replaces them on the local node.
# remote-1 is tainted (and labelled e2e-remote=yes) so only this test's pods
# land there; the local node gets the label only after the agent is gone.
# A `kubectl logs -f` of a silent pod there, killed, must not leave the
# server following the agent's log (nor holding a thread) until the pod prints.
source "$(dirname "$0")/lib.sh"
ensure_ns
NODE=remote-1
# The server's own node: neither simulated nor a remote agent's (those,
# this test's and parallel tests', publish their log endpoint).
LOCAL=$(k get nodes -o jsonpath='{range .items[*]}{.metadata.name}{"|"}{.metadata.annotations.batchd\.io/simulated}{"|"}{.metadata.annotations.batchd\.io/kubelet-endpoint}{"\n"}{end}' |
  awk -F'|' -v r="$NODE" '$2 == "" && $3 == "" && $1 != r {print $1; exit}')
[[ -n "$LOCAL" ]] || fail "no local node"
ADIR="$E2E_TMP/agent"
MARK=$(new_marker remote)
mkdir -p "$ADIR"
LOGPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
read -ra CREDS <<<"$(node_credentials "$NODE")"
"${BIN_DIR:?}/batchd" agent --server "$SERVER" --node-name "$NODE" --data-dir "$ADIR" "${CREDS[@]}" \
  --log-port "$LOGPORT" --labels e2e-remote=yes --taints e2e-remote=yes:NoSchedule \
  >"$E2E_TMP/agent.log" 2>&1 &
APID=$!
cleanup() {
  kill -9 "$APID" "${WPID:-}" "${LPID:-}" 2>/dev/null || true
  kill_under "$ADIR" "$MARK"
  k label node "$LOCAL" e2e-remote- >/dev/null 2>&1 || true
  k delete node "$NODE" --wait=false >/dev/null 2>&1 || true
}
trap cleanup EXIT

node_ready() { [[ $(k get node "$1" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}') == "$2" ]]; }
poll 30 node_ready "$NODE" True || fail "node $NODE not Ready within 30s; agent log: $(tail -n 3 "$E2E_TMP/agent.log" | tr '\n' ' ')"
expect_eq "$(k get node "$NODE" -o jsonpath='{.metadata.labels.kubernetes\.io/hostname}')" "$NODE" "hostname label"

# 1. A Job pinned to remote-1 runs there; its logs come through the server.
cat <<YAML | k create -f - >/dev/null
apiVersion: batch/v1
kind: Job
metadata: {name: pinned, namespace: $NS}
spec:
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {kubernetes.io/hostname: $NODE}
      tolerations: [{key: e2e-remote, operator: Exists}]
      containers:
      - name: main
        image: busybox
        command: ["sh", "-c", "echo from-\$(hostname)-remote"]
YAML
kwait pinned complete 60
pod=$(job_pods pinned)
expect_eq "$(jp pod "$pod" '{.spec.nodeName}')" "$NODE" "pinned pod's node"
expect_match "$(k logs -n "$NS" job/pinned)" "^from-.*-remote$" "logs via the server"

# 2. A long pod on remote-1; then the agent dies.
sleeper_job_yaml lost "$MARK" "      tolerations: [{key: e2e-remote, operator: Exists}]
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions: [{key: e2e-remote, operator: In, values: [\"yes\"]}]" |
  k create -f - >/dev/null
poll 60 has_running_pod lost || fail "no Running pod within 60s"
old=$(running_pods lost)
expect_eq "$(jp pod "$old" '{.spec.nodeName}')" "$NODE" "long pod's node"
poll 20 proc_alive "$MARK" || fail "the long pod's process is not running"
# A follow of this silent pod (it prints nothing) through the server, whose
# client then dies: the server notices the client gone within about a second
# and closes its connection to the agent's log port (freeing its thread),
# rather than holding both until the container writes or exits.
log_conns() { ss -Htn state established "( dport = :$LOGPORT )" | wc -l; }
base_conns=$(log_conns)
kubectl -s "$SERVER" --cache-dir "$E2E_CACHE" logs -f -n "$NS" "$old" >/dev/null 2>&1 &
LPID=$!
following() { (($(log_conns) > base_conns)); }
poll 20 following || fail "kubectl logs -f: no connection to the agent's log port"
kill -9 "$LPID"
wait "$LPID" 2>/dev/null || true
unfollowed() { (($(log_conns) <= base_conns)); }
poll 10 unfollowed || fail "the server still follows the pod's log 10 s after its client died: $(ss -Htn state established "( dport = :$LOGPORT )")"
# kubectl top reaches the remote agent's /stats/summary through the server.
top_remote() { k top node "$NODE" --no-headers >"$E2E_TMP/top" 2>&1; }
poll 30 top_remote || fail "kubectl top node $NODE: $(cat "$E2E_TMP/top")"
expect_match "$(cat "$E2E_TMP/top")" "^$NODE +[0-9]+m +[0-9]+% +[0-9]+Mi +[0-9]+%" "top node (remote agent)"
top_remote_pod() { k top pod "$old" -n "$NS" --no-headers >"$E2E_TMP/top" 2>&1; }
poll 30 top_remote_pod || fail "kubectl top pod $old: $(cat "$E2E_TMP/top")"
expect_match "$(cat "$E2E_TMP/top")" "^$old +[0-9]+m +[0-9]+Mi" "top pod (remote agent)"
# The evicted pod is marked Failed and then deleted at once: a watch keeps
# every version of it (no --request-timeout: it would end the watch).
kubectl -s "$SERVER" --cache-dir "$E2E_CACHE" get pods -n "$NS" -l job-name=lost --watch -o json >"$E2E_TMP/watch.json" 2>&1 &
WPID=$!
kill -9 "$APID"
wait "$APID" 2>/dev/null || true
expect_ok k label node "$LOCAL" e2e-remote=yes

node_lost() { ! node_ready "$NODE" True; }
poll 75 node_lost || fail "node $NODE still Ready 75s after its agent died"
expect_match "$(k get node "$NODE" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" "^(Unknown|False)$" "Ready status"
# disrupted_seen: some watched version of $old is Failed with
# DisruptionTarget=True.
disrupted_seen() {
  python3 - "$E2E_TMP/watch.json" "$old" <<'PY'
import json, sys
text, pos, dec = open(sys.argv[1]).read(), 0, json.JSONDecoder()
while True:
    while pos < len(text) and text[pos].isspace(): pos += 1
    if pos >= len(text): sys.exit(1)
    obj, pos = dec.raw_decode(text, pos)
    st = obj.get("status", {})
    if (obj["metadata"]["name"] == sys.argv[2] and st.get("phase") == "Failed" and
            any(c.get("type") == "DisruptionTarget" and c.get("status") == "True"
                for c in st.get("conditions", []))):
        sys.exit(0)
PY
}
poll 45 disrupted_seen || fail "pod $old never seen Failed with DisruptionTarget; watch: $(tail -c 300 "$E2E_TMP/watch.json")"
kill "$WPID" 2>/dev/null || true
replaced() {
  local p
  for p in $(running_pods lost); do
    [[ $p != "$old" && $(jp pod "$p" '{.spec.nodeName}') == "$LOCAL" ]] && return 0
  done
  return 1
}
poll 60 replaced || fail "no replacement pod Running on $LOCAL: $(k get pods -n "$NS" -l job-name=lost -o wide 2>&1 | head -c 400)"
counted_failed() { [[ $(jp job lost '{.status.failed}') == 1 ]]; }
poll 20 counted_failed || fail "job status.failed: got '$(jp job lost '{.status.failed}')', want 1"
expect_ok k delete job lost -n "$NS" --wait=true --timeout=60s
