# e2e-parallel
# A JobSet whose workers reach their leader by its hostname over TCP, on the
# local node and on a remote `batchd agent`: leader `net-leader-0-0` on the
# local node serves one line to each of 4 workers (2 local, 2 on the remote
# agent, which is tainted so only this test's pods land there); the workers
# start once the leader's Job is Ready (dependsOn), resolve
# `net-leader-0-0.net` through the JobSet's headless Service with the ordinary
# resolver (getent, Python's socket) and connect; the leader resolves the
# remote workers back. The JobSet completes when every Job has.
source "$(dirname "$0")/lib.sh"
ensure_ns
LOCAL=$(k get nodes -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.annotations.batchd\.io/simulated}{.spec.taints}{"\n"}{end}' |
  awk 'NF == 1 {print $1; exit}')
[[ -n "$LOCAL" ]] || fail "no local node"
LPORT=$(free_port)
REMOTE="jsnet-$NS"
mkdir -p "$E2E_TMP/$REMOTE"
read -ra CREDS <<<"$(node_credentials "$REMOTE")"
"${BIN_DIR:?}/batchd" agent --server "$SERVER" --node-name "$REMOTE" "${CREDS[@]}" \
  --data-dir "$E2E_TMP/$REMOTE" --log-port "$(free_port)" --labels "e2e-jsnet=$REMOTE" \
  --taints "e2e-jsnet=$REMOTE:NoSchedule" >"$E2E_TMP/$REMOTE.log" 2>&1 &
APID=$!
cleanup() {
  k delete jobset net -n "$NS" --wait=false >/dev/null 2>&1 || true
  k delete pods --all -n "$NS" --grace-period=0 --wait=false >/dev/null 2>&1 || true
  kill -9 "$APID" 2>/dev/null || true
  kill_under "$E2E_TMP"
  k delete node "$REMOTE" --wait=false >/dev/null 2>&1 || true
}
trap cleanup EXIT
node_ready() { [[ $(k get node "$1" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}') == True ]]; }
poll 30 node_ready "$REMOTE" || fail "$REMOTE not Ready: $(tail -n 3 "$E2E_TMP/$REMOTE.log")"

# worker_job NAME NODE: a replicated job of 2 workers pinned to NODE.
worker_job() {
  cat <<YAML
  - name: $1
    dependsOn: [{name: leader, status: Ready}]
    template:
      spec:
        completions: 2
        parallelism: 2
        backoffLimit: 0
        template:
          spec:
            restartPolicy: Never
            terminationGracePeriodSeconds: 1
            nodeSelector: {kubernetes.io/hostname: $2}
            tolerations: [{key: e2e-jsnet, operator: Exists}]
            containers:
            - name: main
              image: python3
              command:
              - python3
              - -c
              - |
                import socket, subprocess, time
                print("hostname=" + socket.gethostname())
                print(subprocess.run(["getent", "hosts", "net-leader-0-0.net"],
                                     capture_output=True, text=True).stdout.strip())
                for _ in range(600):
                    try:
                        c = socket.create_connection(("net-leader-0-0.net", $LPORT))
                        break
                    except OSError:
                        time.sleep(0.1)
                c.sendall(socket.gethostname().encode() + b"\n")
                print("got=" + c.makefile().readline().strip())
YAML
}
{
  cat <<YAML
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: net, namespace: $NS}
spec:
  replicatedJobs:
  - name: leader
    template:
      spec:
        template:
          spec:
            restartPolicy: Never
            terminationGracePeriodSeconds: 1
            nodeSelector: {kubernetes.io/hostname: $LOCAL}
            containers:
            - name: main
              image: python3
              command:
              - python3
              - -c
              - |
                import socket, time
                def resolve(name):  # the hosts file learns a peer once its pod is ready
                    for _ in range(300):
                        try:
                            return socket.gethostbyname(name)
                        except OSError:
                            time.sleep(0.1)
                    return "unresolved"
                s = socket.socket()
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind(("0.0.0.0", $LPORT))
                s.listen(8)
                for _ in range(4):
                    c, _ = s.accept()
                    peer = c.makefile().readline().strip()
                    # Resolved before the reply, while the worker waits for
                    # it: a worker that has exited (Succeeded) is no longer
                    # an address of the Service, as in Kubernetes.
                    addr = resolve(peer + ".net")
                    c.sendall(("hello " + peer + " from " + socket.gethostname() + "\n").encode())
                    c.close()
                    print("served " + peer + " at " + addr)
YAML
  worker_job local "$LOCAL"
  worker_job remote "$REMOTE"
} | k create -f - >/dev/null

completed() { [[ $(k get jobset net -n "$NS" -o 'jsonpath={.status.terminalState}') == Completed ]]; }
poll 150 completed || fail "JobSet not Completed: $(k get jobset net -n "$NS" --no-headers 2>&1); pods: $(k get pods -n "$NS" -o wide --no-headers 2>&1 | head -c 600)"
expect_eq "$(k get svc net -n "$NS" -o 'jsonpath={.spec.clusterIP}')" "None" "the JobSet's headless Service"
for w in local-0-0 local-0-1 remote-0-0 remote-0-1; do
  pod=$(k get pods -n "$NS" -o "jsonpath={.items[?(@.spec.hostname==\"net-$w\")].metadata.name}")
  [[ -n $pod ]] || fail "no pod with hostname net-$w"
  logs=$(k logs -n "$NS" "pod/$pod")
  expect_contains "$logs" "hostname=net-$w" "worker $w's hostname"
  expect_contains "$logs" "got=hello net-$w from net-leader-0-0" "worker $w reached the leader by name"
  node=$(k get pod -n "$NS" "$pod" -o 'jsonpath={.spec.nodeName}')
  case $w in
    local-*) expect_eq "$node" "$LOCAL" "worker $w's node" ;;
    remote-*) expect_eq "$node" "$REMOTE" "worker $w's node" ;;
  esac
done
leader=$(k get pods -n "$NS" -l "jobset.sigs.k8s.io/replicatedjob-name=leader" -o name | head -n 1)
leader_logs=$(k logs -n "$NS" "$leader")
for w in local-0-0 local-0-1 remote-0-0 remote-0-1; do
  expect_match "$leader_logs" "^served net-$w at [0-9.]+$" "the leader resolved worker $w"
done
