# Helpers for the jobs suite (test/e2e/jobs/test_*.sh), sourced after the
# API suite's lib.sh ($E2E_LIB). This suite's server runs WITH the local node,
# so pods really run as host processes under batchd-shim supervisors.
# Polls run every 0.5 s (not 0.1 s): several of these tests run at once on a
# small machine, and every poll is a kubectl process.
source "${E2E_LIB:?E2E_LIB not set}"

# poll SECONDS CMD...: retries CMD every 0.5 s until it succeeds.
poll() {
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.5
  done
}

# node_credentials NODE: the flags a remote `batchd agent` joins the suite's
# server with: its node token (system:node:NODE, minted with the server's
# key, so NodeRestriction and the Node authorizer apply) and the CA its log
# port accepts client certificates from (it signed the server's kubelet
# client certificate). One word per flag and value (paths have no spaces).
node_credentials() {
  local tok="$E2E_TMP/$1.token"
  "${BIN_DIR:?}/batchctl" create node-token "$1" --data-dir "${E2E_DATA:?}" >"$tok" || return 1
  echo "--token-file $tok --client-ca-file $E2E_DATA/pki/ca.crt"
}

# A server of the test's own, for tests that kill -9 or restart it (the
# suite's must not be): own_server_start runs `batchd server` on PORT with
# DATA (output appended to LOG, pid in PID) and waits up to 30 s for /healthz;
# own_server_stop sends SIGTERM, then SIGKILL after 10 s. The test sets
# PORT=$(free_port) and SERVER to it first, so `k` talks to this server.
own_server_start() {
  "${BIN_DIR:?}/batchd" server --listen "127.0.0.1:$PORT" --allow-loopback-admin --data-dir "$DATA" >>"$LOG" 2>&1 &
  PID=$!
  local deadline=$((SECONDS + 30))
  until [[ $(curl -s -m 2 "$SERVER/healthz" 2>/dev/null) == ok ]]; do
    kill -0 "$PID" 2>/dev/null || fail "server exited while starting: $(tail -n 3 "$LOG" | tr '\n' ' ')"
    ((SECONDS < deadline)) || fail "server not healthy within 30s"
    sleep 0.2
  done
}
own_server_stop() {
  [[ -n "$PID" ]] || return 0
  kill "$PID" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$PID" 2>/dev/null || true
  wait "$PID" 2>/dev/null || true
  PID=""
}

# A marker unique to this run and test, for pgrep -f on pod processes.
new_marker() {
  echo "mk-$1-$$-$RANDOM$RANDOM"
}

# proc_alive REGEX: some process's command line matches (pgrep -f).
proc_alive() { pgrep -f -- "$1" >/dev/null; }
proc_gone() { ! pgrep -f -- "$1" >/dev/null; }

# procs_under DIR [REGEX]: pids of processes whose working directory is under
# DIR or DIR-pods (a server's default pod root beside its data dir: pod
# processes, their children included) or whose command line matches DIR or
# REGEX (shims, markers). Never this shell or its ancestors' group.
procs_under() {
  local d cwd
  for d in /proc/[0-9]*; do
    cwd=$(readlink "$d/cwd" 2>/dev/null) || continue
    [[ $cwd == "$1" || $cwd == "$1"/* || $cwd == "$1"-pods/* ]] && echo "${d#/proc/}"
  done
  pgrep -f -- "$1${2:+|$2}" || true
}

# kill_under DIR [REGEX]: SIGKILL everything procs_under finds (cleanup only).
kill_under() {
  local p
  for p in $(procs_under "$@" | sort -u); do
    [[ $p == "$$" || $p == "$BASHPID" ]] || kill -9 "$p" 2>/dev/null || true
  done
}

# proc_tree REGEX: pids of the processes matching REGEX and of their children
# (the pod's `sleep` has no marker in its command line).
proc_tree() {
  local p
  for p in $(pgrep -f -- "$1"); do
    echo "$p"
    pgrep -P "$p" || true
  done
}
# sleep_tree_up REGEX: sets TREE to proc_tree REGEX and succeeds once that
# tree includes the pod's `sleep 300`.
sleep_tree_up() {
  TREE=$(proc_tree "$1")
  [[ -n $TREE ]] && ps -o args= -p "$(paste -sd, <<<"$TREE")" | grep -q '^sleep 300'
}
# pids_gone PID...: none of them is alive.
pids_gone() {
  local p
  for p in "$@"; do ! kill -0 "$p" 2>/dev/null || return 1; done
}

# job_pods JOB: names of the Job's pods, one per line.
job_pods() {
  k get pods -n "$NS" -l "job-name=$1" -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}'
}
pod_count() { job_pods "$1" | grep -c . || true; }

# job_cond JOB TYPE: the status of condition TYPE ("" when absent).
job_cond() {
  k get job -n "$NS" "$1" -o "jsonpath={.status.conditions[?(@.type==\"$2\")].status}"
}
job_cond_is() { [[ $(job_cond "$1" "$2") == "$3" ]]; }

# running_pods JOB: names of the Job's Running pods.
running_pods() {
  k get pods -n "$NS" -l "job-name=$1" --field-selector status.phase=Running \
    -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}'
}
has_running_pod() { [[ -n $(running_pods "$1") ]]; }
no_pods() { [[ $(pod_count "$1") == 0 ]]; }

# kwait JOB CONDITION SECONDS: kubectl wait, failing the test with the Job's
# status on timeout.
kwait() {
  k wait -n "$NS" --for="condition=$2" "job/$1" --timeout="${3}s" >/dev/null 2>&1 ||
    fail "job $1 not $2 within ${3}s; status: $(k get job -n "$NS" "$1" -o jsonpath='{.status}' 2>&1 | head -c 400)"
}

# A Job running one long pod `sh -c 'sleep 300; echo MARKER'`:
# sleeper_job_yaml NAME MARKER [EXTRA_POD_SPEC_LINES (6-space indent)]
sleeper_job_yaml() {
  cat <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: $1, namespace: $NS}
spec:
  backoffLimit: 6
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 2
${3:-}
      containers:
      - name: main
        image: busybox
        command: ["sh", "-c", "sleep 300; echo $2"]
YAML
}

# The Indexed Job of the agent cut-off tests (test_agent_*.sh): 2 indexes
# at once, each pod `sh -c 'sleep 300; echo MARKER'` with a 30 s grace:
# indexed_sleeper_yaml NAME MARKER POD_SPEC_LINES (6-space indent: where the
# pods go and what they tolerate, e.g. pinned_spec's).
indexed_sleeper_yaml() {
  cat <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: $1, namespace: $NS}
spec:
  completionMode: Indexed
  completions: 2
  parallelism: 2
  backoffLimit: 6
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 30
$3
      containers:
      - name: main
        image: busybox
        command: ["sh", "-c", "sleep 300; echo $2"]
YAML
}

# start_remote_agent NODE DIR [AGENT_FLAGS...]: starts `batchd agent` for Node
# NODE with data dir DIR, labelled and tainted "NODE=yes" (NoSchedule) so only
# pods that ask land there; sets AGENT_PID and waits until the node is Ready.
# The agent's output goes to DIR.log. AGENT_SERVER, when set, is the URL it
# reaches the server by (a start_cut_proxy's PROXY_URL).
start_remote_agent() {
  local node=$1 dir=$2 port creds
  shift 2
  port=$(free_port)
  mkdir -p "$dir"
  read -ra creds <<<"$(node_credentials "$node")"
  "${BIN_DIR:?}/batchd" agent --server "${AGENT_SERVER:-$SERVER}" --node-name "$node" --data-dir "$dir" "${creds[@]}" \
    --log-port "$port" --labels "$node=yes" --taints "$node=yes:NoSchedule" "$@" \
    >"$dir.log" 2>&1 &
  AGENT_PID=$!
  poll 30 node_ready_is "$node" True ||
    fail "node $node not Ready within 30s; agent log: $(tail -n 3 "$dir.log" | tr '\n' ' ')"
}
node_ready_is() {
  [[ $(k get node "$1" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}') == "$2" ]]
}
# pinned_spec NODE [INDENT [TOLERATION...]]: pod spec lines (indented by
# INDENT, default 6 spaces: a Job's template) that put a pod on NODE only;
# each TOLERATION (a flow mapping, "{key: ..., operator: ...}") is tolerated
# too.
pinned_spec() {
  local in=${2-      } tols="{key: $1, operator: Exists}" t
  for t in "${@:3}"; do tols+=", $t"; done
  printf '%snodeSelector: {%s: "yes"}\n%stolerations: [%s]\n' "$in" "$1" "$in" "$tols"
}

# --- Cutting a remote agent off (test_agent_*.sh) ---

# start_cut_proxy PORT: a TCP proxy from a free loopback port to the server
# on PORT, one thread per direction per connection; sets PROXY_PID and
# PROXY_URL. Freezing it (kill -STOP "$PROXY_PID") cuts whatever goes through
# it as a network partition does: connections stay open, nothing passes, and
# what it holds flows again on kill -CONT.
start_cut_proxy() {
  local listen
  listen=$(free_port)
  cat >"$E2E_TMP/proxy.py" <<'PY'
import socket, sys, threading
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", int(sys.argv[1])))
ls.listen(64)
def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    for s in (a, b):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
while True:
    c, _ = ls.accept()
    try:
        u = socket.create_connection(("127.0.0.1", int(sys.argv[2])))
    except OSError:
        c.close()
        continue
    threading.Thread(target=pipe, args=(c, u), daemon=True).start()
    threading.Thread(target=pipe, args=(u, c), daemon=True).start()
PY
  python3 "$E2E_TMP/proxy.py" "$listen" "$1" >"$E2E_TMP/proxy.log" 2>&1 &
  PROXY_PID=$!
  PROXY_URL="http://127.0.0.1:$listen"
  poll 30 bash -c "exec 3<>/dev/tcp/127.0.0.1/$listen" || fail "the proxy does not listen: $(cat "$E2E_TMP/proxy.log")"
}

# index_procs MARK N: how many processes of pods whose command line carries
# MARK run completion index N (JOB_COMPLETION_INDEX in their environment), on
# any node.
index_procs() {
  local p n=0
  for p in $(pgrep -f -- "$1"); do
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "JOB_COMPLETION_INDEX=$2" && n=$((n + 1))
  done
  echo "$n"
}

# start_index_sampler MARK OUT MIN PERIOD INDEX...: every PERIOD seconds
# until stopped (stop_index_sampler), appends a line to OUT for each INDEX run
# by more than one process (it ran twice at once) or, with MIN 1, by none (it
# was lost); sets SAMPLER_PID. An empty OUT at the end: no sampled moment
# broke that.
start_index_sampler() {
  local mark=$1 out=$2 min=$3 period=$4
  shift 4
  : >"$out"
  ( while :; do
      for i in "$@"; do
        n=$(index_procs "$mark" "$i")
        ((n <= 1 && n >= min)) || echo "$(date +%T.%N) index $i: $n processes"
      done
      sleep "$period"
    done ) >>"$out" 2>/dev/null &
  SAMPLER_PID=$!
}
stop_index_sampler() {
  kill -9 "${SAMPLER_PID:-}" 2>/dev/null || true
  wait "${SAMPLER_PID:-}" 2>/dev/null || true
}
