# e2e-parallel
# Peer names across node agents: a remote `batchd agent` (its own node,
# tainted so only this test's pods land there) runs a worker that resolves
# and connects to a leader on the local node by name, and the leader's
# hosts file learns the remote worker's name. A second agent with
# BATCHD_POD_ISOLATION=off (what a non-root agent does) still writes the
# pod's hosts file, names it in $BATCHD_HOSTS_FILE and warns once.
source "$(dirname "$0")/lib.sh"
ensure_ns
# The server's own node: neither simulated nor tainted (remote test agents are).
LOCAL=$(k get nodes -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.annotations.batchd\.io/simulated}{.spec.taints}{"\n"}{end}' |
  awk 'NF == 1 {print $1; exit}')
[[ -n "$LOCAL" ]] || fail "no local node"
LPORT=$(free_port)
APIDS=()
start_agent() {  # start_agent NODE [ENV...]
  local node=$1; shift
  mkdir -p "$E2E_TMP/$node"
  local creds
  read -ra creds <<<"$(node_credentials "$node")"
  env "$@" "${BIN_DIR:?}/batchd" agent --server "$SERVER" --node-name "$node" "${creds[@]}" \
    --data-dir "$E2E_TMP/$node" --log-port "$(free_port)" --labels "e2e-net=$node" \
    --taints "e2e-net=$node:NoSchedule" >"$E2E_TMP/$node.log" 2>&1 &
  APIDS+=($!)
}
cleanup() {
  k delete pods --all -n "$NS" --grace-period=0 --wait=false >/dev/null 2>&1 || true
  for p in "${APIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  kill_under "$E2E_TMP"
  k delete node net-iso net-plain --wait=false >/dev/null 2>&1 || true
}
trap cleanup EXIT
start_agent net-iso
start_agent net-plain BATCHD_POD_ISOLATION=off
node_ready() { [[ $(k get node "$1" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}') == True ]]; }
poll 30 node_ready net-iso || fail "net-iso not Ready: $(tail -n 3 "$E2E_TMP/net-iso.log")"
poll 30 node_ready net-plain || fail "net-plain not Ready: $(tail -n 3 "$E2E_TMP/net-plain.log")"

# pod_yaml NAME NODE SCRIPT: a pod of Service "ring" pinned to NODE.
pod_yaml() {
  cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: $NS, labels: {app: ring}}
spec:
  hostname: $1
  subdomain: ring
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  nodeSelector: {kubernetes.io/hostname: $2}
  tolerations: [{key: e2e-net, operator: Exists}]
  containers:
  - name: main
    image: bash
    command: ["bash", "-c"]
    args:
    - |
$(sed 's/^/      /' <<<"$3")
YAML
}
{
  cat <<YAML
apiVersion: v1
kind: Service
metadata: {name: ring, namespace: $NS}
spec:
  clusterIP: None
  selector: {app: ring}
---
YAML
  # The leader waits until the remote worker's name resolves (its hosts file
  # is rewritten in place), then serves one greeting.
  pod_yaml leader "$LOCAL" "for i in \$(seq 300); do getent hosts worker.ring >/dev/null && break; sleep 0.2; done
echo \"worker=\$(getent hosts worker.ring | awk '{print \$1}')\"
python3 -c \"
import socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('0.0.0.0', $LPORT))
s.listen(4)
c, _ = s.accept()
c.sendall(b'hello across agents')
c.close()
\""
  echo ---
  pod_yaml worker net-iso "echo \"hostname=\$(hostname)\"
for i in \$(seq 300); do getent hosts leader.ring >/dev/null && break; sleep 0.2; done
python3 -c \"
import socket, time
for i in range(300):
    try:
        print(socket.create_connection(('leader.ring', $LPORT)).recv(100).decode())
        break
    except OSError:
        time.sleep(0.2)
\""
  echo ---
  pod_yaml plain net-plain "for i in \$(seq 300); do grep -q leader.ring \"\$BATCHD_HOSTS_FILE\" && break; sleep 0.2; done
echo \"hosts-file=\$BATCHD_HOSTS_FILE\"
grep -c 'leader.ring' \"\$BATCHD_HOSTS_FILE\""
} | k apply -f - >/dev/null
phase_is() { [[ $(jp pod "$1" '{.status.phase}') == "$2" ]]; }
for p in worker leader plain; do
  poll 90 phase_is "$p" Succeeded ||
    fail "$p not Succeeded: $(jp pod "$p" '{.status.phase} {.spec.nodeName}'); logs: $(k logs -n "$NS" "$p" 2>&1 | head -c 300)"
done
expect_eq "$(jp pod worker '{.spec.nodeName}')" "net-iso" "worker's node"
expect_eq "$(jp pod leader '{.spec.nodeName}')" "$LOCAL" "leader's node"
logs=$(k logs -n "$NS" worker)
expect_contains "$logs" "hostname=worker" "remote pod's hostname"
expect_contains "$logs" "hello across agents" "remote worker reached the local leader by name"
expect_match "$(k logs -n "$NS" leader)" "^worker=[0-9.]+$" "the local leader resolved the remote worker"
logs=$(k logs -n "$NS" plain)
expect_match "$logs" "hosts-file=$E2E_TMP/net-plain/pods/.*/hosts" "BATCHD_HOSTS_FILE"
expect_match "$logs" "^1$" "the unmounted hosts file lists the leader"
warned() { k get events -n "$NS" --field-selector involvedObject.name=plain -o jsonpath='{.items[*].reason}' | grep -q PeerNamesNotResolvable; }
poll 20 warned || fail "no PeerNamesNotResolvable event for the non-isolated pod"
