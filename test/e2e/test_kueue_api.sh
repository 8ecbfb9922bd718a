# kueue.x-k8s.io served like Kueue's CRDs: v1beta2 manifests apply, kubectl
# get prints Kueue's columns, v1beta1 is served with conversion from the
# stored v1beta2, invalid objects are refused with field paths, explain and
# api-resources work.
source "$E2E_LIB"
ensure_ns
make_ns team-a-kapi

cat >"$E2E_TMP/v1beta2.yaml" <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  cohortName: research
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu", "memory", "nvidia.com/gpu"]
    flavors:
    - name: default
      resources:
      - {name: cpu, nominalQuota: 9}
      - {name: memory, nominalQuota: 36Gi}
      - {name: nvidia.com/gpu, nominalQuota: 4, borrowingLimit: 2}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: team-a-lq, namespace: $NS}
spec: {clusterQueue: cq}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: team-b-lq, namespace: team-a-kapi}
spec: {clusterQueue: cq}
YAML
expect_ok k apply -f "$E2E_TMP/v1beta2.yaml"
expect_contains "$OUT" "clusterqueue.kueue.x-k8s.io/cq created" "apply"
expect_contains "$OUT" "localqueue.kueue.x-k8s.io/team-b-lq created" "apply"

# Defaults as Kueue's CRDs: BestEffortFIFO, preemption Never, stopPolicy None.
expect_eq "$(k get cq cq -o jsonpath='{.spec.queueingStrategy}/{.spec.preemption.withinClusterQueue}/{.spec.stopPolicy}')" \
  "BestEffortFIFO/Never/None" "ClusterQueue defaults"
expect_eq "$(k get cq cq -o jsonpath='{.spec.resourceGroups[0].flavors[0].resources[1].nominalQuota}')" \
  "36Gi" "quota"

# Tables with Kueue's printer columns.
OUT=$(k get cq)
expect_match "$OUT" "NAME +COHORT +PENDING WORKLOADS" "cq table"
expect_match "$OUT" "cq +research" "cq row"
OUT=$(k get cq -o wide)
expect_match "$OUT" "STRATEGY +PENDING WORKLOADS +ADMITTED WORKLOADS" "cq wide table"
OUT=$(k get lq -n "$NS")
expect_match "$OUT" "NAME +CLUSTERQUEUE +PENDING WORKLOADS +ADMITTED WORKLOADS" "lq table"
expect_match "$OUT" "team-a-lq +cq" "lq row"
OUT=$(k get rf)
expect_match "$OUT" "NAME +AGE" "rf table"
expect_match "$OUT" "^default " "rf row"
OUT=$(k get cq,lq,rf,wl -A 2>&1)
expect_contains "$OUT" "clusterqueue.kueue.x-k8s.io/cq" "combined get"
expect_contains "$OUT" "localqueue.kueue.x-k8s.io/team-b-lq" "combined get"

cat >"$E2E_TMP/wl.yaml" <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: wl1, namespace: $NS}
spec:
  queueName: team-a-lq
  podSets:
  - count: 2
    template:
      spec:
        restartPolicy: Never
        containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
YAML
expect_ok k apply -f "$E2E_TMP/wl.yaml"
OUT=$(k get wl -n "$NS")
expect_match "$OUT" "NAME +QUEUE +RESERVED IN +ADMITTED +FINISHED +AGE" "wl table"
expect_match "$OUT" "wl1 +team-a-lq" "wl row"
expect_eq "$(k get workloads.kueue.x-k8s.io wl1 -n "$NS" -o jsonpath='{.spec.podSets[0].name}/{.spec.active}')" \
  "main/true" "workload defaults"

# v1beta1 view of the same object: cohort, not cohortName.
OUT=$(k get clusterqueues.v1beta1.kueue.x-k8s.io cq -o yaml)
expect_contains "$OUT" "apiVersion: kueue.x-k8s.io/v1beta1" "v1beta1 get"
expect_match "$OUT" "^  cohort: research" "v1beta1 get"
# (The last-applied annotation still holds the v1beta2 manifest, as in Kubernetes.)
expect_not_contains "$(k get clusterqueues.v1beta1.kueue.x-k8s.io cq -o jsonpath='{.spec}')" \
  "cohortName" "v1beta1 spec"
OUT=$(k get clusterqueues.v1beta2.kueue.x-k8s.io cq -o yaml)
expect_contains "$OUT" "cohortName: research" "v1beta2 get"

# A manifest from Kueue's v1beta1 docs ("single clusterqueue") applies unchanged.
cat >"$E2E_TMP/v1beta1.yaml" <<YAML
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: "default-flavor"
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: "cluster-queue"
spec:
  namespaceSelector: {} # match all.
  resourceGroups:
  - coveredResources: ["cpu", "memory"]
    flavors:
    - name: "default-flavor"
      resources:
      - name: "cpu"
        nominalQuota: 9
      - name: "memory"
        nominalQuota: 36Gi
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  namespace: "$NS"
  name: "user-queue"
spec:
  clusterQueue: "cluster-queue"
YAML
expect_ok k apply -f "$E2E_TMP/v1beta1.yaml"
expect_contains "$OUT" "clusterqueue.kueue.x-k8s.io/cluster-queue created" "v1beta1 apply"
expect_eq "$(k get cq cluster-queue -o jsonpath='{.apiVersion}')" "kueue.x-k8s.io/v1beta2" "preferred version"
# Applying it again writes nothing, and kubectl sees nothing to change: the
# quotas are stored as sent (9 stays a number).
RV=$(k get cq cluster-queue -o jsonpath='{.metadata.resourceVersion}')
expect_ok k apply -f "$E2E_TMP/v1beta1.yaml"
expect_contains "$OUT" "clusterqueue.kueue.x-k8s.io/cluster-queue unchanged" "v1beta1 cq re-apply"
expect_contains "$OUT" "localqueue.kueue.x-k8s.io/user-queue unchanged" "v1beta1 re-apply"
expect_eq "$(k get cq cluster-queue -o jsonpath='{.metadata.resourceVersion}')" "$RV" "re-apply is a no-op"
# A v1beta1-only spelling (cohort) sets the stored cohortName.
expect_ok k patch clusterqueues.v1beta1.kueue.x-k8s.io cluster-queue --type=merge -p '{"spec":{"cohort":"research"}}'
expect_eq "$(k get cq cluster-queue -o jsonpath='{.spec.cohortName}')" "research" "patch via v1beta1"

# Invalid: borrowingLimit without a cohort, with the field path.
cat >"$E2E_TMP/bad.yaml" <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: bad-cq}
spec:
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default
      resources:
      - {name: cpu, nominalQuota: 1, borrowingLimit: 1}
YAML
expect_fail k apply -f "$E2E_TMP/bad.yaml"
expect_contains "$OUT" 'The ClusterQueue "bad-cq" is invalid' "invalid cq"
expect_contains "$OUT" "spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit" "invalid cq path"
expect_fail k get cq bad-cq
# LocalQueue.spec.clusterQueue is immutable.
expect_fail k patch lq team-a-lq -n "$NS" --type=merge -p '{"spec":{"clusterQueue":"other"}}'
expect_contains "$OUT" "spec.clusterQueue: Invalid value: \"other\": field is immutable" "immutable"
# Unknown fields are refused under kubectl's strict validation.
expect_fail k apply -f - <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: typo}
spec: {nodeLabel: {a: b}}
YAML
expect_contains "$OUT" "nodeLabel" "strict decoding"

# explain reads the served OpenAPI.
OUT=$(k explain clusterqueue.spec)
expect_contains "$OUT" "cohortName" "explain"
expect_contains "$OUT" "resourceGroups" "explain"
OUT=$(k explain clusterqueues.spec --api-version=kueue.x-k8s.io/v1beta1)
expect_match "$OUT" "^  cohort\s" "explain v1beta1"
expect_not_contains "$OUT" "cohortName" "explain v1beta1"

# Discovery: both versions, v1beta2 preferred; Kueue's short names.
OUT=$(k api-resources --api-group=kueue.x-k8s.io)
expect_match "$OUT" "clusterqueues +cq +kueue.x-k8s.io/v1beta2 +false +ClusterQueue" "api-resources"
expect_match "$OUT" "localqueues +queue,queues,lq +kueue.x-k8s.io/v1beta2 +true +LocalQueue" "api-resources"
expect_match "$OUT" "resourceflavors +flavor,flavors,rf" "api-resources"
expect_match "$OUT" "workloads +wl" "api-resources"
OUT=$(k api-versions)
expect_contains "$OUT" "kueue.x-k8s.io/v1beta1" "api-versions"
expect_contains "$OUT" "kueue.x-k8s.io/v1beta2" "api-versions"
expect_contains "$OUT" "scheduling.k8s.io/v1" "api-versions"

# scheduling.k8s.io PriorityClass: value is immutable.
expect_ok k apply -f - <<YAML
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: kapi-high}
value: 1000
YAML
OUT=$(k get pc kapi-high)
expect_match "$OUT" "kapi-high +1000 +false" "pc table"
expect_fail k patch pc kapi-high --type=merge -p '{"value":5}'
expect_contains "$OUT" "value: Forbidden: may not be changed in an update" "pc immutable"

k delete -f "$E2E_TMP/v1beta1.yaml" >/dev/null
k delete -f "$E2E_TMP/wl.yaml" >/dev/null
k delete -f "$E2E_TMP/v1beta2.yaml" >/dev/null
k delete pc kapi-high >/dev/null
