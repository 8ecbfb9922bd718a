# e2e-parallel
# `kubectl top` (metrics.k8s.io/v1beta1, as metrics-server serves it): a pod
# that spins a CPU and holds 64 MiB on the local node shows its CPU (well
# above zero) and memory in `kubectl top pod`, per container with
# --containers; `kubectl top node` shows the local node and a simulated node
# whose usage is the requests of the pod running on it; a label selector
# selects; a pod that is not running has no metrics.
source "$(dirname "$0")/lib.sh"
ensure_ns
SIM="sim-$NS"
MARK=$(new_marker top)
cleanup() {
  k delete pod -n "$NS" --all --grace-period=0 --wait=false >/dev/null 2>&1 || true
  k delete node "$SIM" --wait=false >/dev/null 2>&1 || true
  pkill -9 -f -- "$MARK" 2>/dev/null || true
  return 0
}
trap cleanup EXIT

cat <<YAML | k create -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: spin, namespace: $NS, labels: {app: spin}}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - name: burn
    image: busybox
    command: ["python3", "-c", "import sys,time\nb = bytearray(64 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1\nend = time.time() + 120\nwhile time.time() < end: pass\n", "$MARK"]
    resources: {requests: {cpu: 100m}}
YAML
cat <<JSON | k create -f - >/dev/null
{"apiVersion": "v1", "kind": "Node",
 "metadata": {"name": "$SIM", "annotations": {"batchd.io/simulated": "true"},
              "labels": {"kubernetes.io/hostname": "$SIM", "e2e-top": "$NS"}},
 "spec": {"taints": [{"key": "e2e-top", "value": "yes", "effect": "NoSchedule"}]},
 "status": {"capacity": {"cpu": "8", "memory": "16Gi", "pods": "110"},
            "allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}}
JSON
cat <<YAML | k create -f - >/dev/null
apiVersion: v1
kind: Pod
metadata:
  name: simpod
  namespace: $NS
  annotations: {batchd.io/sim-duration: 10m}
spec:
  restartPolicy: Never
  nodeSelector: {kubernetes.io/hostname: $SIM}
  tolerations: [{key: e2e-top, operator: Equal, value: "yes", effect: NoSchedule}]
  containers:
  - name: main
    image: busybox
    command: ["true"]
    resources: {requests: {cpu: 1500m, memory: 3Gi}}
YAML
running() { [[ $(k get pod "$1" -n "$NS" -o jsonpath='{.status.phase}') == Running ]]; }
poll 60 running spin || fail "spin not Running: $(k get pod spin -n "$NS" -o jsonpath='{.status}')"
poll 60 running simpod || fail "simpod not Running: $(k get pod simpod -n "$NS" -o jsonpath='{.status}')"

# Discovery advertises the API as metrics-server's APIService would.
expect_ok k api-resources --api-group=metrics.k8s.io --no-headers
expect_contains "$OUT" "PodMetrics" "api-resources"

# The spinning pod: its CPU is measured over a window of samples, so the
# first answer may take a few seconds. On a loaded machine the spinner may get
# less than a tenth of a core in one window, so the CPU column is polled until
# it reaches 100m (a spinning process does, once the machine lets it run).
top_spin() {
  k top pod spin -n "$NS" --no-headers >"$E2E_TMP/top" 2>&1 || return 1
  read -r name cpu mem <"$E2E_TMP/top"
  [[ $cpu =~ ^([0-9]+)m$ ]] && ((BASH_REMATCH[1] >= 100))
}
poll 60 top_spin || fail "kubectl top pod spin: want >= 100m cpu from a spinning pod: $(cat "$E2E_TMP/top")"
read -r name cpu mem <"$E2E_TMP/top"
expect_eq "$name" "spin" "top pod name"
[[ $mem =~ ^([0-9]+)Mi$ ]] || fail "memory column '$mem' of: $(cat "$E2E_TMP/top")"
((BASH_REMATCH[1] >= 60)) || fail "pod holding 64 MiB shows ${mem}: $(cat "$E2E_TMP/top")"
expect_ok k top pod spin -n "$NS" --containers --no-headers
expect_match "$OUT" '^spin +burn +[0-9]+m +[0-9]+Mi' "top pod --containers"
# The simulated pod uses exactly its requests.
expect_ok k top pod simpod -n "$NS" --no-headers
expect_match "$OUT" '^simpod +1500m +3072Mi' "simulated pod"
# Both, sorted by cpu; a label selector picks one.
expect_ok k top pod -n "$NS" --no-headers --sort-by=cpu
expect_eq "$(awk '{print $1}' <<<"$OUT" | tr '\n' ' ')" "simpod spin " "sorted by cpu"
expect_ok k top pod -n "$NS" -l app=spin --no-headers
expect_eq "$(awk '{print $1}' <<<"$OUT" | tr '\n' ' ')" "spin " "label selector"

# Nodes: the simulated one reports its pod's requests (1500m of 8 = 18%).
expect_ok k top node "$SIM" --no-headers
expect_match "$OUT" "^$SIM +1500m +18% +3072Mi +18%" "top node simulated"
# The local node reports the machine's usage.
LOCAL=$(k get pod spin -n "$NS" -o jsonpath='{.spec.nodeName}')
top_local() { k top node "$LOCAL" --no-headers >"$E2E_TMP/node" 2>&1; }
poll 30 top_local || fail "kubectl top node $LOCAL: $(cat "$E2E_TMP/node")"
expect_match "$(cat "$E2E_TMP/node")" "^$LOCAL +[0-9]+m +[0-9]+% +[0-9]+Mi +[0-9]+%" "top node local"
expect_ok k top node -l "e2e-top=$NS" --no-headers
expect_eq "$(awk '{print $1}' <<<"$OUT")" "$SIM" "top node label selector"

# A pod that is not running has no metrics.
k delete pod spin -n "$NS" --grace-period=0 --wait=true >/dev/null 2>&1 || true
expect_fail k top pod spin -n "$NS"
expect_contains "$OUT" "not found" "deleted pod"
