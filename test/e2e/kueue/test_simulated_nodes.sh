# e2e-parallel
# `batchctl create simulated-nodes`: 2 blocks x 2 racks x 2 hosts with
# generated topology labels and capacity, run by the simulated kubelet (Ready,
# and a Job pinned to one rack completes there); a rerun creates nothing, bad
# input changes nothing, --delete removes exactly those nodes and never a
# node that is not simulated. The nodes carry this test's e2e-node label and
# taint, so no other test's pods land on them.
source "$(dirname "$0")/lib.sh"
P="$NS"  # The node name prefix: e2e-kueue-simulated-nodes-b0-r0-h0, ...
bc() { "$BIN_DIR/batchctl" -s "$SERVER" "$@"; }
BASE=(--levels block=2,rack=2,hostname=2 --prefix "$P" --memory 8Gi --gpu 2
      --labels "e2e-node=$P" --taints "e2e-node=$P:NoSchedule")
SPEC=("${BASE[@]}" --cpu 4)
mine() { k get nodes -l "e2e-node=$P${1:+,$1}" -o jsonpath='{range .items[*]}{.metadata.name}{" "}{end}'; }
trap 'k delete nodes -l "e2e-node=$P" --wait=false >/dev/null 2>&1 || true' EXIT

# Bad input: a clear error and nothing created.
expect_fail bc create simulated-nodes "${SPEC[@]}" --count 9
expect_contains "$OUT" "--count: 9 does not match --levels block=2,rack=2,hostname=2 (8 nodes)" "count mismatch"
expect_fail bc create simulated-nodes --levels block=2,block=2 --cpu 1 --memory 1Gi --prefix "$P"
expect_contains "$OUT" "given twice" "duplicate level"
expect_fail bc create simulated-nodes --levels rack=0 --cpu 1 --memory 1Gi --prefix "$P"
expect_contains "$OUT" "fanout must be a whole number" "zero fanout"
expect_fail bc create simulated-nodes --levels a=1000,b=1000 --cpu 1 --memory 1Gi --prefix "$P"
expect_contains "$OUT" "more than 100000 nodes" "too many nodes"
expect_fail bc create simulated-nodes "${BASE[@]}" --cpu lots
expect_contains "$OUT" "--cpu: \"lots\"" "bad quantity"
expect_eq "$(mine)" "" "nodes after bad input"

# --dry-run prints the plan and sends nothing.
expect_ok bc create simulated-nodes "${SPEC[@]}" --dry-run
expect_contains "$OUT" "8 simulated node(s), each cpu=4, memory=8Gi, nvidia.com/gpu=2, pods=110" "dry run"
expect_contains "$OUT" "$P-b0-r0-h0" "dry run names"
expect_eq "$(mine)" "" "nodes after --dry-run"

expect_ok bc create simulated-nodes "${SPEC[@]}"
expect_eq "$OUT" "8 simulated node(s): 8 created, 0 updated, 0 unchanged" "create summary"
expect_eq "$(mine)" "$P-b0-r0-h0 $P-b0-r0-h1 $P-b0-r1-h0 $P-b0-r1-h1 $P-b1-r0-h0 $P-b1-r0-h1 $P-b1-r1-h0 $P-b1-r1-h1 " "node names"
expect_eq "$(mine topology.batchd.io/rack=b1-r0)" "$P-b1-r0-h0 $P-b1-r0-h1 " "nodes of rack b1-r0"
expect_eq "$(mine topology.batchd.io/block=b0)" "$P-b0-r0-h0 $P-b0-r0-h1 $P-b0-r1-h0 $P-b0-r1-h1 " "nodes of block b0"
N="$P-b1-r0-h1"
expect_eq "$(k get node "$N" -o jsonpath='{.metadata.labels.topology\.batchd\.io/block} {.metadata.labels.topology\.batchd\.io/rack} {.metadata.labels.kubernetes\.io/hostname}')" \
  "b1 b1-r0 $N" "labels of $N"
for f in capacity allocatable; do
  expect_eq "$(k get node "$N" -o jsonpath="{.status.$f.cpu} {.status.$f.memory} {.status.$f.nvidia\.com/gpu} {.status.$f.pods}")" \
    "4 8Gi 2 110" "$f of $N"
done
expect_eq "$(k get node "$N" -o jsonpath='{.spec.taints[0].key}={.spec.taints[0].value}:{.spec.taints[0].effect}')" \
  "e2e-node=$P:NoSchedule" "taint of $N"

# The simulated kubelet takes them over: Ready, with the conditions and
# nodeInfo only it adds.
all_ready() {
  local got
  got=$(k get nodes -l "e2e-node=$P" -o jsonpath='{range .items[*]}{.status.nodeInfo.kubeletVersion}/{.status.conditions[?(@.type=="Ready")].status}/{.status.conditions[?(@.type=="MemoryPressure")].reason}{"\n"}{end}' | sort | uniq -c)
  [[ $got =~ ^\ *8\ v1\.32\.0-batchd-sim/True/KubeletHasSufficientMemory$ ]]
}
poll 30 all_ready || fail "not all 8 nodes Ready under the simulated kubelet: $(k get nodes -l "e2e-node=$P" 2>&1 | head -c 600)"
expect_contains "$(k get nodes -l "e2e-node=$P,topology.batchd.io/rack=b0-r1")" "Ready" "kubectl get nodes"

# A Job pinned to rack b1-r0 runs there.
ensure_ns
cat <<YAML | k create -f - >/dev/null
apiVersion: batch/v1
kind: Job
metadata: {name: on-rack, namespace: $NS}
spec:
  completions: 2
  parallelism: 2
  template:
    metadata:
      annotations: {batchd.io/sim-duration: 1s}
    spec:
      restartPolicy: Never
      nodeSelector: {topology.batchd.io/rack: b1-r0, e2e-node: $P}
      tolerations: [{key: e2e-node, operator: Equal, value: $P, effect: NoSchedule}]
      containers:
      - name: main
        image: busybox
        command: ["true"]
        resources: {requests: {cpu: "3", nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "1"}}
YAML
kwait on-rack complete 60
hosts=$(k get pods -n "$NS" -l job-name=on-rack -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort -u | xargs)
expect_eq "$hosts" "$P-b1-r0-h0 $P-b1-r0-h1" "the job's pods' nodes (3 cpu each: one per node)"
k delete job -n "$NS" on-rack --cascade=background >/dev/null

# Again: nothing new (the kubelet's status changes are not the spec's).
expect_ok bc create simulated-nodes "${SPEC[@]}"
expect_eq "$OUT" "8 simulated node(s): 0 created, 0 updated, 8 unchanged" "rerun summary"
# More cpu: the same nodes, updated.
expect_ok bc create simulated-nodes "${BASE[@]}" --cpu 8
expect_eq "$OUT" "8 simulated node(s): 0 created, 8 updated, 0 unchanged" "resized summary"
expect_eq "$(k get node "$N" -o jsonpath='{.status.capacity.cpu} {.status.allocatable.cpu}')" "8 8" "resized cpu"

# --delete removes that spec's nodes.
expect_ok bc create simulated-nodes "${SPEC[@]}" --delete
expect_eq "$OUT" "8 simulated node(s): 8 deleted, 0 not found" "delete summary"
gone() { [[ -z $(mine) ]]; }
poll 20 gone || fail "nodes left after --delete: $(mine)"

# A node of one of the names that is not simulated is never changed or deleted.
REAL="$P-b0-r0-h0"
cat <<JSON | k create -f - >/dev/null
{"apiVersion": "v1", "kind": "Node",
 "metadata": {"name": "$REAL", "labels": {"e2e-node": "$P", "real": "yes"}},
 "spec": {"taints": [{"key": "e2e-node", "value": "$P", "effect": "NoSchedule"}]}}
JSON
expect_fail bc create simulated-nodes "${SPEC[@]}"
expect_contains "$OUT" "not simulated" "create over a real node"
expect_contains "$OUT" "nothing was changed" "create over a real node"
expect_eq "$(mine)" "$REAL " "nodes after the refused create"
expect_fail bc create simulated-nodes "${SPEC[@]}" --delete
expect_contains "$OUT" "node/$REAL is not simulated" "delete over a real node"
expect_contains "$OUT" "8 simulated node(s): 0 deleted, 7 not found, 1 not simulated (left alone)" "delete summary"
expect_eq "$(k get node "$REAL" -o jsonpath='{.metadata.labels.real}')" "yes" "the real node is kept"
k delete node "$REAL" >/dev/null
