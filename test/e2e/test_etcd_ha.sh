# e2e-parallel
# Several servers on one etcd cluster (docs/ha.md), with the real kubectl: a
# local three-member etcd (Debian's etcd-server) on free ports and three
# `batchd server --store etcd` replicas. A Job created through replica A is
# watched completing through replica B; a `batchd agent` given all three
# replicas keeps running and reporting its pod when the one it used is
# killed; replicas elect one leader through
# the Lease kube-system/batchd-controller-manager (short test timings:
# lease 6s, renew 4s, retry 1s); kill -9 of the leader during a stream of
# queued admissions -> another replica leads within 15 s, every Job
# completes exactly once (one pod each) and the ClusterQueue's quota is never
# exceeded (sampled throughout); reads through B at revisions written through
# A wait for B's cache instead of 504; kill -9 of one etcd member changes nothing
# visible; every etcd member stopped -> 503s while reads come from the watch
# caches, then recovery by itself when they return, nothing lost.
# Skipped (passes, saying so) when no etcd binary is installed.
# e2e-timeout: 300
source "$E2E_LIB"
if ! command -v etcd >/dev/null; then
  echo "SKIP: no etcd binary (install etcd-server): the etcd HA test did not run"
  exit 0
fi
BATCHD="${BIN_DIR:?}/batchd"
PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

# --- a three-member etcd cluster --------------------------------------------
CLUSTER="" ENDPOINTS=""
declare -A CPORT PPORT EPID
for m in m1 m2 m3; do
  CPORT[$m]=$(free_port); PPORT[$m]=$(free_port)
  CLUSTER+="${CLUSTER:+,}$m=http://127.0.0.1:${PPORT[$m]}"
  ENDPOINTS+="${ENDPOINTS:+,}http://127.0.0.1:${CPORT[$m]}"
done
start_member() {  # start_member NAME
  local m=$1
  etcd --name "$m" --data-dir "$E2E_TMP/$m.etcd" \
    --listen-client-urls "http://127.0.0.1:${CPORT[$m]}" --advertise-client-urls "http://127.0.0.1:${CPORT[$m]}" \
    --listen-peer-urls "http://127.0.0.1:${PPORT[$m]}" --initial-advertise-peer-urls "http://127.0.0.1:${PPORT[$m]}" \
    --initial-cluster "$CLUSTER" --initial-cluster-token "e2e-$$" --initial-cluster-state new \
    --logger zap --log-outputs "$E2E_TMP/$m.log" >/dev/null 2>&1 &
  EPID[$m]=$!
  PIDS+=("${EPID[$m]}")
}
for m in m1 m2 m3; do start_member "$m"; done
deadline=$((SECONDS + 30))
until ETCDCTL_API=3 etcdctl --endpoints "$ENDPOINTS" endpoint health >/dev/null 2>&1; do
  ((SECONDS < deadline)) || fail "etcd cluster not healthy within 30s: $(tail -n 2 "$E2E_TMP/m1.log")"
  sleep 0.2
done

# --- three batchd replicas --------------------------------------------------
declare -A SPORT SPID
start_replica() {  # start_replica NAME
  local r=$1
  [[ -n "${SPORT[$r]:-}" ]] || SPORT[$r]=$(free_port)
  mkdir -p "$E2E_TMP/$r"
  "$BATCHD" server --listen "127.0.0.1:${SPORT[$r]}" --allow-loopback-admin --data-dir "$E2E_TMP/$r" \
    --no-local-node --store etcd --etcd-servers "$ENDPOINTS" \
    --leader-elect-lease-duration 6s --leader-elect-renew-deadline 4s --leader-elect-retry-period 1s \
    >>"$E2E_TMP/$r.log" 2>&1 &
  SPID[$r]=$!
  PIDS+=("${SPID[$r]}")
}
for r in a b c; do start_replica "$r"; done
for r in a b c; do
  deadline=$((SECONDS + 40))
  until [[ $(curl -s -m 2 "http://127.0.0.1:${SPORT[$r]}/readyz" 2>/dev/null) == ok ]]; do
    kill -0 "${SPID[$r]}" 2>/dev/null || fail "replica $r exited: $(tail -n 3 "$E2E_TMP/$r.log" | tr '\n' ' ')"
    ((SECONDS < deadline)) || fail "replica $r not ready within 40s"
    sleep 0.2
  done
done
kr() {  # kr REPLICA kubectl-args...
  local r=$1; shift
  kubectl -s "http://127.0.0.1:${SPORT[$r]}" --cache-dir "$E2E_CACHE" --request-timeout=30s "$@"
}
# leader: the replica whose log last said it leads.
leader() {
  local r id
  id=$(kr "$1" get lease -n kube-system batchd-controller-manager -o jsonpath='{.spec.holderIdentity}' 2>/dev/null) || return 1
  [[ -n $id ]] || return 1
  for r in a b c; do
    if grep -q "leader election: $id now leads" "$E2E_TMP/$r.log" 2>/dev/null; then echo "$r"; return 0; fi
  done
  return 1
}
deadline=$((SECONDS + 30))
until L=$(leader a); do
  ((SECONDS < deadline)) || fail "no replica leads within 30s"
  sleep 0.5
done
echo "leader: $L"
expect_eq "$(grep -l 'now leads' "$E2E_TMP"/[abc].log | wc -l)" 1 "replicas that ever led"

# --- A writes, B watches ----------------------------------------------------
kr a apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Namespace
metadata: {name: $NS}
---
apiVersion: v1
kind: Node
metadata:
  name: ha-node
  annotations: {batchd.io/simulated: "true"}
  labels: {kubernetes.io/hostname: ha-node}
status:
  capacity: {cpu: "8", memory: 16Gi, pods: "110"}
  allocatable: {cpu: "8", memory: 16Gi, pods: "110"}
  conditions: [{type: Ready, status: "True", reason: KubeletReady}]
YAML
job() {  # job NAME [QUEUE] [DURATION]
  local q=""
  [[ -n "${2:-}" ]] && q="labels: {kueue.x-k8s.io/queue-name: $2}"
  cat <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  namespace: $NS
  $q
spec:
  template:
    metadata:
      annotations: {batchd.io/sim-duration: ${3:-1s}}
    spec:
      restartPolicy: Never
      containers:
      - {name: main, image: busybox, command: ["true"], resources: {requests: {cpu: "1", memory: 100Mi}}}
YAML
}
kr b get jobs -n "$NS" --watch -o 'custom-columns=NAME:.metadata.name,SUCCEEDED:.status.succeeded,RV:.metadata.resourceVersion' \
  >"$E2E_TMP/watch-b.txt" 2>&1 &
WATCH_PID=$!
PIDS+=("$WATCH_PID")
sleep 1
job a-to-b | kr a create -f - >/dev/null
deadline=$((SECONDS + 60))
until grep -qE '^a-to-b +1 ' "$E2E_TMP/watch-b.txt"; do
  ((SECONDS < deadline)) || fail "replica B's watch never saw a-to-b succeed: $(tr '\n' '|' <"$E2E_TMP/watch-b.txt")"
  sleep 0.3
done
kill "$WATCH_PID" 2>/dev/null || true
# Its resourceVersions are etcd revisions, increasing along the watch.
rvs=$(awk '$1=="a-to-b"{print $3}' "$E2E_TMP/watch-b.txt")
expect_eq "$(sort -n <<<"$rvs" | tr '\n' ' ')" "$(tr '\n' ' ' <<<"$rvs")" "RVs in order on B's watch"
etcd_rev=$(ETCDCTL_API=3 etcdctl --endpoints "$ENDPOINTS" endpoint status -w json | python3 -c 'import json,sys; print(max(e["Status"]["header"]["revision"] for e in json.load(sys.stdin)))')
last_rv=$(tail -n 1 <<<"$rvs")
((last_rv <= etcd_rev)) || fail "RV $last_rv above etcd's revision $etcd_rev"
# The same object through C: same resourceVersion.
expect_eq "$(kr c get job a-to-b -n "$NS" -o jsonpath='{.metadata.resourceVersion}')" \
  "$(kr a get job a-to-b -n "$NS" -o jsonpath='{.metadata.resourceVersion}')" "RV through C and A"

# --- reads through B at revisions written through A --------------------------
# Right after a write through A, B's watch cache may not have it yet: a list
# NotOlderThan its resourceVersion waits for B's cache (kube-apiserver: up to
# 3 s) instead of answering 504, an Exact list reads etcd at it, and a watch
# from it sends the next change, not the write itself. A revision nobody
# wrote: after the wait, 504 Timeout with cause ResourceVersionTooLarge and
# Retry-After.
python3 - "${SPORT[a]}" "${SPORT[b]}" "$NS" >"$E2E_TMP/rv-reads.txt" 2>&1 <<'PY' ||
import json, sys, time, urllib.error, urllib.request
a, b, ns = sys.argv[1:4]
def url(port, q=""):
    return f"http://127.0.0.1:{port}/api/v1/namespaces/{ns}/configmaps{q}"
def call(u, body=None):
    r = urllib.request.Request(u, data=None if body is None else json.dumps(body).encode(),
                               headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(r, timeout=30) as resp:
            return resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()
def create(name):
    code, _, body = call(url(a), {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}})
    assert code == 201, (name, code, body)
    return json.loads(body)["metadata"]["resourceVersion"]
for i in range(20):
    rv = create(f"rv-{i}")
    watch = urllib.request.urlopen(url(b, f"?watch=1&resourceVersion={rv}&timeoutSeconds=20"), timeout=30)
    for match in ("NotOlderThan", "Exact"):
        code, _, body = call(url(b, f"?resourceVersion={rv}&resourceVersionMatch={match}"))
        assert code == 200, (i, match, code, body)
        names = [o["metadata"]["name"] for o in json.loads(body)["items"]]
        assert f"rv-{i}" in names, (i, match, names)
    create(f"rv-{i}-next")
    ev = json.loads(watch.readline())
    while not ev["object"]["metadata"]["name"].startswith("rv-"):  # others' (kube-root-ca.crt)
        ev = json.loads(watch.readline())
    assert (ev["type"], ev["object"]["metadata"]["name"]) == ("ADDED", f"rv-{i}-next"), (i, ev)
    watch.close()
t0 = time.monotonic()
code, headers, body = call(url(b, f"?resourceVersion={int(rv) + 1000000}&resourceVersionMatch=NotOlderThan"))
waited = time.monotonic() - t0
st = json.loads(body)
assert code == 504 and st["reason"] == "Timeout", (code, body)
assert st["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge", body
assert headers.get("Retry-After") == "1", dict(headers)
assert waited >= 2.5, waited
print(f"ok: 20 reads through B at A's revisions; future revision 504 after {waited:.1f}s")
PY
  fail "reads through B at A's revisions: $(tail -n 3 "$E2E_TMP/rv-reads.txt" | tr '\n' ' ')"
cat "$E2E_TMP/rv-reads.txt"

# --- an agent with several servers outlives the one it used -----------------
# `batchd agent --server X,Y,Z` talks to X (a follower, so no leader change
# is involved) until X dies, then to the next: a pod it runs keeps running,
# its completion is reported, the node Lease keeps being renewed, and its
# watches resume on another replica.
X=""
for r in a b c; do [[ $r == "$L" ]] || { X=$r; break; }; done
AGENT_SERVERS="http://127.0.0.1:${SPORT[$X]}"
for r in a b c; do [[ $r == "$X" ]] || AGENT_SERVERS+=",http://127.0.0.1:${SPORT[$r]}"; done
Y=$L  # a replica that stays up, to look through
mkdir -p "$E2E_TMP/agent"
"$BATCHD" agent --server "$AGENT_SERVERS" --node-name ha-agent --data-dir "$E2E_TMP/agent" \
  --client-ca-file "$E2E_TMP/$X/pki/ca.crt" --log-port "$(free_port)" --node-lease-duration-seconds 8 \
  --labels ha-agent=yes --taints ha-agent=yes:NoSchedule >"$E2E_TMP/agent.log" 2>&1 &
PIDS+=($!)
deadline=$((SECONDS + 30))
until [[ $(kr "$Y" get node ha-agent -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null) == True ]]; do
  ((SECONDS < deadline)) || fail "agent node not Ready within 30s: $(tail -n 3 "$E2E_TMP/agent.log" | tr '\n' ' ')"
  sleep 0.3
done
kr "$Y" create -f - >/dev/null <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: on-agent, namespace: $NS}
spec:
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {kubernetes.io/hostname: ha-agent}
      tolerations: [{key: ha-agent, operator: Exists}]
      containers:
      - {name: main, image: busybox, command: ["sh", "-c", "sleep 6; echo done"]}
YAML
deadline=$((SECONDS + 30))
until [[ $(kr "$Y" get pods -n "$NS" -l job-name=on-agent -o 'jsonpath={.items[0].status.phase}' 2>/dev/null) == Running ]]; do
  ((SECONDS < deadline)) || fail "the agent's pod not Running within 30s"
  sleep 0.3
done
kill -9 "${SPID[$X]}"
wait "${SPID[$X]}" 2>/dev/null || true
echo "killed replica $X, the agent's first server"
deadline=$((SECONDS + 45))
until [[ $(kr "$Y" get job on-agent -n "$NS" -o jsonpath='{.status.succeeded}' 2>/dev/null) == 1 ]]; do
  ((SECONDS < deadline)) || fail "the agent's pod did not complete after its server died: $(kr "$Y" get pods -n "$NS" -l job-name=on-agent -o jsonpath='{.items[0].status.phase}'); agent log: $(tail -n 3 "$E2E_TMP/agent.log" | tr '\n' ' ')"
  sleep 0.3
done
# A renewal seen after the completion was made after X died.
renewed=$(kr "$Y" get lease -n kube-node-lease ha-agent -o jsonpath='{.spec.renewTime}')
deadline=$((SECONDS + 20))
until now=$(kr "$Y" get lease -n kube-node-lease ha-agent -o jsonpath='{.spec.renewTime}') && [[ $now != "$renewed" ]]; do
  ((SECONDS < deadline)) || fail "the agent's node Lease not renewed after its server died (still $renewed)"
  sleep 0.5
done
expect_eq "$(kr "$Y" get node ha-agent -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" True "agent node Ready after its server died"
expect_eq "$(kr "$Y" get pods -n "$NS" -l job-name=on-agent -o name | wc -l)" 1 "pods of on-agent"
start_replica "$X"
deadline=$((SECONDS + 40))
until [[ $(curl -s -m 2 "http://127.0.0.1:${SPORT[$X]}/readyz" 2>/dev/null) == ok ]]; do
  ((SECONDS < deadline)) || fail "replica $X not ready again within 40s"
  sleep 0.2
done

# --- leader killed during queued admissions ----------------------------------
KQ=kueue.x-k8s.io/v1beta2
kr a apply -f - >/dev/null <<YAML
apiVersion: $KQ
kind: ResourceFlavor
metadata: {name: ha-flavor}
---
apiVersion: $KQ
kind: ClusterQueue
metadata: {name: ha-cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: ha-flavor
      resources: [{name: cpu, nominalQuota: "2"}, {name: memory, nominalQuota: 10Gi}]
---
apiVersion: $KQ
kind: LocalQueue
metadata: {name: ha-lq, namespace: $NS}
spec: {clusterQueue: ha-cq}
YAML
FOLLOWERS=()
for r in a b c; do [[ $r == "$L" ]] || FOLLOWERS+=("$r"); done
F=${FOLLOWERS[0]}
# Sample the quota throughout: admitted, unfinished Workloads use 1 CPU each.
(
  while :; do
    kr "$F" get workloads.kueue.x-k8s.io -n "$NS" -o json 2>/dev/null | python3 -c '
import json, sys
n = 0
for w in json.load(sys.stdin)["items"]:
    c = {x["type"]: x["status"] for x in w.get("status", {}).get("conditions", [])}
    if c.get("Admitted") == "True" and c.get("Finished") != "True":
        n += 1
print(n)' >>"$E2E_TMP/admitted.txt" || true
    sleep 0.3
  done
) &
SAMPLER=$!
PIDS+=("$SAMPLER")
N=12
for i in $(seq 1 $N); do
  job "q$i" ha-lq 2s | kr "$F" create -f - >/dev/null
  if ((i == 4)); then
    kill -9 "${SPID[$L]}"
    KILLED_AT=$SECONDS
    echo "killed leader $L"
  fi
done
deadline=$((KILLED_AT + 15))
until NL=$(leader "$F") && [[ $NL != "$L" ]]; do
  ((SECONDS <= deadline)) || fail "no new leader within 15s of killing $L"
  sleep 0.3
done
echo "new leader: $NL after $((SECONDS - KILLED_AT))s"
# The killed replica comes back as a follower.
start_replica "$L"
deadline=$((SECONDS + 120))
for i in $(seq 1 $N); do
  until [[ $(kr "$F" get job "q$i" -n "$NS" -o jsonpath='{.status.succeeded}' 2>/dev/null) == 1 ]]; do
    ((SECONDS < deadline)) || fail "job q$i did not complete: $(kr "$F" get job "q$i" -n "$NS" -o jsonpath='{.status}')"
    sleep 0.5
  done
done
kill "$SAMPLER" 2>/dev/null || true
# Exactly once: one pod per Job, none failed.
for i in $(seq 1 $N); do
  expect_eq "$(kr "$F" get pods -n "$NS" -l job-name="q$i" -o name | wc -l)" 1 "pods of q$i"
  expect_eq "$(kr "$F" get job "q$i" -n "$NS" -o jsonpath='{.status.failed}')" "" "failed pods of q$i"
done
max=$(sort -n "$E2E_TMP/admitted.txt" | tail -n 1)
samples=$(wc -l <"$E2E_TMP/admitted.txt")
echo "quota samples: $samples, most admitted at once: $max"
((samples >= 5)) || fail "only $samples quota samples"
((max <= 2)) || fail "ClusterQueue quota exceeded: $max Workloads admitted at once (quota 2 CPU)"

# --- one etcd member killed: nothing visible changes -------------------------
# A follower member: killing etcd's raft leader stalls writes for an etcd
# election (~2 s), which these short test timings (renew deadline 4 s) may
# turn into a batchd leader change (docs/ha.md).
victim=$(ETCDCTL_API=3 etcdctl --endpoints "$ENDPOINTS" endpoint status -w json | python3 -c '
import json, sys
for e in json.load(sys.stdin):
    if e["Status"]["leader"] != e["Status"]["header"]["member_id"]:
        print(e["Endpoint"]); break')
for m in m1 m2 m3; do [[ $victim == "http://127.0.0.1:${CPORT[$m]}" ]] && VM=$m; done
[[ -n "${VM:-}" ]] || fail "no etcd follower member found"
kill -9 "${EPID[$VM]}"
job after-member-loss | kr "${FOLLOWERS[1]}" create -f - >/dev/null
deadline=$((SECONDS + 60))
until [[ $(kr "$F" get job after-member-loss -n "$NS" -o jsonpath='{.status.succeeded}' 2>/dev/null) == 1 ]]; do
  ((SECONDS < deadline)) || fail "job after-member-loss did not complete with one etcd member down"
  sleep 0.5
done
for r in a b c; do
  expect_eq "$(curl -s -m 5 "http://127.0.0.1:${SPORT[$r]}/readyz")" ok "replica $r ready with one etcd member down"
done

# --- every etcd member stopped: 503/504, then recovery by itself -------------
for m in m1 m2 m3; do kill -9 "${EPID[$m]}" 2>/dev/null || true; done
for m in m1 m2 m3; do wait "${EPID[$m]}" 2>/dev/null || true; done
# Through the restarted old leader, a follower now (the leader exits once it
# cannot renew).
if out=$(job etcd-down | kr "$L" create -f - 2>&1); then
  fail "a create succeeded with every etcd member down"
fi
expect_match "$out" "ServiceUnavailable|Timeout|503|504" "create with etcd down"
# Reads are served from the replica's watch cache meanwhile.
expect_eq "$(kr "$L" get job q1 -n "$NS" -o jsonpath='{.status.succeeded}')" 1 "read with etcd down"
for m in m1 m2 m3; do start_member "$m"; done
deadline=$((SECONDS + 30))
until ETCDCTL_API=3 etcdctl --endpoints "$ENDPOINTS" endpoint health >/dev/null 2>&1; do
  ((SECONDS < deadline)) || fail "etcd did not come back"
  sleep 0.2
done
# A leader that could not renew exited (no supervisor here): start it again.
for r in a b c; do kill -0 "${SPID[$r]}" 2>/dev/null || start_replica "$r"; done
deadline=$((SECONDS + 60))
until job etcd-back | kr "$F" create -f - >/dev/null 2>&1; do
  ((SECONDS < deadline)) || fail "creates did not recover after etcd returned"
  sleep 0.5
done
until [[ $(kr "$F" get job etcd-back -n "$NS" -o jsonpath='{.status.succeeded}' 2>/dev/null) == 1 ]]; do
  ((SECONDS < deadline)) || fail "job etcd-back did not complete after etcd returned"
  sleep 0.5
done
# Nothing acknowledged was lost.
for i in $(seq 1 $N); do
  expect_eq "$(kr "$F" get job "q$i" -n "$NS" -o jsonpath='{.status.succeeded}')" 1 "q$i after the outage"
done
expect_eq "$(kr "$F" get job a-to-b after-member-loss -n "$NS" -o name | wc -l)" 2 "earlier jobs after the outage"
