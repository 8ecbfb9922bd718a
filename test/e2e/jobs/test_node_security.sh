# e2e-parallel
# A remote agent with its node credential (docs/security.md "Node
# credentials"): its log port speaks only HTTPS and refuses requests without
# a client certificate (401, as kubelet's port 10250); `kubectl logs` reaches
# it through the server (which presents its kubelet client certificate and
# verifies the agent's serving certificate) and still reads local pods; the
# server connects only where the Node itself said (an admin's overwrite of
# the endpoint annotation is not taken); the Node authorizer limits what the
# node reads (only its own Node, its pods' Secrets); NodeRestriction keeps
# it from writing another node's pod status (403, Kubernetes' message).
source "$(dirname "$0")/lib.sh"
ensure_ns
NODE="sec-$NS"
ADIR="$E2E_TMP/agent"
mkdir -p "$ADIR"
LOGPORT=$(free_port)
read -ra CREDS <<<"$(node_credentials "$NODE")"
"${BIN_DIR:?}/batchd" agent --server "$SERVER" --node-name "$NODE" --data-dir "$ADIR" "${CREDS[@]}" \
  --log-port "$LOGPORT" --taints "e2e-sec=$NODE:NoSchedule" >"$E2E_TMP/agent.log" 2>&1 &
APID=$!
cleanup() {
  k delete pods --all -n "$NS" --grace-period=0 --wait=false >/dev/null 2>&1 || true
  kill -9 "$APID" 2>/dev/null || true
  kill_under "$ADIR"
  k delete node "$NODE" --wait=false >/dev/null 2>&1 || true
}
trap cleanup EXIT
TOKEN=$(cat "$E2E_TMP/$NODE.token")
node_ready() { [[ $(k get node "$NODE" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}') == True ]]; }
poll 30 node_ready || fail "node $NODE not Ready within 30s; agent log: $(tail -n 3 "$E2E_TMP/agent.log" | tr '\n' ' ')"

# Pods on the remote node and on the local one.
# The server's own node: neither simulated nor a remote agent's (those
# publish their log endpoint).
LOCAL=$(k get nodes -o jsonpath='{range .items[*]}{.metadata.name}{"|"}{.metadata.annotations.batchd\.io/simulated}{"|"}{.metadata.annotations.batchd\.io/kubelet-endpoint}{"\n"}{end}' |
  awk -F'|' '$2 == "" && $3 == "" {print $1; exit}')
[[ -n "$LOCAL" ]] || fail "no local node"
expect_ok k create secret generic mine -n "$NS" --from-literal=k=v
expect_ok k create secret generic other -n "$NS" --from-literal=k=v
pod() {  # pod NAME NODE TEXT [SECRET]
  local env=""
  [[ -n ${4:-} ]] && env="env: [{name: K, valueFrom: {secretKeyRef: {name: $4, key: k}}}]"
  cat <<YAML | k apply -f - >/dev/null || fail "create pod $1"
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: $NS}
spec:
  nodeName: $2
  restartPolicy: Never
  tolerations: [{key: e2e-sec, operator: Exists}]
  containers:
  - name: main
    image: busybox
    command: ["sh", "-c", "echo $3"]
    $env
YAML
}
pod remote "$NODE" remote-log-ok mine
pod local "$LOCAL" local-log-ok
phase_is() { [[ $(jp pod "$1" '{.status.phase}') == "$2" ]]; }
poll 60 phase_is remote Succeeded || fail "remote pod not Succeeded: $(jp pod remote '{.status}' | head -c 300); agent: $(tail -n 3 "$E2E_TMP/agent.log")"
poll 60 phase_is local Succeeded || fail "local pod not Succeeded"
expect_eq "$(k logs -n "$NS" remote)" "remote-log-ok" "kubectl logs of a remote pod (mTLS to the agent)"
expect_eq "$(k logs -n "$NS" local)" "local-log-ok" "kubectl logs of a local pod"

# The log port: HTTPS only, a client certificate required.
UID_R=$(jp pod remote '{.metadata.uid}')
code=$(curl -sk -o "$E2E_TMP/body" -w '%{http_code}' "https://127.0.0.1:$LOGPORT/containerLogs/$NS/remote/main")
expect_eq "$code" "401" "log port without a client certificate"
expect_eq "$(cat "$E2E_TMP/body")" "Unauthorized" "401 body"
code=$(curl -sk -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "https://127.0.0.1:$LOGPORT/stats/summary")
expect_eq "$code" "401" "log port with a bearer token only"
expect_fail curl -sS --max-time 5 "http://127.0.0.1:$LOGPORT/containerLogs/$NS/remote/main"
# The server's own kubelet client certificate is what gets in.
PKI="${E2E_DATA:?}/pki"
code=$(curl -sk -o "$E2E_TMP/body" -w '%{http_code}' --cert "$PKI/kubelet-client.crt" --key "$PKI/kubelet-client.key" \
  "https://127.0.0.1:$LOGPORT/containerLogs/$NS/remote/main")
expect_eq "$code" "200" "log port with the server's client certificate"
expect_eq "$(cat "$E2E_TMP/body")" "remote-log-ok" "log body"

# The endpoint comes only from the node: an admin's overwrite is not taken.
expect_ok k annotate node "$NODE" --overwrite 'batchd.io/kubelet-endpoint={"address":"10.9.9.9","port":1,"ca":"x"}'
expect_contains "$(k get node "$NODE" -o jsonpath='{.metadata.annotations.batchd\.io/kubelet-endpoint}')" "\"port\":$LOGPORT" "endpoint kept"
expect_eq "$(k logs -n "$NS" remote)" "remote-log-ok" "kubectl logs after the overwrite attempt"

# The Node authorizer: the node reads its pods' Secrets, its own Node, and no more.
api() {  # api METHOD PATH [BODY]: HTTP code, body in $E2E_TMP/body
  curl -s -o "$E2E_TMP/body" -w '%{http_code}' -X "$1" -H "Authorization: Bearer $TOKEN" \
    -H 'Content-Type: application/merge-patch+json' ${3:+--data "$3"} "$SERVER$2"
}
expect_eq "$(api GET "/api/v1/namespaces/$NS/secrets/mine")" "200" "its pod's secret"
expect_eq "$(api GET "/api/v1/namespaces/$NS/secrets/other")" "403" "a secret none of its pods uses"
expect_contains "$(cat "$E2E_TMP/body")" "no relationship found between node '$NODE' and this object" "node authorizer reason"
expect_eq "$(api GET "/api/v1/nodes")" "403" "listing all nodes"
expect_eq "$(api GET "/api/v1/nodes/$NODE")" "200" "its own node"
expect_eq "$(api GET "/api/v1/namespaces/$NS/pods/local")" "403" "another node's pod"
expect_eq "$(api GET "/api/v1/pods?fieldSelector=spec.nodeName%3D$NODE")" "200" "its pods by field selector"

# NodeRestriction: no writes to another node's pod status.
expect_eq "$(api PATCH "/api/v1/namespaces/$NS/pods/local/status" '{"status":{"phase":"Failed"}}')" "403" "another node's pod status"
expect_contains "$(cat "$E2E_TMP/body")" "node \\\"$NODE\\\" can only update pod status for pods with spec.nodeName set to itself" "NodeRestriction message"
expect_eq "$(jp pod local '{.status.phase}')" "Succeeded" "the other pod is unchanged"
