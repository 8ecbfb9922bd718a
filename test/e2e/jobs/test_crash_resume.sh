# kill -9 the server in the middle of a Job (completions 200, parallelism 20)
# and restart it on the same data dir and port: the Job completes with
# exactly succeeded=200, failed=0, and no batchd-shim or pod process of the
# run is left behind. Uses its own server (the suite's must not be killed).
source "$(dirname "$0")/lib.sh"
DATA="$E2E_TMP/crash-data"
LOG="$E2E_TMP/crash-server.log"
MARK=$(new_marker crash)
mkdir -p "$DATA"
PORT=$(free_port)
SERVER="http://127.0.0.1:$PORT"
PID=""

# Shims and pod processes of this run (not the server itself).
leftovers() { procs_under "$DATA" "$MARK" | sort -u | grep -vx -- "${PID:-none}" || true; }
cleanup() {
  own_server_stop
  kill_under "$DATA" "$MARK"
}
trap cleanup EXIT

# The first 40 pods run through; later ones wait until $GATE/open exists.
# So the Job cannot finish before the kill, and at the kill pods are running
# (blocked), however slowly a loaded host runs the test's kubectl calls.
GATE="$E2E_TMP/gate"
mkdir -p "$GATE"
chmod 777 "$GATE"  # the pods (the unprivileged pod user) append to $GATE/started

own_server_start
ensure_ns
# Every pod deletion of the run is read back at the end from a watch from the
# Job's creation (the store keeps the history across the restart).
RV0=$(cat <<YAML | k create -f - -o jsonpath='{.metadata.resourceVersion}'
apiVersion: batch/v1
kind: Job
metadata: {name: crash, namespace: $NS}
spec:
  completions: 200
  parallelism: 20
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        command: ["sh", "-c", "echo x >>$GATE/started; if [ \$(wc -l <$GATE/started) -gt 40 ]; then while [ ! -e $GATE/open ]; do sleep 0.2; done; fi; sleep 1; echo $MARK"]
YAML
)
expect_match "$RV0" '^[0-9]+$' "the Job's resourceVersion"

succeeded() { jp job crash '{.status.succeeded}'; }
some_done() { local n; n=$(succeeded); ((${n:-0} >= 30)); }
poll 120 some_done || fail "fewer than 30 succeeded within 120s: $(jp job crash '{.status}' | head -c 300)"
# Kill while shims and pod processes run: past the 40th pod every new one
# waits on the gate, so the Job's 20 active pods stay alive until it opens.
before=$(succeeded)
((before <= 40)) || fail "more than the 40 ungated pods succeeded before the kill (succeeded=$before)"
running=""
deadline=$((SECONDS + 60))
until [[ -n $running ]]; do
  ((SECONDS < deadline)) || fail "no shim or pod process was seen running within 60s"
  # pgrep alone (not leftovers' walk of /proc, which takes seconds on a busy
  # host): a shim's command line names the data dir, a pod's the marker.
  running=$(pgrep -f -- "$DATA|$MARK" | grep -vx -- "$PID" || true)
  [[ -n $running ]] && break
  sleep 0.05
done
kill -9 "$PID"
wait "$PID" 2>/dev/null || true
PID=""
echo "killed the server at succeeded=$before"

touch "$GATE/open"
own_server_start
kwait crash complete 180
expect_eq "$(jp job crash '{.status.succeeded}')" "200" "status.succeeded after the restart"
expect_eq "$(jp job crash '{.status.failed}')" "" "status.failed after the restart"
expect_eq "$(jp job crash '{.status.active}')" "" "status.active after the restart"
expect_eq "$(jp job crash '{.status.uncountedTerminatedPods.succeeded}')" "" "uncounted succeeded"
# Every remaining pod succeeded. After a restart the controller may create a
# pod or two beyond parallelism (its in-memory expectations are gone, as in
# Kubernetes) and then delete the excess; such a pod can still finish and be
# counted before it goes. So the 200 counted successes must be the Succeeded
# pods still present plus at most the pods deleted — never more (that would
# be a double count). The deleted pods are the DELETED events of a watch from
# before the first pod (not the SuccessfulDelete Events: after the 25th Event
# about the Job the recorder's spam filter drops them, as client-go's does).
phases=$(k get pods -n "$NS" -l job-name=crash -o jsonpath='{range .items[*]}{.status.phase}{"\n"}{end}' | sort -u | tr '\n' ' ')
expect_eq "$phases" "Succeeded " "pod phases"
present=$(k get pods -n "$NS" -l job-name=crash --no-headers | wc -l)
# Prints the pods added and the pods deleted since RV0.
seen=$(k get --raw "/api/v1/namespaces/$NS/pods?watch=1&resourceVersion=$RV0&labelSelector=job-name%3Dcrash&timeoutSeconds=5" |
  python3 -c 'import json, sys
text, at, dec = sys.stdin.read(), 0, json.JSONDecoder()
names = {"ADDED": set(), "DELETED": set()}
while True:
    while at < len(text) and text[at].isspace(): at += 1
    if at == len(text): break
    e, at = dec.raw_decode(text, at)
    if e["type"] == "ERROR": sys.exit("watch: " + json.dumps(e))
    names.get(e["type"], set()).add(e["object"]["metadata"]["name"])
print(len(names["ADDED"]), len(names["DELETED"]))') || fail "the pods watch from $RV0 failed"
read -r added deleted <<<"$seen"
((added >= 200)) || fail "the watch from $RV0 saw $added pods created, fewer than the 200 that succeeded"
((present <= 200)) || fail "more than 200 Succeeded pods: $present"
created=$(k get events -n "$NS" --field-selector reason=SuccessfulCreate -o jsonpath='{range .items[*]}{.count}{"\n"}{end}' | awk '{s+=$1} END {print s+0}')
((present + deleted >= 200)) || fail "succeeded=$(jp job crash '{.status.succeeded}') but only $present Succeeded pods remain and the controller deleted $deleted (created $created): a pod was counted twice"
echo "pods: $added created, $present Succeeded present, $deleted deleted by the controller"
none_left() { [[ -z $(leftovers) ]]; }
poll 30 none_left || fail "processes of the run left after completion: $(leftovers | xargs -r ps -o pid=,args= -p | head -c 300)"
own_server_stop
none_left || fail "processes of the run left after the server stopped: $(leftovers | xargs -r ps -o pid=,args= -p | head -c 300)"
