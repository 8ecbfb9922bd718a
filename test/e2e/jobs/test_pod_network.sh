# e2e-parallel
# Pod names and volumes on the local node (the agent runs as root here):
# a headless Service and two pods with hostname + subdomain; the worker
# resolves the leader with getent (short, <host>.<svc> and the FQDN) and
# reads a greeting from it over TCP by name; `hostname` prints the pod's
# host name; kubectl shows the Service and its EndpointSlice. Then volumes:
# an emptyDir written by an init container and read by the main one, a
# read-only hostPath, a persistentVolumeClaim directory that outlives its pod,
# and a volume type batchd does not provide refused at create.
source "$(dirname "$0")/lib.sh"
ensure_ns
LPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
cleanup() { k delete pods --all -n "$NS" --grace-period=0 --wait=false >/dev/null 2>&1 || true; }
trap cleanup EXIT

cat <<YAML | k apply -f - >/dev/null
apiVersion: v1
kind: Service
metadata: {name: peers, namespace: $NS}
spec:
  clusterIP: None
  selector: {app: peers}
  ports: [{name: rpc, port: $LPORT}]
---
apiVersion: v1
kind: Pod
metadata: {name: leader, namespace: $NS, labels: {app: peers}}
spec:
  hostname: leader
  subdomain: peers
  restartPolicy: Never
  containers:
  - name: main
    image: python
    command: ["python3", "-c"]
    args:
    - |
      import socket
      s = socket.socket()
      s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
      s.bind(("0.0.0.0", $LPORT))
      s.listen(4)
      c, _ = s.accept()
      c.sendall(("hello from " + socket.gethostname() + "\n").encode())
      c.close()
---
apiVersion: v1
kind: Pod
metadata: {name: worker, namespace: $NS, labels: {app: peers}}
spec:
  hostname: worker
  subdomain: peers
  restartPolicy: Never
  containers:
  - name: main
    image: bash
    command: ["bash", "-c"]
    args:
    - |
      echo "hostname=\$(hostname)"
      for i in \$(seq 150); do getent hosts leader.peers >/dev/null && break; sleep 0.2; done
      echo "short=\$(getent hosts leader | awk '{print \$1}')"
      echo "sub=\$(getent hosts leader.peers | awk '{print \$1}')"
      echo "fqdn=\$(getent hosts leader.peers.$NS.svc.cluster.local | awk '{print \$1}')"
      echo "self=\$(getent hosts worker.peers | awk '{print \$1}')"
      python3 -c "
      import socket, time
      for i in range(150):
          try:
              s = socket.create_connection(('leader.peers', $LPORT))
              print(s.recv(100).decode().strip())
              break
          except OSError:
              time.sleep(0.2)
      "
YAML
phase_is() { [[ $(jp pod "$1" '{.status.phase}') == "$2" ]]; }
poll 60 phase_is worker Succeeded || fail "worker not Succeeded: $(k get pod -n "$NS" worker -o jsonpath='{.status}' | head -c 300); logs: $(k logs -n "$NS" worker 2>&1 | head -c 300)"
poll 30 phase_is leader Succeeded || fail "leader not Succeeded: $(k logs -n "$NS" leader 2>&1 | head -c 300)"
logs=$(k logs -n "$NS" worker)
IP=$(jp pod leader '{.status.hostIP}')
expect_eq "$(jp pod leader '{.status.podIP}')" "$IP" "podIP is the node's address"
expect_contains "$logs" "hostname=worker" "worker's hostname"
expect_contains "$logs" "short=$IP" "short name"
expect_contains "$logs" "sub=$IP" "host.subdomain"
expect_contains "$logs" "fqdn=$IP" "FQDN"
expect_contains "$logs" "self=$IP" "own name"
expect_contains "$logs" "hello from leader" "greeting over TCP by name"

# kubectl shows the Service and its slice; a running pod is listed in it.
cat <<YAML | k apply -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: sleeper, namespace: $NS, labels: {app: peers}}
spec:
  hostname: sleeper
  subdomain: peers
  terminationGracePeriodSeconds: 1
  containers: [{name: main, image: busybox, command: ["sleep", "300"]}]
YAML
listed() { [[ $(k get endpointslices -n "$NS" peers-0 -o jsonpath='{.endpoints[*].hostname}') == sleeper ]]; }
poll 30 listed || fail "sleeper not in the slice: $(k get endpointslices -n "$NS" peers-0 -o json | head -c 400)"
expect_ok k get svc,endpointslices -n "$NS"
expect_match "$OUT" "^service/peers +ClusterIP +None +<none> +$LPORT/TCP " "svc row"
expect_match "$OUT" "^endpointslice.discovery.k8s.io/peers-0 +IPv4 +$LPORT +$IP " "endpointslice row"
expect_eq "$(k get endpointslices -n "$NS" peers-0 -o jsonpath='{.metadata.labels.endpointslice\.kubernetes\.io/managed-by}')" \
  "endpointslice-controller.k8s.io" "managed-by label"
expect_fail k create service clusterip vip -n "$NS" --tcp=80:80
expect_contains "$OUT" "spec.clusterIP: Forbidden" "a Service with a virtual IP is refused"

# Volumes. Mount paths under the test's scratch dir: they are created on
# the host (empty) and mounted over in the pod's own mount namespace.
M="$E2E_TMP/mnt"
mkdir -p "$E2E_TMP/host"
echo from-host >"$E2E_TMP/host/in.txt"
cat <<YAML | k apply -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: vols, namespace: $NS}
spec:
  restartPolicy: Never
  volumes:
  - {name: shared, emptyDir: {}}
  - {name: host, hostPath: {path: "$E2E_TMP/host", type: Directory}}
  - {name: ckpt, persistentVolumeClaim: {claimName: ckpt}}
  initContainers:
  - name: writer
    image: busybox
    command: ["sh", "-c", "echo written-by-init > $M/work/msg && echo step-1 > $M/ckpt/last"]
    volumeMounts: [{name: shared, mountPath: "$M/work"}, {name: ckpt, mountPath: "$M/ckpt"}]
  containers:
  - name: main
    image: busybox
    command: ["sh", "-c", "cat $M/work/msg; cat $M/in/in.txt; touch $M/in/x 2>/dev/null || echo read-only; hostname"]
    volumeMounts:
    - {name: shared, mountPath: "$M/work"}
    - {name: host, mountPath: "$M/in", readOnly: true}
YAML
poll 60 phase_is vols Succeeded || fail "vols not Succeeded: $(k get pod -n "$NS" vols -o jsonpath='{.status}' | head -c 400)"
logs=$(k logs -n "$NS" vols -c main)
expect_contains "$logs" "written-by-init" "emptyDir shared by the init container"
expect_contains "$logs" "from-host" "hostPath"
expect_contains "$logs" "read-only" "readOnly mount"
expect_contains "$logs" "vols" "hostname"
[[ ! -e "$E2E_TMP/host/x" ]] || fail "a readOnly hostPath was written"
[[ -z $(ls -A "$M/work") ]] || fail "the emptyDir leaked onto the host mount point: $(ls "$M/work")"
# The claim's directory outlives the pod: a second pod reads it.
cat <<YAML | k apply -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: reader, namespace: $NS}
spec:
  restartPolicy: Never
  volumes: [{name: ckpt, persistentVolumeClaim: {claimName: ckpt, readOnly: true}}]
  containers:
  - name: main
    image: busybox
    command: ["cat", "$M/ckpt/last"]
    volumeMounts: [{name: ckpt, mountPath: "$M/ckpt"}]
YAML
poll 60 phase_is reader Succeeded || fail "reader not Succeeded: $(k logs -n "$NS" reader 2>&1 | head -c 300)"
expect_eq "$(k logs -n "$NS" reader)" "step-1" "claim contents across pods"

# Volume types batchd does not provide are refused, not ignored.
expect_fail k apply -f - <<YAML
apiVersion: v1
kind: Pod
metadata: {name: cm, namespace: $NS}
spec:
  volumes: [{name: cfg, nfs: {server: nfs.example.com, path: /export}}]
  containers: [{name: main, image: busybox, command: ["true"]}]
YAML
expect_contains "$OUT" "spec.volumes[0].nfs: Forbidden" "nfs volume refused"
