# Authentication and RBAC with the real kubectl, on a server of its own (no
# --allow-loopback-admin, a token file): two users in two namespaces, a
# view-only user, anonymous requests, a ServiceAccount token from
# `kubectl create token`, `kubectl auth can-i [--list]` and `auth whoami`,
# escalation prevention, node credentials (NodeRestriction), the 401/403
# counts in /metrics and the audit log.
# e2e-timeout: 240
source "$E2E_LIB"
BATCHD="${BIN_DIR:?}/batchd"
DATA="$E2E_TMP/rbac-data"
LOG="$E2E_TMP/rbac-server.log"
AUDIT="$E2E_TMP/audit.log"
mkdir -p "$DATA"
cat >"$E2E_TMP/tokens.csv" <<'CSV'
alice-token,alice,1001,"team-a,batch-users"
bob-token,bob,1002,team-b
viewer-token,vera,1003
CSV
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
SERVER="http://127.0.0.1:$PORT"
"$BATCHD" server --listen "127.0.0.1:$PORT" --data-dir "$DATA" --store memory --no-local-node \
  --token-auth-file "$E2E_TMP/tokens.csv" --audit-log-path "$AUDIT" >>"$LOG" 2>&1 &
PID=$!
trap 'kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null || true' EXIT
deadline=$((SECONDS + 30))
until [[ $(curl -s -m 2 "$SERVER/healthz" 2>/dev/null) == ok ]]; do
  kill -0 "$PID" 2>/dev/null || fail "server exited: $(tail -n 3 "$LOG" | tr '\n' ' ')"
  ((SECONDS < deadline)) || fail "server not healthy within 30s"
  sleep 0.2
done

ADMIN_TOKEN=$(cat "$DATA/admin.token")
[[ -n "$ADMIN_TOKEN" ]] || fail "no admin token in $DATA/admin.token"

# kubectl (client-go) sends credentials only over TLS: until the server
# serves HTTPS itself, a TLS-terminating forwarder (python's ssl module, a
# self-signed certificate for 127.0.0.1) stands in front of it for kubectl.
# curl talks to the plain port with its own Authorization headers.
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$E2E_TMP/tls.key" -out "$E2E_TMP/tls.crt" \
  -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1 ||
  fail "openssl cannot make a test certificate"
python3 - "$E2E_TMP/tls.crt" "$E2E_TMP/tls.key" "$E2E_TMP/tls.port" "$PORT" <<'PY' &
import socket, ssl, sys, threading
cert, key, port_file, backend = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", 0))
srv.listen(64)
open(port_file + ".tmp", "w").write(str(srv.getsockname()[1]))
import os; os.rename(port_file + ".tmp", port_file)
def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    finally:
        for s in (a, b):
            try:
                s.close()
            except OSError:
                pass
def handle(c):
    try:
        t = ctx.wrap_socket(c, server_side=True)
        u = socket.create_connection(("127.0.0.1", backend))
    except (OSError, ssl.SSLError):
        c.close()
        return
    threading.Thread(target=pipe, args=(t, u), daemon=True).start()
    pipe(u, t)
while True:
    c, _ = srv.accept()
    threading.Thread(target=handle, args=(c,), daemon=True).start()
PY
PROXY_PID=$!
trap 'kill "$PID" "$PROXY_PID" 2>/dev/null; wait "$PID" "$PROXY_PID" 2>/dev/null || true' EXIT
for _ in $(seq 100); do [[ -s "$E2E_TMP/tls.port" ]] && break; sleep 0.1; done
[[ -s "$E2E_TMP/tls.port" ]] || fail "the TLS forwarder did not start"
TLS_SERVER="https://127.0.0.1:$(cat "$E2E_TMP/tls.port")"

as() {  # as TOKEN kubectl-args...
  local t=$1; shift
  kubectl -s "$TLS_SERVER" --certificate-authority "$E2E_TMP/tls.crt" --token "$t" \
    --cache-dir "$E2E_CACHE" --request-timeout=30s "$@"
}
admin() { as "$ADMIN_TOKEN" "$@"; }

# Anonymous: health is public, everything else is refused as Kubernetes does.
expect_eq "$(curl -s "$SERVER/healthz")" "ok" "anonymous /healthz"
code=$(curl -s -o "$E2E_TMP/anon.json" -w '%{http_code}' "$SERVER/api/v1/namespaces/default/pods")
expect_eq "$code" "403" "anonymous list pods"
expect_contains "$(cat "$E2E_TMP/anon.json")" 'pods is forbidden: User \"system:anonymous\" cannot list resource \"pods\" in API group \"\" in the namespace \"default\"' "anonymous 403 body"
code=$(curl -s -o /dev/null -w '%{http_code}' "$SERVER/apis")
expect_eq "$code" "403" "anonymous discovery"
# A wrong token is 401 with Kubernetes' body, and kubectl says so.
code=$(curl -s -o "$E2E_TMP/bad.json" -w '%{http_code}' -H 'Authorization: Bearer nope' "$SERVER/api/v1/namespaces")
expect_eq "$code" "401" "bad token"
python3 - "$E2E_TMP/bad.json" <<'PY' || fail "401 body: $(cat "$E2E_TMP/bad.json")"
import json, sys
assert json.load(open(sys.argv[1])) == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                        "message": "Unauthorized", "reason": "Unauthorized", "code": 401}
PY
expect_fail as nope get namespaces
expect_contains "$OUT" "error: You must be logged in to the server" "kubectl with a bad token"

# The admin sets up two namespaces and RoleBindings.
admin create namespace team-a >/dev/null
admin create namespace team-b >/dev/null
cat <<YAML | admin apply -f - >/dev/null
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: alice-admin, namespace: team-a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: admin}
subjects: [{kind: User, name: alice, apiGroup: rbac.authorization.k8s.io}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: bob-edit, namespace: team-b}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: edit}
subjects: [{kind: User, name: bob, apiGroup: rbac.authorization.k8s.io}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: vera-view, namespace: team-a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects: [{kind: User, name: vera, apiGroup: rbac.authorization.k8s.io}]
YAML
expect_ok admin get rolebindings -n team-a
expect_match "$OUT" "alice-admin +ClusterRole/admin" "kubectl get rolebindings"

job() {  # job NAME NAMESPACE
  printf 'apiVersion: batch/v1\nkind: Job\nmetadata: {name: %s, namespace: %s}\nspec:\n  suspend: true\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: c, image: busybox, command: ["true"]}]\n' "$1" "$2"
}

# alice: can-i agrees with what happens, in both namespaces.
expect_ok as alice-token auth can-i create jobs -n team-a
expect_eq "$OUT" "yes" "alice can-i create jobs in team-a"
job j1 team-a | as alice-token create -f - >/dev/null || fail "alice cannot create a Job in team-a"
expect_fail as alice-token auth can-i create jobs -n team-b
expect_eq "$OUT" "no" "alice can-i create jobs in team-b"
expect_fail as alice-token create -f <(job j2 team-b)
expect_contains "$OUT" 'Error from server (Forbidden): error when creating' "alice create in team-b"
expect_contains "$OUT" 'jobs.batch is forbidden: User "alice" cannot create resource "jobs" in API group "batch" in the namespace "team-b"' "alice create in team-b"
expect_fail as alice-token get jobs -n team-b
expect_contains "$OUT" 'User "alice" cannot list resource "jobs" in API group "batch" in the namespace "team-b"' "alice list team-b"
# bob the reverse.
expect_ok as bob-token get jobs -n team-b
expect_fail as bob-token delete job j1 -n team-a
expect_contains "$OUT" 'jobs.batch "j1" is forbidden: User "bob" cannot' "bob delete in team-a"

# vera views team-a: list yes, delete no, secrets no.
expect_ok as viewer-token get jobs -n team-a
expect_contains "$OUT" "j1" "vera lists jobs"
expect_ok as viewer-token auth can-i list jobs -n team-a
expect_fail as viewer-token auth can-i delete jobs -n team-a
expect_fail as viewer-token delete job j1 -n team-a
expect_contains "$OUT" 'cannot delete resource "jobs" in API group "batch" in the namespace "team-a"' "vera delete"
expect_ok admin get job j1 -n team-a
expect_fail as viewer-token auth can-i get secrets -n team-a

# auth can-i --list and whoami.
expect_ok as alice-token auth can-i --list -n team-a
expect_match "$OUT" "jobs.batch +\[\] +\[\] +\[.*create.*\]" "can-i --list jobs"
expect_contains "$OUT" "selfsubjectaccessreviews.authorization.k8s.io" "can-i --list basic-user"
expect_ok as alice-token auth whoami
expect_match "$OUT" "Username +alice" "whoami"
expect_match "$OUT" "Groups +\[team-a batch-users system:authenticated\]" "whoami groups"
expect_ok as alice-token auth whoami -o jsonpath='{.status.userInfo.username}'
expect_eq "$OUT" "alice" "whoami -o jsonpath"

# Escalation: alice (admin in team-a) may bind edit there, not cluster-admin;
# bob (edit in team-b) may not touch bindings at all.
expect_ok as alice-token create rolebinding carol-edit --clusterrole=edit --user=carol -n team-a
expect_fail as alice-token create rolebinding grab --clusterrole=cluster-admin --user=alice -n team-a
expect_contains "$OUT" 'rolebindings.rbac.authorization.k8s.io "grab" is forbidden: user "alice" (groups=["team-a" "batch-users" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:' "escalation refused"
expect_fail admin get rolebinding grab -n team-a
expect_fail as bob-token create rolebinding grab --clusterrole=view --user=bob -n team-b
expect_contains "$OUT" 'User "bob" cannot create resource "rolebindings" in API group "rbac.authorization.k8s.io" in the namespace "team-b"' "bob bindings"

# A ServiceAccount token from kubectl create token works, and only as RBAC allows.
admin create serviceaccount bot -n team-a >/dev/null
cat <<YAML | admin apply -f - >/dev/null
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: bot-view, namespace: team-a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects: [{kind: ServiceAccount, name: bot}]
YAML
expect_ok admin create token bot -n team-a --duration 20m
SA_TOKEN=$OUT
expect_match "$SA_TOKEN" '^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$' "create token"
expect_ok as "$SA_TOKEN" auth whoami -o jsonpath='{.status.userInfo.username}'
expect_eq "$OUT" "system:serviceaccount:team-a:bot" "SA whoami"
expect_ok as "$SA_TOKEN" get jobs -n team-a
expect_fail as "$SA_TOKEN" get jobs -n team-b
expect_contains "$OUT" 'User "system:serviceaccount:team-a:bot" cannot list resource "jobs"' "SA in team-b"
expect_fail admin create token bot -n team-a --duration 1m
expect_contains "$OUT" "may not specify a duration less than 10 minutes" "short token"
# Deleting the ServiceAccount revokes its tokens.
admin delete serviceaccount bot -n team-a >/dev/null
expect_fail as "$SA_TOKEN" get jobs -n team-a
expect_contains "$OUT" "Unauthorized" "deleted SA token"

# A node credential from `batchctl create node-token`: the node writes its own
# Node, not another's (NodeRestriction).
NODE_TOKEN=$("$BIN_DIR/batchctl" create node-token n1 --data-dir "$DATA")
node_yaml() { printf 'apiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n' "$1"; }
expect_ok as "$NODE_TOKEN" auth whoami -o jsonpath='{.status.userInfo.username}'
expect_eq "$OUT" "system:node:n1" "node whoami"
node_yaml n1 | as "$NODE_TOKEN" create -f - >/dev/null || fail "node n1 cannot register itself"
expect_fail as "$NODE_TOKEN" create -f <(node_yaml n2)
expect_contains "$OUT" 'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"' "node n1 creating n2"
node_yaml n2 | admin create -f - >/dev/null
# A write straight to n2 (kubectl label and patch read the node first,
# which the Node authorizer refuses, below).
code=$(curl -s -o "$E2E_TMP/patch.json" -w '%{http_code}' --cacert "$E2E_TMP/tls.crt" -X PATCH \
  -H "Authorization: Bearer $NODE_TOKEN" -H 'Content-Type: application/merge-patch+json' \
  --data '{"metadata":{"labels":{"x":"y"}}}' "$TLS_SERVER/api/v1/nodes/n2")
expect_eq "$code" "403" "node n1 patching n2"
expect_contains "$(cat "$E2E_TMP/patch.json")" 'node \"n1\" is not allowed to modify node \"n2\"' "node n1 patching n2"
expect_fail as "$NODE_TOKEN" label node n2 x=y
expect_contains "$OUT" "node 'n1' cannot read 'n2', only its own Node object" "node n1 reading n2"
expect_ok as "$NODE_TOKEN" label node n1 x=y

# Refusals are counted by code; the audit log says who did what.
metrics=$(admin get --raw /metrics)
expect_match "$metrics" 'apiserver_request_total\{[^}]*code="401"[^}]*\} [1-9]' "401 counted"
expect_match "$metrics" 'apiserver_request_total\{[^}]*code="403"[^}]*\} [1-9]' "403 counted"
expect_contains "$(cat "$AUDIT")" '"username":"alice"' "audit user"
python3 - "$AUDIT" <<'PY' || fail "audit log events are not as expected"
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1])]
assert all(e["apiVersion"] == "audit.k8s.io/v1" and e["kind"] == "Event" and e["level"] == "Metadata"
           and e["stage"] == "ResponseComplete" for e in evs)
denied = [e for e in evs if e["user"].get("username") == "alice" and e.get("objectRef", {}).get("namespace") == "team-b"
          and e["verb"] == "create"]
assert denied and denied[0]["responseStatus"]["code"] == 403, denied
assert denied[0]["objectRef"]["resource"] == "jobs" and denied[0]["objectRef"]["apiGroup"] == "batch"
assert denied[0]["annotations"]["authorization.k8s.io/decision"] == "forbid"
assert "127.0.0.1" in denied[0]["sourceIPs"]
# No request or response body reaches the log.
text = open(sys.argv[1]).read()
assert "requestObject" not in text and "responseObject" not in text
PY
if grep -qF "$SA_TOKEN" "$AUDIT"; then fail "an issued token is in the audit log"; fi
