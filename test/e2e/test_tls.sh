#!/usr/bin/env bash
# e2e-parallel
# TLS serving (issue #12): the generated CA and serving certificate, kubectl
# with --certificate-authority (and a client certificate signed by the CA),
# broken handshakes and garbage TLS records that leave the server serving,
# and the refusal of plain HTTP beyond loopback. The server trusts no
# loopback peer (no --allow-loopback-admin), so a remote agent joins it as
# README says, with only its node token and the CA: it registers its Node,
# runs a pod (whose log `kubectl logs` reads through the agent's mTLS log
# port), and with the same credential cannot write another node's pod or
# Node, nor its own taints or restricted labels (NodeRestriction, 403 with
# kube-apiserver's messages); requests without credentials to the server and
# to the log port are refused. (jobs/test_node_security.sh covers the Node
# authorizer's reads and the log endpoint over the jobs suite's server.)
source "${E2E_LIB:?}"
poll() {  # poll SECONDS CMD...: every 0.5 s (each try is a kubectl process).
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.5
  done
}

PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT
LOAD="$(dirname "${BASH_SOURCE[0]}")/http_load.py"

SPORT=$(free_port)
DATA="$E2E_TMP/data"
# Locked down: no loopback admin, and no anonymous requests either
# (--anonymous-auth=false: without credentials even /healthz is 401).
"${BIN_DIR:?}/batchd" server --listen "127.0.0.1:$SPORT" --data-dir "$DATA" --store memory \
  --no-local-node --serve-https always --tls-san batchd.e2e.test --anonymous-auth=false \
  >"$E2E_TMP/server.log" 2>&1 &
SPID=$!
PIDS+=("$SPID")
PKI="$DATA/pki"
healthy() {  # with the admin token the first start writes
  curl -sf --cacert "$PKI/ca.crt" -H "Authorization: Bearer $(cat "$DATA/admin.token")" "https://127.0.0.1:$SPORT/healthz"
}
wait_for 30 healthy ||
  fail "https server did not start: $(tail -3 "$E2E_TMP/server.log")"
expect_contains "$(cat "$E2E_TMP/server.log")" "https://127.0.0.1:$SPORT" "startup banner"
[[ $(stat -c %a "$PKI/ca.key") == 600 && $(stat -c %a "$PKI/apiserver.key") == 600 ]] ||
  fail "private keys are not mode 0600"
sans=$(openssl x509 -in "$PKI/apiserver.crt" -noout -ext subjectAltName)
expect_contains "$sans" "IP Address:127.0.0.1" "serving certificate SANs"
expect_contains "$sans" "DNS:batchd.e2e.test" "serving certificate SANs (--tls-san)"

# An admin client certificate signed by the server's CA (as `batchctl
# kubeconfig` will hand out): CN = user, O = group.
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$E2E_TMP/admin.key" \
  -subj "/O=system:masters/CN=e2e-admin" -out "$E2E_TMP/admin.csr" 2>/dev/null
openssl x509 -req -in "$E2E_TMP/admin.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" \
  -CAcreateserial -days 1 -out "$E2E_TMP/admin.crt" 2>/dev/null
kt() {
  kubectl -s "https://127.0.0.1:$SPORT" --cache-dir "$E2E_CACHE/tls" --request-timeout=30s \
    --certificate-authority "$PKI/ca.crt" --client-certificate "$E2E_TMP/admin.crt" \
    --client-key "$E2E_TMP/admin.key" "$@"
}
expect_ok kt get namespaces
expect_contains "$OUT" "kube-system" "kubectl over https"
# The server is verified: without the CA kubectl refuses it.
expect_fail kubectl -s "https://127.0.0.1:$SPORT" --request-timeout=10s \
  --client-certificate "$E2E_TMP/admin.crt" --client-key "$E2E_TMP/admin.key" get namespaces
expect_contains "$OUT" "certificate signed by unknown authority" "kubectl without the CA"

# Broken handshakes and garbage records; plain HTTP to the TLS port.
expect_ok timeout 60 python3 "$LOAD" tls-garbage "$SPORT"
expect_contains "$OUT" "done" "tls-garbage"
expect_fail curl -sS -m 5 "http://127.0.0.1:$SPORT/healthz"
kill -0 "$SPID" || fail "the server died"
expect_ok kt get namespaces
expect_ok kt create namespace tls-after-garbage

# A remote agent joins as README says: the server's CA and its node token
# (system:node:NAME), nothing else. Its log port accepts the client
# certificates of that same CA (the server's kubelet client certificate).
NODE=e2e-tls-node
TOKEN_FILE="$E2E_TMP/$NODE.token"
"$BIN_DIR/batchctl" create node-token "$NODE" --data-dir "$DATA" >"$TOKEN_FILE" || fail "batchctl create node-token"
APORT=$(free_port)
"$BIN_DIR/batchd" agent --server "https://127.0.0.1:$SPORT" --certificate-authority "$PKI/ca.crt" \
  --node-name "$NODE" --token-file "$TOKEN_FILE" --data-dir "$E2E_TMP/agent" --log-port "$APORT" \
  >"$E2E_TMP/agent.log" 2>&1 &
PIDS+=($!)
ready() { [[ $(kt get node "$1" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}') == True ]]; }
poll 30 ready "$NODE" || fail "agent did not register: $(tail -3 "$E2E_TMP/agent.log")"
# Only the node itself publishes its log endpoint: the agent wrote as system:node:NAME.
expect_contains "$(kt get node "$NODE" -o 'jsonpath={.metadata.annotations.batchd\.io/kubelet-endpoint}')" \
  "\"port\":$APORT" "the endpoint the node published"
NS=tls-e2e
expect_ok kt create namespace "$NS"
cat <<YAML >"$E2E_TMP/pods.yaml"
apiVersion: v1
kind: Pod
metadata: {name: mine, namespace: $NS}
spec:
  restartPolicy: Never
  containers:
  - {name: main, image: busybox, command: ["sh", "-c", "echo hello-over-tls"]}
YAML
expect_ok kt apply -f "$E2E_TMP/pods.yaml"
phase() { [[ $(kt get pod -n "$NS" "$1" -o 'jsonpath={.status.phase}') == "$2" ]]; }
poll 60 phase mine Succeeded ||
  fail "pod not Succeeded: $(kt get pod -n "$NS" mine -o 'jsonpath={.status}' | head -c 300); agent: $(tail -3 "$E2E_TMP/agent.log")"
expect_eq "$(kt get pod -n "$NS" mine -o 'jsonpath={.spec.nodeName}')" "$NODE" "the pod's node"
expect_eq "$(kt logs -n "$NS" mine)" "hello-over-tls" "kubectl logs through the agent's mTLS port"

# Another node (no agent) with a pod bound to it.
expect_ok kt apply -f - <<YAML
apiVersion: v1
kind: Node
metadata: {name: e2e-tls-other}
---
apiVersion: v1
kind: Pod
metadata: {name: theirs, namespace: $NS}
spec:
  nodeName: e2e-tls-other
  restartPolicy: Never
  containers:
  - {name: main, image: busybox, command: ["true"]}
YAML
# The node's own credential, with the real kubectl.
nk() {
  kubectl -s "https://127.0.0.1:$SPORT" --cache-dir "$E2E_CACHE/tls-node" --request-timeout=30s \
    --certificate-authority "$PKI/ca.crt" --token "$(cat "$TOKEN_FILE")" "$@"
}
expect_ok nk auth whoami -o 'jsonpath={.status.userInfo.username}'
expect_eq "$OUT" "system:node:$NODE" "the agent's credential"
# A status write as the agent makes it (kubectl patch --subresource=status
# would first GET pods/status, which a node may not read).
code=$(curl -s -o "$E2E_TMP/body" -w '%{http_code}' --cacert "$PKI/ca.crt" -X PATCH \
  -H "Authorization: Bearer $(cat "$TOKEN_FILE")" -H 'Content-Type: application/merge-patch+json' \
  --data '{"status":{"phase":"Failed"}}' "https://127.0.0.1:$SPORT/api/v1/namespaces/$NS/pods/theirs/status")
expect_eq "$code" "403" "another node's pod status"
expect_contains "$(cat "$E2E_TMP/body")" "pods \\\"theirs\\\" is forbidden: node \\\"$NODE\\\" can only update pod status for pods with spec.nodeName set to itself" \
  "NodeRestriction: another node's pod"
# kubectl cannot even read another Node (the Node authorizer) ...
expect_fail nk patch node e2e-tls-other --type=merge -p '{"metadata":{"labels":{"stolen":"yes"}}}'
expect_contains "$OUT" "node '$NODE' cannot read 'e2e-tls-other', only its own Node object" "Node authorizer: another Node"
# ... and a blind write is NodeRestriction's to refuse.
code=$(curl -s -o "$E2E_TMP/body" -w '%{http_code}' --cacert "$PKI/ca.crt" -X PATCH \
  -H "Authorization: Bearer $(cat "$TOKEN_FILE")" -H 'Content-Type: application/merge-patch+json' \
  --data '{"metadata":{"labels":{"stolen":"yes"}}}' "https://127.0.0.1:$SPORT/api/v1/nodes/e2e-tls-other")
expect_eq "$code" "403" "another Node"
expect_contains "$(cat "$E2E_TMP/body")" "nodes \\\"e2e-tls-other\\\" is forbidden: node \\\"$NODE\\\" is not allowed to modify node \\\"e2e-tls-other\\\"" \
  "NodeRestriction: another Node"
expect_ne "$(kt get pod -n "$NS" theirs -o 'jsonpath={.status.phase}')" "Failed" "the other pod's phase"
expect_eq "$(kt get node e2e-tls-other -o 'jsonpath={.metadata.labels.stolen}')" "" "the other Node's labels"
# Its own Node: labels as kubelet may, not restricted ones, no taint changes.
expect_ok nk label node "$NODE" team=gpu
expect_fail nk label node "$NODE" node-restriction.kubernetes.io/trusted=yes
expect_contains "$OUT" "nodes \"$NODE\" is forbidden: is not allowed to modify labels: node-restriction.kubernetes.io/trusted" \
  "NodeRestriction: restricted label"
expect_fail nk taint node "$NODE" dedicated=me:NoSchedule
expect_contains "$OUT" "node \"$NODE\" is not allowed to modify taints" "NodeRestriction: taints"
expect_eq "$(kt get node "$NODE" -o 'jsonpath={.spec.taints}')" "" "its taints"

# Without credentials: 401 from the server (kube-apiserver's body; a wrong
# token too), and from the log port anything but a client certificate of
# its CA is 401. (With the default --anonymous-auth=true the server answers
# 403 for system:anonymous, as Kubernetes: test_rbac.sh.)
for path in "/api/v1/namespaces/$NS/pods" /healthz; do
  code=$(curl -s -o "$E2E_TMP/body" -w '%{http_code}' --cacert "$PKI/ca.crt" "https://127.0.0.1:$SPORT$path")
  expect_eq "$code" "401" "no credentials: $path"
  expect_contains "$(cat "$E2E_TMP/body")" '"reason":"Unauthorized"' "401 body"
done
code=$(curl -s -o "$E2E_TMP/body" -w '%{http_code}' --cacert "$PKI/ca.crt" -H "Authorization: Bearer not-a-token" \
  "https://127.0.0.1:$SPORT/api/v1/namespaces/$NS/pods")
expect_eq "$code" "401" "a wrong token"
code=$(curl -sk -o "$E2E_TMP/body" -w '%{http_code}' "https://127.0.0.1:$APORT/containerLogs/$NS/mine/main")
expect_eq "$code" "401" "log port without a client certificate"
code=$(curl -sk -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(cat "$TOKEN_FILE")" \
  "https://127.0.0.1:$APORT/containerLogs/$NS/mine/main")
expect_eq "$code" "401" "log port with the node's bearer token"

# An agent that does not trust the CA cannot join (its log port's client CA
# given, so it gets as far as connecting).
expect_fail timeout 20 "$BIN_DIR/batchd" agent --server "https://127.0.0.1:$SPORT" \
  --node-name e2e-tls-rogue --data-dir "$E2E_TMP/rogue" --log-port 0 --client-ca-file "$PKI/ca.crt"
expect_contains "$OUT" "certificate verify failed" "agent without the CA"
# Without any CA, its log port could verify no client: refused at start.
expect_fail timeout 20 "$BIN_DIR/batchd" agent --server "https://127.0.0.1:$SPORT" \
  --node-name e2e-tls-rogue --data-dir "$E2E_TMP/rogue2" --log-port 0
expect_contains "$OUT" "the log port requires client certificates" "agent without a client CA"

# Plain HTTP beyond loopback is refused at start ...
expect_fail timeout 20 "$BIN_DIR/batchd" server --listen "0.0.0.0:$(free_port)" \
  --data-dir "$E2E_TMP/refused" --store memory --no-local-node --serve-https never
expect_contains "$OUT" "refusing to serve plain HTTP on 0.0.0.0" "plain HTTP beyond loopback"
# ... and by default a wildcard listener serves HTTPS with a generated CA.
WPORT=$(free_port)
"$BIN_DIR/batchd" server --listen "0.0.0.0:$WPORT" --data-dir "$E2E_TMP/wild" --store memory \
  --no-local-node >"$E2E_TMP/wild.log" 2>&1 &
PIDS+=($!)
wait_for 30 curl -sf --cacert "$E2E_TMP/wild/pki/ca.crt" "https://127.0.0.1:$WPORT/healthz" ||
  fail "wildcard listener is not serving https: $(tail -3 "$E2E_TMP/wild.log")"
expect_fail curl -sS -m 5 "http://127.0.0.1:$WPORT/healthz"

# batchctl reads a kubeconfig as kubectl does (its current context's server,
# CA and credentials): with the one `batchctl kubeconfig` writes it reaches
# the authenticating server; with the CA alone it is anonymous and refused.
KC="$E2E_TMP/wild.kubeconfig"
"$BIN_DIR/batchctl" kubeconfig --server "https://127.0.0.1:$WPORT" --data-dir "$E2E_TMP/wild" >"$KC" ||
  fail "batchctl kubeconfig exited $?"
expect_ok env KUBECONFIG="$KC" "$BIN_DIR/batchctl" list clusterqueues
expect_ok env -u KUBECONFIG HOME="$E2E_TMP" "$BIN_DIR/batchctl" --kubeconfig "$KC" list clusterqueues
"$BIN_DIR/batchctl" kubeconfig --server "https://127.0.0.1:$WPORT" --data-dir "$E2E_TMP/none" \
  --certificate-authority "$E2E_TMP/wild/pki/ca.crt" >"$E2E_TMP/anon.kubeconfig"
expect_fail env KUBECONFIG="$E2E_TMP/anon.kubeconfig" "$BIN_DIR/batchctl" list clusterqueues
expect_contains "$OUT" "system:anonymous" "batchctl without credentials"
# --server alone names no CA: the server's certificate is not trusted.
expect_fail env -u KUBECONFIG HOME="$E2E_TMP" "$BIN_DIR/batchctl" --server "https://127.0.0.1:$WPORT" list clusterqueues
expect_contains "$OUT" "certificate verify failed" "batchctl --server without a CA"
