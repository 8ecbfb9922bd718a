# The dashboard (/ui/, docs/dashboard.md) in Debian's headless Chromium,
# driven over the DevTools protocol by dashboard_check.py: it loads, shows a
# ClusterQueue's usage, shows an admission within a second without
# reloading, renders every view, shows not-found pages, the login page for a
# refused token and a read-only view for a read-only token, and fits a
# phone-width screen; on a server without the loopback admin it starts at the
# login form and works after logging in with the admin token. Skips (passes, saying so) only when no chromium can
# be found: scripts/install-deps.sh installs it.
source "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)

if ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null; then
  echo "SKIP: chromium is not installed (scripts/install-deps.sh installs Debian's chromium); the dashboard browser test did not run" >&2
  exit 0
fi

# The files: served without a token (the login page must load), with a CSP.
hdrs=$(curl -s -D - -o /dev/null "$SERVER/ui/")
expect_contains "$hdrs" "200" "GET /ui/"
expect_contains "$hdrs" "Content-Security-Policy" "GET /ui/ headers"
expect_eq "$(curl -s -o /dev/null -w '%{http_code}' "$SERVER/ui/no-such-file")" "404" "GET /ui/no-such-file"
expect_contains "$(curl -s "$SERVER/ui/no-such-file")" "Not found" "404 page"
expect_eq "$(curl -s -o /dev/null -w '%{http_code} %{redirect_url}' "$SERVER/ui")" "301 $SERVER/ui/" "GET /ui"

ensure_ns
NODE="node-$NS"
CQ="$NS-cq"
sim_node "$NODE" 8 32Gi
flavor "$NS-flavor" "$NODE"
cluster_queue "$CQ" "$NS-flavor" 4 16Gi
local_queue "$NS" lq "$CQ"
queued_job first lq 2 1h
cpu_used() { [[ $(k get cq "$CQ" -o jsonpath='{.status.flavorsReservation[0].resources[?(@.name=="cpu")].total}') == "$1" ]]; }
poll 40 cpu_used 2 || fail "the first job was not admitted (cq cpu reservation not 2)"

# A user who may only read: get/list/watch on what the dashboard shows.
cat <<YAML | k apply -f - >/dev/null
apiVersion: v1
kind: ServiceAccount
metadata: {name: viewer, namespace: $NS}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: $NS-viewer}
rules:
- apiGroups: ["kueue.x-k8s.io", "batch", "jobset.x-k8s.io"]
  resources: ["*"]
  verbs: ["get", "list", "watch"]
- apiGroups: [""]
  resources: ["pods", "pods/log", "nodes", "events"]
  verbs: ["get", "list", "watch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: $NS-viewer}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: $NS-viewer}
subjects: [{kind: ServiceAccount, name: viewer, namespace: $NS}]
YAML
RO_TOKEN=$(k create token viewer -n "$NS" --duration 20m)
[[ -n $RO_TOKEN ]] || fail "kubectl create token gave no token"

# The second job, created by the check while the page watches.
cat >"$E2E_TMP/second.yaml" <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: second, namespace: $NS, labels: {kueue.x-k8s.io/queue-name: lq}}
spec:
  template:
    metadata: {annotations: {batchd.io/sim-duration: 1h}}
    spec:
      restartPolicy: Never
      containers:
      - {name: main, image: busybox, command: ["true"], resources: {requests: {cpu: "2", memory: 100Mi}}}
YAML
ADMIT_CMD="kubectl -s '$SERVER' --cache-dir '$E2E_CACHE' --request-timeout=30s create -f '$E2E_TMP/second.yaml' >/dev/null"

# A second server without --allow-loopback-admin (memory store): there the
# page starts at the login form and works with the admin's token.
APORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
"$BIN_DIR/batchd" server --listen "127.0.0.1:$APORT" --data-dir "$E2E_TMP/authn" --store memory --no-local-node \
  >"$E2E_TMP/authn-server.log" 2>&1 &
APID=$!
trap 'kill $APID 2>/dev/null || true; wait $APID 2>/dev/null || true' EXIT
wait_for 30 curl -sf "http://127.0.0.1:$APORT/healthz" || fail "the second server did not start: $(tail -3 "$E2E_TMP/authn-server.log")"
expect_eq "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$APORT/ui/")" "200" "GET /ui/ without a token"
expect_eq "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$APORT/apis/kueue.x-k8s.io/v1beta2/clusterqueues")" "403" "anonymous list"

out=$(SERVER="$SERVER" CQ="$CQ" NS="$NS" ADMIT_CMD="$ADMIT_CMD" RO_TOKEN="$RO_TOKEN" \
      AUTHN_SERVER="http://127.0.0.1:$APORT" ADMIN_TOKEN="$(cat "$E2E_TMP/authn/admin.token")" \
      timeout 150 python3 "$HERE/dashboard_check.py" 2>&1) || {
  echo "$out" >&2
  fail "$(grep -m1 '^FAIL: ' <<<"$out" | sed 's/^FAIL: //' || true)${out:+ }$(grep -q '^FAIL: ' <<<"$out" || tail -n 3 <<<"$out")"
}
echo "$out"
k delete job -n "$NS" first second --cascade=background >/dev/null
