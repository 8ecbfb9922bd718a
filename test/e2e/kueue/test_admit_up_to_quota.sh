# e2e-parallel
# The seeds' example: ResourceFlavor `default`, ClusterQueue `cq` with cpu,
# memory and GPU quota, LocalQueues `team-a-lq` and `team-b-lq` in two
# namespaces. Jobs are admitted up to the quota and the rest wait, suspended,
# with a reason a user can act on; finishing work lets the next one in.
source "$(dirname "$0")/lib.sh"
NODE="node-$NS"
TA="$NS-a"
TB="$NS-b"
make_ns "$TA"
make_ns "$TB"
sim_node "$NODE" 32 128Gi 8

cat <<YAML | k apply -f - >/dev/null
apiVersion: $KQ
kind: ResourceFlavor
metadata: {name: default}
spec:
  nodeLabels: {e2e-node: $NODE}
  tolerations: [{key: e2e-node, operator: Equal, value: $NODE, effect: NoSchedule}]
---
apiVersion: $KQ
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu", "memory", "nvidia.com/gpu"]
    flavors:
    - name: default
      resources:
      - {name: cpu, nominalQuota: 6}
      - {name: memory, nominalQuota: 12Gi}
      - {name: nvidia.com/gpu, nominalQuota: 2}
YAML
local_queue "$TA" team-a-lq cq
local_queue "$TB" team-b-lq cq

# 5 jobs of 2 cpu each: 3 fit in 6 cpu.
JOBS="$TA/a1 $TA/a2 $TA/a3 $TB/b1 $TB/b2"
# Every queued Job is created suspended (the create response says so).
for i in 1 2 3; do
  queued_job "a$i" team-a-lq 2 1h "" 1 "$TA"
  expect_eq "$CREATED_SUSPEND" "true" "a$i spec.suspend at creation"
done
for i in 1 2; do queued_job "b$i" team-b-lq 2 1h "" 1 "$TB"; done

# jobs_where COND STATUS: the ns/job of $JOBS whose workload has COND=STATUS.
jobs_where() {
  local j
  for j in $JOBS; do
    [[ $(wl_cond "${j#*/}" "$1" "${j%/*}") == "$2" ]] && echo "$j"
  done
  return 0
}
admitted_is() { [[ $(jobs_where Admitted True | grep -c .) == "$1" ]]; }

poll 40 admitted_is 3 || fail "admitted: $(jobs_where Admitted True | xargs), want 3 of 5 (6 cpu quota, 2 cpu each)"
sleep 2
admitted_is 3 || fail "after 2 s admitted: $(jobs_where Admitted True | xargs), want still 3"

# The pending ones: suspended, QuotaReserved=False with a message naming cpu.
pending=$(jobs_where Admitted "")
[[ -n $pending ]] || pending=$(jobs_where Admitted False)
pending=${pending%%$'\n'*}
[[ -n $pending ]] || fail "no pending job among $JOBS"
pj=${pending#*/} pns=${pending%/*}
expect_eq "$(suspended "$pj" "$pns")" "true" "pending job suspended"
has_msg() { [[ -n $(wl_field "$pj" '{.status.conditions[?(@.type=="QuotaReserved")].message}' "$pns") ]]; }
poll 20 has_msg || fail "pending workload of $pending has no QuotaReserved message"
msg=$(wl_field "$pj" '{.status.conditions[?(@.type=="QuotaReserved")].message}' "$pns")
expect_contains "$msg" "cpu" "pending message"

# An admitted job runs: unsuspended, its pods get the flavor's node labels
# as nodeSelector and land on the flavor's node.
running=$(jobs_where Admitted True)
running=${running%%$'\n'*}
rj=${running#*/} rns=${running%/*}
poll 30 is_running "$rj" "$rns" || fail "admitted job $running not unsuspended"
expect_eq "$(k get job -n "$rns" "$rj" -o jsonpath='{.spec.template.spec.nodeSelector.e2e-node}')" "$NODE" "injected nodeSelector"
bound() { [[ $(k get pods -n "$rns" -l "job-name=$rj" -o jsonpath='{.items[0].spec.nodeName}') == "$NODE" ]]; }
poll 30 bound || fail "pod of $running not bound to $NODE"

# kubectl and batchctl show the queue state.
expect_contains "$(k get clusterqueue cq)" "cq" "kubectl get cq"
counts() { [[ $(k get cq cq -o jsonpath='{.status.admittedWorkloads} {.status.pendingWorkloads}') == "3 2" ]]; }
poll 20 counts || fail "cq admitted/pending: $(k get cq cq -o jsonpath='{.status.admittedWorkloads} {.status.pendingWorkloads}'), want '3 2'"
expect_contains "$(k get lq -n "$TA")" "team-a-lq" "kubectl get lq"
expect_contains "$(k get workloads -n "$TA")" "team-a-lq" "kubectl get workloads"
usage=$(k get cq cq -o jsonpath='{.status.flavorsReservation[0].resources[?(@.name=="cpu")].total}')
expect_eq "$usage" "6" "cq cpu reservation"
out=$("$BIN_DIR/batchctl" -s "$SERVER" list workloads -A --status pending)
expect_contains "$out" "Pending" "batchctl list workloads --status pending"
out=$("$BIN_DIR/batchctl" -s "$SERVER" list clusterqueues)
expect_contains "$out" "default: cpu 6/6" "batchctl list clusterqueues usage"

# A job over the whole quota (3 GPUs > 2) is never admitted; limits default
# requests.
cat <<YAML | k create -f - >/dev/null
apiVersion: batch/v1
kind: Job
metadata: {name: big, namespace: $TA, labels: {kueue.x-k8s.io/queue-name: team-a-lq}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        command: ["true"]
        resources:
          requests: {cpu: "1"}
          limits: {nvidia.com/gpu: "3"}
YAML
big_msg() { wl_field big '{.status.conditions[?(@.type=="QuotaReserved")].message}' "$TA"; }
has_big_msg() { [[ -n $(big_msg) ]]; }
poll 30 has_big_msg || fail "no pending message for the over-quota job"
expect_contains "$(big_msg)" "nvidia.com/gpu" "over-quota message"
expect_eq "$(suspended big "$TA")" "true" "over-quota job suspended"

# Deleting an admitted job frees its quota; a waiting job is admitted.
k delete job -n "$rns" "$rj" --cascade=background >/dev/null
poll 60 admitted_is 3 || fail "after deleting $running admitted: $(jobs_where Admitted True | xargs), want 3"
