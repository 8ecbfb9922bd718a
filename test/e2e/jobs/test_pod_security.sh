# Who pods run as, where they live, and how many processes they may have
# (docs/security.md "Pods"), against a server of its own (--pod-pids-limit 64,
# so the fork bomb is small): a pod's `id -u` is the unprivileged pod user by
# default; runAsUser: 1234 is honoured; runAsUser: 0 is refused by Pod
# Security Admission outside a privileged namespace, works inside one, and
# with runAsNonRoot the pod waits with CreateContainerConfigError; the pod's
# working directory is 0700, owned by the pod user and not under the data
# dir; a shell loop forking sleeps stops at pids.max; securityContext fields
# batchd does not apply come back as Warning headers.
source "$(dirname "$0")/lib.sh"
if [[ $(id -u) != 0 ]]; then
  echo "SKIP: pod users need a root agent and this test does not run as root"
  exit 0
fi
BATCHD="${BIN_DIR:?}/batchd"
DATA="$E2E_TMP/sec-data"
LOG="$E2E_TMP/sec-server.log"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
SERVER="http://127.0.0.1:$PORT"
PID=""
cleanup() {
  k delete pods --all -n "$NS" --grace-period=0 --wait=false >/dev/null 2>&1 || true
  k delete pods --all -n "$NS-priv" --grace-period=0 --wait=false >/dev/null 2>&1 || true
  if [[ -n $PID ]]; then
    kill "$PID" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$PID" 2>/dev/null || true
  fi
  kill_under "$DATA"
}
trap cleanup EXIT
"$BATCHD" server --listen "127.0.0.1:$PORT" --data-dir "$DATA" --allow-loopback-admin \
  --pod-pids-limit 64 >>"$LOG" 2>&1 &
PID=$!
deadline=$((SECONDS + 30))
until [[ $(curl -s -m 2 "$SERVER/healthz" 2>/dev/null) == ok ]]; do
  kill -0 "$PID" 2>/dev/null || fail "server exited while starting: $(tail -n 3 "$LOG" | tr '\n' ' ')"
  ((SECONDS < deadline)) || fail "server not healthy within 30s"
  sleep 0.2
done
POD_UID=$(id -u batchd-pod 2>/dev/null) || fail "the server did not create the pod user batchd-pod"
expect_ne "$POD_UID" "0" "the pod user's uid"
ensure_ns

phase_is() { [[ $(jp pod "$1" '{.status.phase}') == "$2" ]]; }
run_pod() {  # run_pod NAME NAMESPACE SECURITY_CONTEXT_YAML COMMAND: applies a pod, waits for Succeeded
  cat <<YAML | k apply -f - >/dev/null || fail "create pod $1"
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: $2}
spec:
  restartPolicy: Never
  securityContext: $3
  containers:
  - {name: main, image: busybox, command: ["sh", "-c", "$4"]}
YAML
  poll 60 eval "[[ \$(k get pod -n $2 $1 -o jsonpath='{.status.phase}') == Succeeded ]]" ||
    fail "pod $1 not Succeeded: $(k get pod -n "$2" "$1" -o jsonpath='{.status}' | head -c 400); logs: $(k logs -n "$2" "$1" 2>&1 | head -c 200)"
}

# The default: the unprivileged pod user, in a private 0700 directory that
# is not in the store's directory.
run_pod who "$NS" "{}" 'id -u; stat -c \"%a %u\" .; pwd'
mapfile -t out < <(k logs -n "$NS" who)
expect_eq "${out[0]}" "$POD_UID" "id -u of a pod without runAsUser"
expect_eq "${out[1]}" "700 $POD_UID" "mode and owner of the pod's working directory"
case "${out[2]}" in
  "$DATA"/*) fail "the pod's directory ${out[2]} is inside the data dir $DATA" ;;
  "$DATA-pods"/*) ;;
  *) fail "the pod's directory ${out[2]} is not under the default pod root $DATA-pods" ;;
esac
[[ -e $DATA/state.db ]] || fail "no state.db in $DATA"
expect_eq "$(stat -c '%a %u' "${out[2]}")" "700 $POD_UID" "the work dir seen from the host"
expect_eq "$(stat -c '%a %u' "$(dirname "${out[2]}")")" "711 0" "the pod's control dir (root's)"
log=$(ls "$(dirname "${out[2]}")"/main.0.log)
expect_eq "$(stat -c '%a %u' "$log")" "600 $POD_UID" "the container log's mode and owner"

# runAsUser / runAsGroup / fsGroup are honoured.
run_pod u1234 "$NS" "{runAsUser: 1234, runAsGroup: 1235, fsGroup: 1236}" 'id -u; id -g; id -G; stat -c \"%u\" .'
mapfile -t out < <(k logs -n "$NS" u1234)
expect_eq "${out[0]}" "1234" "id -u with runAsUser: 1234"
expect_eq "${out[1]}" "1235" "id -g with runAsGroup: 1235"
expect_contains "${out[2]}" "1236" "fsGroup among the groups"
expect_eq "${out[3]}" "1234" "the working directory belongs to runAsUser"

# Root: refused by Pod Security Admission outside a privileged namespace ...
expect_fail k apply -f - <<YAML
apiVersion: v1
kind: Pod
metadata: {name: root, namespace: $NS}
spec:
  securityContext: {runAsUser: 0}
  containers: [{name: main, image: busybox, command: ["id", "-u"]}]
YAML
expect_contains "$OUT" 'pods "root" is forbidden: violates PodSecurity "baseline:latest": runAsUser=0 (pod must not set runAsUser=0)' "root outside a privileged namespace"
expect_absent pod root
# ... works inside one ...
printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: %s, labels: {pod-security.kubernetes.io/enforce: privileged}}\n' "$NS-priv" |
  k apply -f - >/dev/null || fail "create the privileged namespace"
run_pod root "$NS-priv" "{runAsUser: 0}" 'id -u'
expect_eq "$(k logs -n "$NS-priv" root)" "0" "id -u of runAsUser: 0 in a privileged namespace"
# ... and runAsNonRoot with runAsUser 0 waits with the kubelet's reason.
cat <<YAML | k apply -f - >/dev/null || fail "create nonroot"
apiVersion: v1
kind: Pod
metadata: {name: nonroot, namespace: $NS-priv}
spec:
  securityContext: {runAsNonRoot: true}
  containers: [{name: main, image: busybox, command: ["id"], securityContext: {runAsUser: 0}}]
YAML
waiting() { [[ $(k get pod -n "$NS-priv" nonroot -o jsonpath='{.status.containerStatuses[0].state.waiting.reason}') == CreateContainerConfigError ]]; }
poll 30 waiting || fail "nonroot not CreateContainerConfigError: $(k get pod -n "$NS-priv" nonroot -o jsonpath='{.status}' | head -c 400)"
expect_contains "$(k get pod -n "$NS-priv" nonroot -o jsonpath='{.status.containerStatuses[0].state.waiting.message}')" \
  "container's runAsUser breaks non-root policy (pod: \"nonroot_$NS-priv(" "the waiting message"
expect_eq "$(k get pod -n "$NS-priv" nonroot -o jsonpath='{.status.phase}')" "Pending" "phase of a refused container"
events() { k get events -n "$NS-priv" --field-selector involvedObject.name=nonroot -o jsonpath='{range .items[*]}{.reason}: {.message}{"\n"}{end}'; }
has_failed_event() { events | grep -qF "Failed: Error: container's runAsUser breaks non-root policy"; }
poll 30 has_failed_event || fail "no Failed event for nonroot: $(events)"

# Fields batchd does not apply: accepted with a Warning, never silently.
cat >"$E2E_TMP/warn.yaml" <<YAML
apiVersion: v1
kind: Pod
metadata: {name: warned, namespace: $NS}
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: busybox
    command: ["true"]
    securityContext: {seccompProfile: {type: RuntimeDefault}, allowPrivilegeEscalation: false}
YAML
expect_ok k apply -f "$E2E_TMP/warn.yaml"
expect_contains "$OUT" "Warning: spec.containers[0].securityContext.seccompProfile: not applied" "the Warning header"
expect_fail k run priv -n "$NS" --image=busybox --restart=Never \
  --overrides='{"spec":{"containers":[{"name":"priv","image":"busybox","command":["true"],"securityContext":{"privileged":true}}]}}'
expect_contains "$OUT" "spec.containers[0].securityContext.privileged: Forbidden" "privileged refused"

# pids.max: a loop forking sleepers stops at the pod's limit (64 here); it
# is bounded itself (500 at most) should the limit not hold.
cat <<'YAML' | sed "s/@NS@/$NS/" | k apply -f - >/dev/null || fail "create forks"
apiVersion: v1
kind: Pod
metadata: {name: forks, namespace: "@NS@"}
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: python
    command:
    - python3
    - -c
    - |
      import os, time
      kids = []
      try:
          while len(kids) < 500:
              pid = os.fork()
              if pid == 0:
                  time.sleep(60)
                  os._exit(0)
              kids.append(pid)
      except OSError as e:
          print("fork failed:", e.strerror)
      print("started=%d" % len(kids))
      for k in kids:
          os.kill(k, 9)
YAML
poll 60 phase_is forks Succeeded || fail "forks not Succeeded: $(k get pod -n "$NS" forks -o jsonpath='{.status}' | head -c 400)"
logs=$(k logs -n "$NS" forks)
started=$(sed -n 's/^started=//p' <<<"$logs")
[[ -n $started ]] || fail "no count from the fork loop: $(head -c 300 <<<"$logs")"
expect_contains "$logs" "fork failed: Resource temporarily unavailable" "the fork that hit pids.max"
((started < 64)) || fail "the fork loop started $started processes: pids.max (64) was not applied"
((started > 10)) || fail "the fork loop started only $started processes"
expect_eq "$(jp pod forks '{.status.conditions[?(@.type=="batchd.io/ResourceLimitsApplied")].status}')" "" \
  "no limits-not-applied condition when pids.max was applied"
echo "fork loop stopped at $started processes (pids.max 64)"
