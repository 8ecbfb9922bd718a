# e2e-parallel
# MultiKueue across three batchd servers on this machine: this suite's
# server is the manager; two workers (extra `batchd server`s on free
# loopback ports, simulated nodes only) are its MultiKueueClusters, reached
# through kubeconfig Secrets. Worker w1 has room, w2 has none.
#  - the clusters and the check become Active;
#  - a Job in the manager's queue (managedBy kueue.x-k8s.io/multikueue,
#    defaulted) runs
#    on w1 only, its status is mirrored back, and it completes on the manager
#    without a pod there;
#  - deleting a running Job on the manager deletes its copy on the worker;
#  - a JobSet (managedBy defaulted) runs on w1, its child Jobs there only,
#    and its status (replicatedJobsStatus, Completed) reaches the manager;
#  - killing the worker that runs a job requeues it (workerLostTimeout 6s in
#    config.yaml) and it runs on the other worker, once w2 has room.
source "$(dirname "$0")/lib.sh"
ensure_ns
P="$NS"
WORKER_PIDS=()
cleanup() {
  local pid
  for pid in "${WORKER_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${WORKER_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  k delete jobs,jobsets.jobset.x-k8s.io -n "$NS" --all --wait=false >/dev/null 2>&1 || true
  k delete multikueueclusters "$P-w1" "$P-w2" --wait=false >/dev/null 2>&1 || true
}
trap cleanup EXIT

# start_worker NAME: a `batchd server` on a free port; prints the port.
start_worker() {
  local port
  port=$(free_port)
  "$BIN_DIR/batchd" server --listen "127.0.0.1:$port" --allow-loopback-admin \
    --data-dir "$E2E_TMP/$1-data" --no-local-node >"$E2E_TMP/$1.log" 2>&1 &
  WORKER_PIDS+=($!)
  W_PORT=$port
}
start_worker w1; W1=$W_PORT
start_worker w2; W2=$W_PORT
healthy() { curl -fsS "http://127.0.0.1:$1/readyz" >/dev/null; }
poll 30 healthy "$W1" || fail "worker w1 not ready: $(tail -n 3 "$E2E_TMP/w1.log")"
poll 30 healthy "$W2" || fail "worker w2 not ready: $(tail -n 3 "$E2E_TMP/w2.log")"

# Each worker mirrors the manager's namespace and LocalQueue; w2's quota is
# too small for the job.
setup_worker() {  # PORT CPU_QUOTA
  SERVER="http://127.0.0.1:$1" make_ns "$NS"
  SERVER="http://127.0.0.1:$1" sim_node "$P-node" 4 8Gi
  SERVER="http://127.0.0.1:$1" flavor "$P" "$P-node"
  SERVER="http://127.0.0.1:$1" cluster_queue "$P" "$P" "$2" 8Gi
  SERVER="http://127.0.0.1:$1" local_queue "$NS" mk "$P"
}
setup_worker "$W1" 4
setup_worker "$W2" 500m
kw1() { SERVER="http://127.0.0.1:$W1" k "$@"; }

# The manager: kubeconfig Secrets in kueue-system, the clusters, the config,
# the check and a ClusterQueue that uses it.
k get namespace kueue-system >/dev/null 2>&1 || make_ns kueue-system
for w in w1 w2; do
  port=$W1; [[ $w == w2 ]] && port=$W2
  cat >"$E2E_TMP/$w.kubeconfig" <<YAML
apiVersion: v1
kind: Config
clusters: [{name: $w, cluster: {server: "http://127.0.0.1:$port"}}]
users: [{name: admin, user: {}}]
contexts: [{name: $w, context: {cluster: $w, user: admin}}]
current-context: $w
YAML
  k create secret generic "$P-$w" -n kueue-system --from-file=kubeconfig="$E2E_TMP/$w.kubeconfig" \
    >/dev/null
  cat <<YAML | k apply -f - >/dev/null
apiVersion: $KQ
kind: MultiKueueCluster
metadata: {name: $P-$w}
spec: {clusterSource: {kubeConfig: {locationType: Secret, location: $P-$w}}}
YAML
done
cat <<YAML | k apply -f - >/dev/null
apiVersion: $KQ
kind: MultiKueueConfig
metadata: {name: $P}
spec: {clusters: [$P-w1, $P-w2]}
---
apiVersion: $KQ
kind: AdmissionCheck
metadata: {name: $P}
spec:
  controllerName: kueue.x-k8s.io/multikueue
  parameters: {apiGroup: kueue.x-k8s.io, kind: MultiKueueConfig, name: $P}
YAML
sim_node "$P-mgr" 8 16Gi
flavor "$P" "$P-mgr"
cluster_queue "$P" "$P" 8 16Gi "admissionChecksStrategy: {admissionChecks: [{name: $P}]}"
local_queue "$NS" mk "$P"

mkc_active() { [[ $(k get mkc "$1" -o jsonpath='{.status.conditions[?(@.type=="Active")].status}') == True ]]; }
poll 30 mkc_active "$P-w1" || fail "cluster w1 not Active: $(k get mkc "$P-w1" -o jsonpath='{.status.conditions}')"
poll 30 mkc_active "$P-w2" || fail "cluster w2 not Active"
expect_eq "$(k get mkc "$P-w1" -o jsonpath='{.status.conditions[?(@.type=="Active")].reason}')" "Active" "cluster reason"
cq_ready() { [[ $(k get cq "$P" -o jsonpath='{.status.conditions[?(@.type=="Active")].reason}') == Ready ]]; }
poll 30 cq_ready || fail "ClusterQueue with the MultiKueue check not Active"

# mk_job NAME DURATION [MANAGED_BY_LINE]
mk_job() {
  cat <<YAML | k create -f - >/dev/null
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  namespace: $NS
  labels: {kueue.x-k8s.io/queue-name: mk}
spec:
  ${3:-}
  template:
    metadata:
      annotations: {batchd.io/sim-duration: $2}
    spec:
      restartPolicy: Never
      containers:
      - {name: main, image: busybox, command: ["true"], resources: {requests: {cpu: "1", memory: 100Mi}}}
YAML
}

# --- a job runs on the worker with room and completes on the manager ---
mk_job done 3s  # managedBy defaulted: its queue uses MultiKueue
expect_eq "$(k get job -n "$NS" done -o jsonpath='{.spec.managedBy}')" \
  "kueue.x-k8s.io/multikueue" "defaulted managedBy"
check_ready() { [[ $(wl_field done '{.status.admissionChecks[0].state}') == Ready ]]; }
poll 40 check_ready || fail "check not Ready: $(wl_field done '{.status}') W1: $(kw1 get workloads.kueue.x-k8s.io -n "$NS" -o json | head -c 3000)"
expect_eq "$(wl_field done '{.status.clusterName}')" "$P-w1" "the worker with room"
expect_contains "$(wl_field done '{.status.admissionChecks[0].message}')" \
  "The workload got reservation on \"$P-w1\"" "check message"
kwait done complete 60
expect_eq "$(k get job -n "$NS" done -o jsonpath='{.status.succeeded}')" "1" "succeeded, mirrored"
poll 20 wl_cond_is done Finished True || fail "manager workload not Finished"
expect_eq "$(job_pods done)" "" "pods on the manager"
# Never on w2 (no room there), and the copies go once finished.
expect_eq "$(SERVER="http://127.0.0.1:$W2" k get jobs -n "$NS" -o name)" "" "jobs on w2"
gone_on_w1() { [[ -z $(kw1 get jobs,workloads.kueue.x-k8s.io -n "$NS" -o name) ]]; }
poll 30 gone_on_w1 || fail "copies left on w1: $(kw1 get jobs,workloads.kueue.x-k8s.io -n "$NS" -o name)"

# --- deleting a running job on the manager deletes it on the worker ---
mk_job long 300s "managedBy: kueue.x-k8s.io/multikueue"
remote_active_of() { [[ $(SERVER="http://127.0.0.1:$2" k get job -n "$NS" "$1" -o jsonpath='{.status.active}') == 1 ]]; }
remote_active() { remote_active_of long "$W1"; }
poll 40 remote_active || fail "long not running on w1"
mirrored() { [[ $(k get job -n "$NS" long -o jsonpath='{.status.active}') == 1 ]]; }
poll 20 mirrored || fail "status not mirrored: $(k get job -n "$NS" long -o jsonpath='{.status}')"
expect_eq "$(job_pods long)" "" "pods on the manager"
k delete job -n "$NS" long --wait=false >/dev/null
remote_gone() { ! kw1 get job -n "$NS" long >/dev/null 2>&1; }
poll 40 remote_gone || fail "job still on w1 after its deletion on the manager"
wl_gone() { [[ -z $(kw1 get workloads.kueue.x-k8s.io -n "$NS" -o name) ]]; }
poll 20 wl_gone || fail "workload copy still on w1"

# --- a JobSet runs on the worker with room; its status reaches the manager ---
queued_jobset js mk 3s w:2
expect_eq "$(k get jobsets.jobset.x-k8s.io -n "$NS" js -o jsonpath='{.spec.managedBy}')" \
  "kueue.x-k8s.io/multikueue" "defaulted managedBy (JobSet)"
poll 30 has_jobset_wl js || fail "no Workload for the JobSet"
JSWL=$(jobset_wl js)
js_wl_field() { k get workloads.kueue.x-k8s.io -n "$NS" "$JSWL" -o "jsonpath=$1"; }
js_ready() { [[ $(js_wl_field '{.status.admissionChecks[0].state}') == Ready ]]; }
poll 40 js_ready || fail "JobSet check not Ready: $(js_wl_field '{.status.admissionChecks}')"
expect_eq "$(js_wl_field '{.status.clusterName}')" "$P-w1" "the JobSet's worker"
js_completed() {
  [[ $(k get jobsets.jobset.x-k8s.io -n "$NS" js -o jsonpath='{.status.terminalState}') == Completed ]]
}
poll 60 js_completed ||
  fail "JobSet not Completed on the manager: $(k get jobsets.jobset.x-k8s.io -n "$NS" js -o jsonpath='{.status}')"
expect_eq "$(k get jobsets.jobset.x-k8s.io -n "$NS" js -o jsonpath='{.status.replicatedJobsStatus[0].succeeded}')" \
  "2" "replicatedJobsStatus mirrored from w1"
js_finished() { [[ $(js_wl_field '{.status.conditions[?(@.type=="Finished")].status}') == True ]]; }
poll 20 js_finished || fail "the JobSet's manager Workload not Finished"
# Its child Jobs ran on w1, none on the manager; the copies go once finished.
expect_eq "$(k get jobs -n "$NS" -l jobset.sigs.k8s.io/jobset-name=js -o name)" "" "child Jobs on the manager"
js_gone_on_w1() { [[ -z $(kw1 get jobsets.jobset.x-k8s.io,workloads.kueue.x-k8s.io -n "$NS" -o name) ]]; }
poll 30 js_gone_on_w1 ||
  fail "copies left on w1: $(kw1 get jobsets.jobset.x-k8s.io,workloads.kueue.x-k8s.io -n "$NS" -o name)"

# --- a lost worker: the job is requeued and runs on the other one ---
mk_job moved 300s
poll 40 remote_active_of moved "$W1" || fail "moved not running on w1"
SERVER="http://127.0.0.1:$W2" cluster_queue "$P" "$P" 4 8Gi  # now w2 has room
kill "${WORKER_PIDS[0]}"
wait "${WORKER_PIDS[0]}" 2>/dev/null || true
on_w2() { [[ $(wl_field moved '{.status.clusterName}') == "$P-w2" ]]; }
poll 60 on_w2 || fail "moved not re-dispatched to w2: $(wl_field moved '{.status.admissionChecks}')"
poll 30 remote_active_of moved "$W2" || fail "moved not running on w2"
mirrored_moved() { [[ $(k get job -n "$NS" moved -o jsonpath='{.status.active}') == 1 ]]; }
poll 20 mirrored_moved || fail "moved: status not mirrored from w2"
expect_contains "$(wl_field moved '{.status.admissionChecks[0].message}')" \
  "The workload got reservation on \"$P-w2\"" "check message after the move"
expect_eq "$(wl_field moved '{.status.admissionChecks[0].state}')" "Ready" "check after the move"

