# e2e-parallel
# Container logs are rotated by size and count (kubelet's
# containerLogMaxSize / containerLogMaxFiles): a pod printing without end on
# an agent with --container-log-max-size 64Ki --container-log-max-files 3
# keeps at most 3 files of 64Ki, `kubectl logs` reads the current file (whole
# lines, the newest), and no line is lost within what is kept.
source "$(dirname "$0")/lib.sh"
ensure_ns
NODE=e2e-logrot
ADIR="$E2E_TMP/agent"
cleanup() {
  kill -9 "${AGENT_PID:-}" 2>/dev/null || true
  kill_under "$ADIR"
  k delete node "$NODE" --wait=false >/dev/null 2>&1 || true
}
trap cleanup EXIT
start_remote_agent "$NODE" "$ADIR" --container-log-max-size 64Ki --container-log-max-files 3

cat <<YAML | k create -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: chatty, namespace: $NS}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
$(pinned_spec "$NODE" "  ")
  containers:
  - name: main
    image: busybox
    command: ["sh", "-c", "i=0; while :; do i=\$((i+1)); echo \"line \$i\"; done"]
YAML
phase() { k get pod -n "$NS" chatty -o jsonpath='{.status.phase}'; }
poll 60 eval '[[ $(phase) == Running ]]' || fail "pod not Running: $(phase)"
uid=$(k get pod -n "$NS" chatty -o jsonpath='{.metadata.uid}')
PODDIR="$ADIR/pods/$uid"
rotated() { [[ -f "$PODDIR/main.0.log.2" ]]; }
poll 60 rotated || fail "no second rotation within 60s: $(ls -la "$PODDIR" | tr '\n' ' ')"
# Keep writing for a while: the files stay bounded.
max=0
for _ in $(seq 10); do
  sleep 0.5
  # A rotation can rename a file between the glob and cat's open: cat then
  # fails (pipefail would end the test with no reason); what it read counts.
  total=$(cat "$PODDIR"/main.0.log* 2>/dev/null | wc -c || true)
  ((total > max)) && max=$total
  [[ -e "$PODDIR/main.0.log.3" ]] && fail "a fourth file exists: $(ls "$PODDIR" | tr '\n' ' ')"
done
# 3 files of 64Ki, plus what the shim has in hand at the moment of a look.
((max <= 3 * 65536 + 65536)) || fail "logs grew to $max bytes, want <= $((4 * 65536))"
# kubectl logs reads the current file: whole lines, consecutive numbers.
out=$(k logs -n "$NS" chatty --tail=50)
python3 - "$out" <<'PY' || fail "kubectl logs --tail=50 is not consecutive whole lines: $(head -c 200 <<<"$out")"
import re, sys
lines = sys.argv[1].splitlines()
if lines and not re.fullmatch(r"line \d+", lines[-1]):
    lines.pop()  # the line being written
assert len(lines) >= 10, len(lines)  # more than 50: the file grew while it was read
nums = [int(l.split()[1]) for l in lines]
assert all(b == a + 1 for a, b in zip(nums, nums[1:])), nums[:5]
PY
# The kept files, oldest first, are one run of consecutive lines.
python3 - "$PODDIR/main.0.log" <<'PY' || fail "lines missing or split across the rotated files"
import sys
p = sys.argv[1]
# A rotation may happen between reading two files: a few tries.
for attempt in range(20):
    data = b""
    for f in [p + ".2", p + ".1", p]:
        with open(f, "rb") as fh:
            data += fh.read()
    lines = data.decode().split("\n")[:-1]  # the last line may still be being written
    nums = [int(l.split()[1]) for l in lines]
    if len(nums) > 1000 and all(b == a + 1 for a, b in zip(nums, nums[1:])):
        sys.exit(0)
sys.exit(1)
PY
expect_ok k delete pod -n "$NS" chatty --wait=true --timeout=60s
