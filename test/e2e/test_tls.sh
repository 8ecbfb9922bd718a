#!/usr/bin/env bash
# TLS serving (issue #12): the generated CA and serving certificate, kubectl
# with --certificate-authority (and a client certificate signed by the CA),
# broken handshakes and garbage TLS records that leave the server serving,
# an agent joining over https, and the refusal of plain HTTP beyond loopback.
source "${E2E_LIB:?}"

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
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
"${BIN_DIR:?}/batchd" server --listen "127.0.0.1:$SPORT" --allow-loopback-admin --data-dir "$DATA" --store memory \
  --no-local-node --serve-https always --tls-san batchd.e2e.test >"$E2E_TMP/server.log" 2>&1 &
SPID=$!
PIDS+=("$SPID")
PKI="$DATA/pki"
wait_for 30 curl -sf --cacert "$PKI/ca.crt" "https://127.0.0.1:$SPORT/healthz" ||
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

# An agent joins over https, verifying the server with the CA.
APORT=$(free_port)
"$BIN_DIR/batchd" agent --server "https://127.0.0.1:$SPORT" --certificate-authority "$PKI/ca.crt" \
  --node-name e2e-tls-node --data-dir "$E2E_TMP/agent" --log-port "$APORT" \
  >"$E2E_TMP/agent.log" 2>&1 &
PIDS+=($!)
wait_for 30 kt get node e2e-tls-node || fail "agent did not register: $(tail -3 "$E2E_TMP/agent.log")"
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
