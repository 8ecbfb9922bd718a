# Helpers for the kueue suite (test/e2e/kueue/test_*.sh), sourced after the
# API suite's lib.sh ($E2E_LIB). This suite's server runs with
# --no-local-node: pods run on simulated nodes that each test creates, so
# the tests check queueing and admission, not processes. Cluster-scoped
# objects (ClusterQueues, flavors, nodes) are named after the test's
# namespace so tests can run side by side.
source "${E2E_LIB:?E2E_LIB not set}"

KQ=kueue.x-k8s.io/v1beta2

# poll SECONDS CMD...: retries CMD every 0.5 s until it succeeds.
poll() {
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.5
  done
}

# sim_node NAME CPU MEMORY [GPUS]: a simulated node labelled e2e-node=NAME and
# tainted e2e-node=NAME:NoSchedule, so only pods of this test's flavors (which
# carry the label as nodeLabels and the toleration) land on it.
sim_node() {
  cat <<JSON | k apply -f - >/dev/null
{"apiVersion": "v1", "kind": "Node",
 "metadata": {"name": "$1", "annotations": {"batchd.io/simulated": "true"},
              "labels": {"kubernetes.io/hostname": "$1", "e2e-node": "$1"}},
 "spec": {"taints": [{"key": "e2e-node", "value": "$1", "effect": "NoSchedule"}]},
 "status": {"capacity": {"cpu": "$2", "memory": "$3", "pods": "110", "nvidia.com/gpu": "${4:-0}"},
            "allocatable": {"cpu": "$2", "memory": "$3", "pods": "110", "nvidia.com/gpu": "${4:-0}"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}}
JSON
}

# flavor NAME NODE: a ResourceFlavor that selects NODE and tolerates its taint.
flavor() {
  cat <<YAML | k apply -f - >/dev/null
apiVersion: $KQ
kind: ResourceFlavor
metadata: {name: $1}
spec:
  nodeLabels: {e2e-node: $2}
  tolerations: [{key: e2e-node, operator: Equal, value: $2, effect: NoSchedule}]
YAML
}

# local_queue NAMESPACE NAME CLUSTERQUEUE
local_queue() {
  printf 'apiVersion: %s\nkind: LocalQueue\nmetadata: {name: %s, namespace: %s}\nspec: {clusterQueue: %s}\n' \
    "$KQ" "$2" "$1" "$3" | k apply -f - >/dev/null
}

# priority_class NAME VALUE: a WorkloadPriorityClass.
priority_class() {
  printf 'apiVersion: %s\nkind: WorkloadPriorityClass\nmetadata: {name: %s}\nvalue: %s\n' \
    "$KQ" "$1" "$2" | k apply -f - >/dev/null
}

# queued_job NAME QUEUE CPU DURATION [PRIORITY_CLASS] [PARALLELISM] [NAMESPACE]:
# a Job in QUEUE whose pods each request CPU and run DURATION on a simulated
# node. Leaves the Job's spec.suspend as the create response had it in
# $CREATED_SUSPEND.
queued_job() {
  local prio=""
  [[ -n "${5:-}" ]] && prio=", kueue.x-k8s.io/priority-class: $5"
  CREATED_SUSPEND=$(cat <<YAML | k create -f - -o jsonpath='{.spec.suspend}'

apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  namespace: ${7:-$NS}
  labels: {kueue.x-k8s.io/queue-name: $2$prio}
spec:
  parallelism: ${6:-1}
  completions: ${6:-1}
  template:
    metadata:
      annotations: {batchd.io/sim-duration: $4}
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        command: ["true"]
        resources:
          requests: {cpu: "$3", memory: 100Mi}
YAML
)
}

# owned_wl KIND NAME [NAMESPACE]: the name of the Workload that the object
# KIND/NAME (Job, JobSet) owns ("" if none).
owned_wl() {
  k get workloads.kueue.x-k8s.io -n "${3:-$NS}" -o json | python3 -c '
import json, sys
for w in json.load(sys.stdin)["items"]:
    for o in w["metadata"].get("ownerReferences", []):
        if o.get("kind") == sys.argv[1] and o.get("name") == sys.argv[2]:
            print(w["metadata"]["name"]); sys.exit(0)' "$1" "$2"
}
# wl_of JOB [NAMESPACE]: the name of the Workload the Job owns ("" if none).
wl_of() { owned_wl Job "$1" "${2:-$NS}"; }
has_wl() { [[ -n $(wl_of "$@") ]]; }
# jobset_wl JOBSET [NAMESPACE]: the Workload the JobSet owns ("" if none).
jobset_wl() { owned_wl JobSet "$1" "${2:-$NS}"; }
has_jobset_wl() { [[ -n $(jobset_wl "$@") ]]; }
# wl_event_messages JOB REASON: the messages of the Events with REASON on the
# Workload the Job owns, one per line (nothing when it has no Workload).
# Events outlive a condition a slow poll may miss on a loaded machine.
wl_event_messages() {
  local wl
  wl=$(wl_of "$1") || return 1
  [[ -n $wl ]] || return 0
  k get events -n "$NS" --field-selector "involvedObject.kind=Workload,involvedObject.name=$wl,reason=$2" \
    -o jsonpath='{range .items[*]}{.message}{"\n"}{end}'
}

# queued_jobset NAME QUEUE DURATION RJOB...: a JobSet in QUEUE with a
# replicated job per RJOB ("NAME:REPLICAS[:PODS]", PODS pods per child Job,
# default 1) whose pods each request 1 cpu and run DURATION on a simulated
# node. Leaves the JobSet's spec.suspend as the create response had it in
# $CREATED_SUSPEND.
queued_jobset() {
  local name=$1 queue=$2 dur=$3 rj n r p
  shift 3
  {
    cat <<YAML
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: $name
  namespace: $NS
  labels: {kueue.x-k8s.io/queue-name: $queue}
spec:
  replicatedJobs:
YAML
    for rj in "$@"; do
      IFS=: read -r n r p <<<"$rj"
      cat <<YAML
  - name: $n
    replicas: $r
    template:
      spec:
        parallelism: ${p:-1}
        completions: ${p:-1}
        template:
          metadata:
            annotations: {batchd.io/sim-duration: $dur}
          spec:
            restartPolicy: Never
            containers: [{name: main, image: busybox, resources: {requests: {cpu: "1", memory: 100Mi}}}]
YAML
    done
  } >"$E2E_TMP/jobset-$name.yaml"
  CREATED_SUSPEND=$(k create -f "$E2E_TMP/jobset-$name.yaml" -o jsonpath='{.spec.suspend}')
}

# wl_cond JOB TYPE [NAMESPACE]: status of the Job's Workload condition TYPE.
wl_cond() {
  local wl
  wl=$(wl_of "$1" "${3:-$NS}")
  [[ -n $wl ]] || return 0
  k get workloads.kueue.x-k8s.io -n "${3:-$NS}" "$wl" \
    -o "jsonpath={.status.conditions[?(@.type==\"$2\")].status}"
}
wl_cond_is() { [[ $(wl_cond "$1" "$2" "${4:-$NS}") == "$3" ]]; }
# wl_field JOB JSONPATH [NAMESPACE]
wl_field() {
  local wl
  wl=$(wl_of "$1" "${3:-$NS}")
  [[ -n $wl ]] || return 0
  k get workloads.kueue.x-k8s.io -n "${3:-$NS}" "$wl" -o "jsonpath=$2"
}

# suspended JOB [NAMESPACE]: "true" or "false".
suspended() { k get job -n "${2:-$NS}" "$1" -o jsonpath='{.spec.suspend}'; }
is_running() { [[ $(suspended "$1" "${2:-}") == false ]]; }
is_suspended() { [[ $(suspended "$1" "${2:-}") == true ]]; }

# admitted_count JOB...: how many of the Jobs have an Admitted workload.
admitted_count() {
  local n=0 j
  for j in "$@"; do
    [[ $(wl_cond "$j" Admitted) == True ]] && n=$((n + 1))
  done
  echo "$n"
}
admitted_count_is() { local want=$1; shift; [[ $(admitted_count "$@") == "$want" ]]; }

# job_pods JOB [NAMESPACE]: names of the Job's pods, one per line.
job_pods() {
  k get pods -n "${2:-$NS}" -l "job-name=$1" -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}'
}
no_pods() { [[ -z $(job_pods "$@") ]]; }

# kwait JOB CONDITION SECONDS
kwait() {
  k wait -n "$NS" --for="condition=$2" "job/$1" --timeout="${3}s" >/dev/null 2>&1 ||
    fail "job $1 not $2 within ${3}s; status: $(k get job -n "$NS" "$1" -o jsonpath='{.status}' 2>&1 | head -c 400)"
}

# cluster_queue NAME FLAVOR CPU MEMORY [SPEC_LINE...]: a ClusterQueue open
# to every namespace with cpu/memory quota in FLAVOR; each SPEC_LINE is one
# more `key: value` line of its spec, e.g. "queueingStrategy: StrictFIFO".
cluster_queue() {
  local name=$1 flavor=$2 cpu=$3 mem=$4 extra="" line
  shift 4
  for line in "$@"; do extra+="  $line"$'\n'; done
  cat <<YAML | k apply -f - >/dev/null
apiVersion: $KQ
kind: ClusterQueue
metadata: {name: $name}
spec:
  namespaceSelector: {}
${extra}  resourceGroups:
  - coveredResources: ["cpu", "memory"]
    flavors:
    - name: $flavor
      resources:
      - {name: cpu, nominalQuota: $cpu}
      - {name: memory, nominalQuota: $mem}
YAML
}
