# e2e-parallel
# Reboot simulation: after the node reboots (a new boot id, through the
# agent's BATCHD_BOOT_ID_FILE), the agent signals nothing recorded before it.
# An unrelated `sleep` (its own process group) whose pid and start time are
# written into a pod's recorded state as the container's survives the
# agent's clean-up of that pod, which is reported ContainerStatusUnknown.
# The pod tolerates a lost node for ever: the suite's 5 s default would evict
# (delete) it whenever the dead agent's node turns NotReady before the new
# agent reports, which under load it did.
source "$(dirname "$0")/lib.sh"
ensure_ns
NODE=e2e-reboot
ADIR="$E2E_TMP/agent"
BOOT="$E2E_TMP/boot_id"
echo boot-one >"$BOOT"
STRANGER=""
cleanup() {
  kill -9 "${AGENT_PID:-}" "$STRANGER" 2>/dev/null || true
  kill_under "$ADIR"
  k delete node "$NODE" --wait=false >/dev/null 2>&1 || true
}
trap cleanup EXIT
export BATCHD_BOOT_ID_FILE="$BOOT"
start_remote_agent "$NODE" "$ADIR"
cat <<YAML | k create -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: before-reboot, namespace: $NS}
spec:
  restartPolicy: Never
$(pinned_spec "$NODE" "  " "{key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute}" \
  "{key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute}")
  containers:
  - name: main
    image: busybox
    command: ["sleep", "300"]
YAML
poll 60 eval '[[ $(k get pod -n "$NS" before-reboot -o jsonpath="{.status.phase}") == Running ]]' ||
  fail "pod not Running"
uid=$(k get pod -n "$NS" before-reboot -o jsonpath='{.metadata.uid}')
STATE="$ADIR/pods/$uid/state.json"
expect_eq "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["bootId"])' "$STATE")" \
  boot-one "boot id recorded in state.json"
# The machine "reboots": the agent, the shim and the pod's processes are gone
# (the shim first, so it records nothing more).
kill -9 "$AGENT_PID"
wait "$AGENT_PID" 2>/dev/null || true
shim=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["shimPid"])' "$STATE")
kill -9 "$shim" 2>/dev/null || true
kill_under "$ADIR/pods/$uid"
poll 10 eval "! kill -0 $shim 2>/dev/null" || fail "shim $shim still alive"
# An unrelated program now has the pid the state records (and its start time).
setsid sleep 1000 &
STRANGER=$!
sleep 0.2
ticks=$(awk '{sub(/.*\) /, ""); print $20}' "/proc/$STRANGER/stat")
python3 - "$STATE" "$STRANGER" "$ticks" <<'PY'
import json, sys
path, pid, ticks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
st = json.load(open(path))
for c in st["app"]:
    c["state"] = "running"
    c["pid"] = pid
    c["startTicks"] = ticks
st["finished"] = False
json.dump(st, open(path + ".new", "w"))
PY
mv "$STATE.new" "$STATE"
echo boot-two >"$BOOT"
start_remote_agent "$NODE" "$ADIR"
reported() {
  [[ $(k get pod -n "$NS" before-reboot -o jsonpath='{.status.containerStatuses[0].state.terminated.reason}') == ContainerStatusUnknown ]]
}
poll 120 reported || fail "pod not reported ContainerStatusUnknown: $(k get pod -n "$NS" before-reboot -o jsonpath='{.status.containerStatuses}' | head -c 300); spec.json lock: $(flock -n "$ADIR/pods/$uid/spec.json" true 2>&1 && echo free || echo held); agent log: $(tail -n 6 "$ADIR.log" | tr '\n' ' ' | tail -c 600)"
sleep 1
kill -0 "$STRANGER" 2>/dev/null || fail "the unrelated process $STRANGER was signalled"
grep -q "recorded in another boot" "$ADIR.log" ||
  fail "no 'recorded in another boot' in the agent log: $(tail -n 3 "$ADIR.log" | tr '\n' ' ')"
k delete pod -n "$NS" before-reboot --wait=false >/dev/null 2>&1 || true
