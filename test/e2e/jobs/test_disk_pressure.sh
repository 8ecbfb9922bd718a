# e2e-parallel
# DiskPressure: an agent whose data dir is a small tmpfs (8Mi) with
# --eviction-hard nodefs.available<4Mi reports DiskPressure=True once a
# chatty pod's logs fill it, the node gets the disk-pressure:NoSchedule
# taint, the chatty pod is evicted (Failed, reason Evicted, the kubelet's
# message) while a quiet one keeps running, the filesystem never fills, and
# the condition clears after the transition period once the evicted pod's
# logs are reclaimed. Needs root (mount); skipped otherwise.
source "$(dirname "$0")/lib.sh"
ensure_ns
NODE=e2e-diskpressure
ADIR="$E2E_TMP/agent"
mkdir -p "$ADIR"
if ! mount -t tmpfs -o size=8m tmpfs "$ADIR" 2>/dev/null; then
  echo "SKIP: cannot mount a tmpfs (not root?)"
  exit 0
fi
cleanup() {
  kill -9 "${AGENT_PID:-}" 2>/dev/null || true
  kill_under "$ADIR"
  sleep 0.2
  umount -l "$ADIR" 2>/dev/null || true
  k delete node "$NODE" --wait=false >/dev/null 2>&1 || true
}
trap cleanup EXIT
start_remote_agent "$NODE" "$ADIR/data" --container-log-max-size 1Mi --container-log-max-files 5 \
  --eviction-hard 'nodefs.available<4Mi' --eviction-pressure-transition-period 10s

pod_yaml() {  # NAME COMMAND
  cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: $NS}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
$(pinned_spec "$NODE" "  ")
  containers:
  - name: main
    image: busybox
    command: ["sh", "-c", "$2"]
YAML
}
pod_yaml quiet "sleep 300" | k create -f - >/dev/null
phase() { k get pod -n "$NS" "$1" -o jsonpath='{.status.phase}'; }
poll 60 eval '[[ $(phase quiet) == Running ]]' || fail "quiet pod not Running: $(phase quiet)"
# 5 files of 1Mi of logs on an 8Mi filesystem: past the 4Mi threshold.
pod_yaml chatty 'while :; do echo aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa; done' |
  k create -f - >/dev/null

cond() { k get node "$NODE" -o 'jsonpath={.status.conditions[?(@.type=="DiskPressure")].status}'; }
taint_seen=false
pressure_seen=false
for _ in $(seq 120); do
  [[ $(cond) == True ]] && pressure_seen=true
  k get node "$NODE" -o jsonpath='{.spec.taints[*].key}' | grep -q 'node.kubernetes.io/disk-pressure' &&
    taint_seen=true
  used=$(df -P "$ADIR" | awk 'NR==2 {print $5}' | tr -d %)
  ((used < 100)) || fail "the pod filesystem filled up"
  # The condition is read before the taint in each round: the taint (which
  # follows the condition) may be seen first; the condition stays True for
  # the transition period (10 s) after the pressure ends, so the next round
  # sees it.
  [[ $(phase chatty) == Failed ]] && $taint_seen && $pressure_seen && break
  sleep 0.5
done
$pressure_seen || fail "DiskPressure never True; agent log: $(tail -n 3 "$ADIR/data.log" | tr '\n' ' ')"
$taint_seen || fail "no disk-pressure taint; taints: $(k get node "$NODE" -o jsonpath='{.spec.taints}')"
expect_eq "$(phase chatty)" Failed "chatty pod's phase"
expect_eq "$(k get pod -n "$NS" chatty -o jsonpath='{.status.reason}')" Evicted "chatty pod's reason"
expect_match "$(k get pod -n "$NS" chatty -o jsonpath='{.status.message}')" \
  '^The node was low on resource: ephemeral-storage\. Threshold quantity: 4096Ki, available: [0-9]+Ki\. Container main was using [0-9]+Ki' \
  "eviction message"
expect_eq "$(phase quiet)" Running "quiet pod's phase"
# A new pod is not scheduled there while the taint holds.
# The evicted pod's logs are reclaimed; the condition clears 10 s later.
poll 60 eval '[[ $(cond) == False ]]' || fail "DiskPressure still $(cond) after the evicted pod's logs went"
poll 30 eval '! k get node "$NODE" -o jsonpath="{.spec.taints[*].key}" | grep -q disk-pressure' ||
  fail "disk-pressure taint not removed"
expect_eq "$(phase quiet)" Running "quiet pod's phase after the pressure"
k delete pod -n "$NS" quiet chatty --wait=false >/dev/null 2>&1 || true
