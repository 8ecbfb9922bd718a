# e2e-parallel
# JobSet exclusive placement on simulated nodes (4 racks x 2 hosts): a JobSet
# of 5 Jobs of 2 pods with alpha.jobset.sigs.k8s.io/exclusive-topology on the
# rack label puts each Job's pods in one rack and no two Jobs in one rack;
# the fifth Job's leader waits (pod anti-affinity) until a rack frees, then
# the JobSet completes. The leaders carry the webhook's pod affinity and
# anti-affinity, the followers their leader's rack as nodeSelector. A bad
# topology annotation is refused with its field path.
source "$(dirname "$0")/lib.sh"
ensure_ns
P="$NS"
RACK=topology.batchd.io/rack
bc() { "$BIN_DIR/batchctl" -s "$SERVER" "$@"; }
trap 'k delete nodes -l "e2e-node=$P" --wait=false >/dev/null 2>&1 || true' EXIT
expect_ok bc create simulated-nodes --levels rack=4,hostname=2 --prefix "$P" --cpu 4 --memory 8Gi \
  --labels "e2e-node=$P" --taints "e2e-node=$P:NoSchedule"

jobset() {  # jobset NAME REPLICAS SIM_DURATION
  cat <<YAML | k create -f - >/dev/null
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: $1
  namespace: $NS
  annotations: {alpha.jobset.sigs.k8s.io/exclusive-topology: $RACK}
spec:
  replicatedJobs:
  - name: w
    replicas: $2
    template:
      spec:
        parallelism: 2
        completions: 2
        template:
          metadata:
            annotations: {batchd.io/sim-duration: $3}
          spec:
            restartPolicy: Never
            nodeSelector: {e2e-node: $P}
            tolerations: [{key: e2e-node, operator: Equal, value: $P, effect: NoSchedule}]
            containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
YAML
}
bound_pods() {
  k get pods -n "$NS" -l "jobset.sigs.k8s.io/jobset-name=$1" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c . || true
}
four_bound() { [[ $(bound_pods ex) == 8 ]]; }

# Placement is read from one snapshot of the pods and one of the nodes: read
# Job by Job, a slow machine could see ex-w-0 finish and ex-w-4 take its rack
# between two reads, and blame the placement for it.
jobset ex 5 30s
poll 60 four_bound || fail "8 pods of 4 Jobs not bound: $(k get pods -n "$NS" -o wide 2>&1 | head -c 800)"
pods=$(k get pods -n "$NS" -l jobset.sigs.k8s.io/jobset-name=ex \
  -o jsonpath='{range .items[*]}{.metadata.labels.batch\.kubernetes\.io/job-name}{"|"}{.spec.nodeName}{"|"}{.status.phase}{"\n"}{end}')
declare -A rack_of=()
while read -r node rack; do rack_of[$node]=$rack; done < <(k get nodes -l "e2e-node=$P" \
  -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.metadata.labels.topology\.batchd\.io/rack}{"\n"}{end}')
declare -A racks_of_job=() seen=()
while IFS="|" read -r job node phase; do
  [[ -n $node ]] || continue
  [[ $phase == Succeeded || $phase == Failed ]] && fail "a pod of $job finished before the snapshot (the 30 s run is too short here): $pods"
  racks_of_job[$job]+="${rack_of[$node]:-?} "
done <<<"$pods"
placed=0
for i in 0 1 2 3 4; do
  racks=${racks_of_job[ex-w-$i]:-}
  [[ -z $racks ]] && continue
  placed=$((placed + 1))
  read -r a b <<<"$racks"
  expect_eq "$a" "$b" "racks of ex-w-$i's two pods"
  [[ -z ${seen[$a]:-} ]] || fail "rack $a holds ex-w-$i and ${seen[$a]}: $pods"
  seen[$a]=ex-w-$i
done
expect_eq "$placed" "4" "Jobs placed"
# The fifth Job: its leader is unschedulable (anti-affinity), its follower not created.
waiting=$(k get pods -n "$NS" -l jobset.sigs.k8s.io/jobset-name=ex --field-selector spec.nodeName= -o jsonpath='{.items[*].metadata.name}')
expect_match "$waiting" '^ex-w-[0-4]-0-' "the waiting pod is a leader"
expect_contains "$(k get pod -n "$NS" "$waiting" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')" \
  "node(s) didn't match pod anti-affinity rules" "waiting leader's message"
expect_eq "$(k get pod -n "$NS" "$waiting" -o jsonpath='{.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey}')" \
  "$RACK" "leader's anti-affinity topologyKey"
follower=$(k get pods -n "$NS" -l jobset.sigs.k8s.io/jobset-name=ex,batch.kubernetes.io/job-completion-index=1 -o jsonpath='{.items[0].metadata.name}')
expect_match "$(k get pod -n "$NS" "$follower" -o jsonpath="{.spec.nodeSelector.topology\.batchd\.io/rack}")" \
  '^r[0-3]$' "a follower's rack nodeSelector"

# The first Jobs finish after 30 s; the fifth gets a rack and the JobSet completes.
done_ex() { [[ $(k get jobset -n "$NS" ex -o jsonpath='{.status.terminalState}') == Completed ]]; }
poll 120 done_ex || fail "JobSet not completed: $(k get jobset,jobs -n "$NS" 2>&1 | head -c 600)"

# A topology annotation that is no label key is refused.
expect_fail k create -f - <<YAML
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: bad, namespace: $NS, annotations: {alpha.jobset.sigs.k8s.io/exclusive-topology: "no such key"}}
spec:
  replicatedJobs:
  - name: w
    template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}
YAML
expect_contains "$OUT" 'metadata.annotations[alpha.jobset.sigs.k8s.io/exclusive-topology]: Invalid value: "no such key": must be a node label key' "bad topology"
