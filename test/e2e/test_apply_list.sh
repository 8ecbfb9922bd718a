# Backup and restore with kubectl alone: `kubectl get -o yaml` writes a
# `kind: List`, which `kubectl apply -f` validates against /openapi/v2 (served
# as protobuf); the deleted Jobs and Kueue objects come back. An unchanged
# Kueue manifest with numeric quotas re-applies as "unchanged".
source "$E2E_LIB"
ensure_ns

# /openapi/v2: protobuf as kubectl asks, JSON otherwise, 406 Status else.
ct=$(curl -s -o "$E2E_TMP/v2.pb" -w '%{content_type}' \
  -H 'Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf' "$SERVER/openapi/v2")
expect_eq "$ct" "application/com.github.proto-openapi.spec.v2.v1.0+protobuf" "v2 protobuf type"
[[ $(stat -c %s "$E2E_TMP/v2.pb") -gt 10000 ]] || fail "v2 protobuf document too small"
OUT=$(curl -s -H 'Accept: application/json' "$SERVER/openapi/v2")
expect_contains "$OUT" '"swagger":"2.0"' "v2 json"
expect_contains "$OUT" '"io.k8s.api.batch.v1.Job":{' "v2 json Job definition"
OUT=$(curl -s -w ' %{http_code}' -H 'Accept: text/html' "$SERVER/openapi/v2")
expect_contains "$OUT" '"reason":"NotAcceptable"' "v2 unacceptable type"
expect_contains "$OUT" ' 406' "v2 unacceptable code"

# Client-side validation against v2 still refuses a bad List item.
cat >"$E2E_TMP/bad-list.yaml" <<YAML
apiVersion: v1
kind: List
items:
- apiVersion: batch/v1
  kind: Job
  metadata: {name: bad, namespace: $NS}
  spec:
    bogusField: 1
    template:
      spec:
        restartPolicy: Never
        containers: [{name: main, image: busybox}]
YAML
expect_fail k apply -f "$E2E_TMP/bad-list.yaml"
expect_contains "$OUT" "bogusField" "unknown field in a List item"

# Every listable kind exported as one List passes kubectl's validation
# against /openapi/v2 (a client-side dry run writes nothing).
kinds=$(k api-resources --verbs=list -o name | paste -sd, -)
k get "$kinds" -A -o yaml >"$E2E_TMP/everything.yaml"
expect_ok k apply --dry-run=client -f "$E2E_TMP/everything.yaml"
expect_not_contains "$OUT" "error" "validation of every kind"
expect_contains "$OUT" "namespace/default" "the export named objects"

# Jobs: back up, delete, restore.
for n in one two; do
  job_yaml "$n" "    tier: backup" | k apply -f - >/dev/null
done
uid_one=$(jp job one '{.metadata.uid}')
k get jobs -n "$NS" -o yaml >"$E2E_TMP/all.yaml"
expect_match "$(cat "$E2E_TMP/all.yaml")" "^kind: List" "backup is a List"
expect_ok k delete jobs --all -n "$NS"
expect_eq "$(k get jobs -n "$NS" -o name)" "" "jobs deleted"
expect_ok k apply -f "$E2E_TMP/all.yaml"
expect_contains "$OUT" "job.batch/one created" "restore one"
expect_contains "$OUT" "job.batch/two created" "restore two"
expect_eq "$(jp job two '{.metadata.labels.tier}')" "backup" "restored label"
expect_ne "$(jp job one '{.metadata.uid}')" "$uid_one" "a new object"
# The restored Jobs select their own pods, not the old objects'.
uid_new=$(jp job one '{.metadata.uid}')
expect_eq "$(jp job one '{.spec.selector.matchLabels.batch\.kubernetes\.io/controller-uid}')" "$uid_new" "own selector"

# Kueue objects: the same round trip, and numeric quotas re-apply unchanged.
cat >"$E2E_TMP/kueue.yaml" <<YAML
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: backup-flavor
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: backup-cq
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu", "memory"]
    flavors:
    - name: "backup-flavor"
      resources:
      - name: "cpu"
        nominalQuota: 9
      - name: "memory"
        nominalQuota: 36Gi
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  namespace: $NS
  name: backup-lq
spec:
  clusterQueue: backup-cq
YAML
expect_ok k apply -f "$E2E_TMP/kueue.yaml"
expect_contains "$OUT" "clusterqueue.kueue.x-k8s.io/backup-cq created" "kueue apply"
rv=$(k get cq backup-cq -o jsonpath='{.metadata.resourceVersion}')
expect_ok k apply -f "$E2E_TMP/kueue.yaml"
expect_contains "$OUT" "resourceflavor.kueue.x-k8s.io/backup-flavor unchanged" "rf re-apply"
expect_contains "$OUT" "clusterqueue.kueue.x-k8s.io/backup-cq unchanged" "cq re-apply"
expect_contains "$OUT" "localqueue.kueue.x-k8s.io/backup-lq unchanged" "lq re-apply"
expect_eq "$(k get cq backup-cq -o jsonpath='{.metadata.resourceVersion}')" "$rv" "re-apply wrote nothing"
expect_eq "$(k get cq backup-cq -o jsonpath='{.spec.resourceGroups[0].flavors[0].resources[0].nominalQuota}')" \
  "9" "quota as sent"

k get cq backup-cq -o yaml >"$E2E_TMP/cq.yaml"
k get lq -n "$NS" -o yaml >"$E2E_TMP/lq.yaml"
expect_ok k delete lq backup-lq -n "$NS"
expect_ok k delete cq backup-cq
expect_ok k apply -f "$E2E_TMP/cq.yaml"
expect_contains "$OUT" "clusterqueue.kueue.x-k8s.io/backup-cq created" "cq restore"
expect_ok k apply -f "$E2E_TMP/lq.yaml"
expect_contains "$OUT" "localqueue.kueue.x-k8s.io/backup-lq created" "lq restore (List)"
expect_eq "$(k get cq backup-cq -o jsonpath='{.spec.resourceGroups[0].flavors[0].resources[1].nominalQuota}')" \
  "36Gi" "restored quota"
k delete lq backup-lq -n "$NS" >/dev/null
k delete cq backup-cq >/dev/null
k delete rf backup-flavor >/dev/null
