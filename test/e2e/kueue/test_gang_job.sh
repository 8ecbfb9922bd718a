# e2e-parallel
# A queued Indexed Job with parallelism = completions = 4 under
# WorkloadWithJob: Kueue creates it suspended and, with 3 cpu of quota for
# 4, keeps it so: no pods and no scheduling.k8s.io Workload. The quota
# grows, the Job is admitted and unsuspended, and the Job controller
# creates its Workload and PodGroup, then its pods, which the scheduler
# binds all at once on the flavor's node.
source "$(dirname "$0")/lib.sh"
NODE="node-$NS"
sim_node "$NODE" 6 16Gi
flavor "$NS-flavor" "$NODE"
cluster_queue() {  # cluster_queue CPU_QUOTA
  cat <<YAML | k apply -f - >/dev/null
apiVersion: $KQ
kind: ClusterQueue
metadata: {name: $NS-cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu", "memory"]
    flavors:
    - name: $NS-flavor
      resources:
      - {name: cpu, nominalQuota: ${CPU_QUOTA:-3}}
      - {name: memory, nominalQuota: 8Gi}
YAML
}
CPU_QUOTA=3 cluster_queue
ensure_ns
local_queue "$NS" lq "$NS-cq"
cleanup() {
  k delete clusterqueue "$NS-cq" --wait=false >/dev/null 2>&1 || true
  k delete resourceflavor "$NS-flavor" --wait=false >/dev/null 2>&1 || true
  k delete node "$NODE" --wait=false >/dev/null 2>&1 || true
}
trap cleanup EXIT

SUSPENDED=$(cat <<YAML | k create -f - -o jsonpath='{.spec.suspend}'
apiVersion: batch/v1
kind: Job
metadata: {name: gang, namespace: $NS, labels: {kueue.x-k8s.io/queue-name: lq}}
spec:
  parallelism: 4
  completions: 4
  completionMode: Indexed
  template:
    metadata: {annotations: {batchd.io/sim-duration: 1h}}
    spec:
      restartPolicy: Never
      containers:
      - {name: main, image: busybox, resources: {requests: {cpu: "1", memory: 1Gi}}}
YAML
)
expect_eq "$SUSPENDED" "true" "queued Job created suspended"
pending() { [[ -n $(wl_field gang '{.status.conditions[?(@.type=="QuotaReserved")].message}') ]]; }
poll 30 pending || fail "queued Job not reported pending"
expect_eq "$(suspended gang)" "true" "Job over quota stays suspended"
expect_eq "$(k get workloads.scheduling.k8s.io -n "$NS" -o name)" "" "no gang Workload while suspended"
expect_eq "$(k get pods -n "$NS" -o name)" "" "no pods while suspended"
CPU_QUOTA=4 cluster_queue

bound() {
  k get pods -n "$NS" -l batch.kubernetes.io/job-name=gang \
    -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c "^$NODE$" || true
}
all_bound() { [[ $(bound) == 4 ]]; }
poll 60 all_bound || fail "gang not bound after admission: $(k get pods -n "$NS" -o wide)"
expect_eq "$(k get job gang -n "$NS" -o jsonpath='{.spec.suspend}')" "false" "admitted Job unsuspended"
PG=$(k get podgroups -n "$NS" -o jsonpath='{.items[0].metadata.name}')
expect_eq "$(k get podgroup "$PG" -n "$NS" -o jsonpath='{.spec.schedulingPolicy.gang.minCount}')" "4" "PodGroup minCount"
expect_eq "$(k get workloads.scheduling.k8s.io -n "$NS" -o jsonpath='{.items[0].spec.controllerRef.name}')" \
  "gang" "gang Workload of the Job"
for p in $(k get pods -n "$NS" -l batch.kubernetes.io/job-name=gang -o name); do
  expect_eq "$(k get "$p" -n "$NS" -o jsonpath='{.spec.schedulingGroup.podGroupName}')" "$PG" "$p group"
done
expect_eq "$(k get podgroup "$PG" -n "$NS" -o jsonpath='{.status.conditions[?(@.type=="PodGroupScheduled")].status}')" \
  "True" "PodGroupScheduled"
