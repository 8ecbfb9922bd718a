# kubectl apply --server-side: field managers in metadata.managedFields, a
# conflict between two managers (409 with Kubernetes' message), its
# resolution with --force-conflicts, removal of fields a manager drops, and
# Update operations (kubectl label) recorded as owners.
source "$E2E_LIB"
ensure_ns

manifest() {  # manifest BACKOFF [EXTRA_LABEL_LINES] [EXTRA_SPEC_LINES]
  cat <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: ssa
  namespace: $NS
  labels:
    app: e2e
${2:-}
spec:
${1:+  backoffLimit: $1}
${3:-}
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        command: ["true"]
YAML
}
fields_of() {  # fields_of MANAGER: that manager's fieldsV1, as JSON
  k get job ssa -n "$NS" -o json --show-managed-fields |
    python3 -c 'import json,sys; m=[e for e in json.load(sys.stdin)["metadata"].get("managedFields",[]) if e["manager"]==sys.argv[1]]; print(json.dumps(m[0]["fieldsV1"] if m else None, sort_keys=True))' "$1"
}
managers() {
  k get job ssa -n "$NS" -o json --show-managed-fields |
    python3 -c 'import json,sys; print(" ".join(sorted(e["manager"]+":"+e["operation"] for e in json.load(sys.stdin)["metadata"].get("managedFields",[]))))'
}

manifest 3 "    owner: alice" "  activeDeadlineSeconds: 600" >"$E2E_TMP/alice1.yaml"
expect_ok k apply --server-side --field-manager=alice -f "$E2E_TMP/alice1.yaml"
expect_eq "$OUT" "job.batch/ssa serverside-applied" "first apply"
expect_eq "$(managers)" "alice:Apply" "one manager"
expect_contains "$(fields_of alice)" '"f:backoffLimit": {}' "alice owns backoffLimit"
expect_contains "$(fields_of alice)" '"f:owner": {}' "alice owns her label"
expect_not_contains "$(fields_of alice)" '"f:completions"' "defaults belong to nobody"
rv=$(jp job ssa '{.metadata.resourceVersion}')
expect_ok k apply --server-side --field-manager=alice -f "$E2E_TMP/alice1.yaml"
expect_eq "$(jp job ssa '{.metadata.resourceVersion}')" "$rv" "unchanged re-apply writes nothing"

# Bob sets the same value: shared, no conflict.
manifest 3 >"$E2E_TMP/bob-same.yaml"
expect_ok k apply --server-side --field-manager=bob -f "$E2E_TMP/bob-same.yaml"
expect_contains "$(fields_of bob)" '"f:backoffLimit": {}' "bob shares backoffLimit"

# Bob changes it: 409 naming alice and the field; nothing changes.
manifest 5 >"$E2E_TMP/bob.yaml"
expect_fail k apply --server-side --field-manager=bob -f "$E2E_TMP/bob.yaml"
expect_contains "$OUT" 'Apply failed with 1 conflict: conflict with "alice": .spec.backoffLimit' "conflict"
expect_eq "$(jp job ssa '{.spec.backoffLimit}')" "3" "refused apply changed nothing"
code=$(curl -s -o "$E2E_TMP/conflict.json" -w '%{http_code}' -X PATCH \
  -H 'Content-Type: application/apply-patch+yaml' --data-binary @"$E2E_TMP/bob.yaml" \
  "$SERVER/apis/batch/v1/namespaces/$NS/jobs/ssa?fieldManager=bob")
expect_eq "$code" "409" "conflict code"
expect_contains "$(cat "$E2E_TMP/conflict.json")" '"reason":"FieldManagerConflict"' "conflict cause"
expect_contains "$(cat "$E2E_TMP/conflict.json")" '"field":".spec.backoffLimit"' "conflict field"

# --force-conflicts: bob wins the field and alice loses it.
expect_ok k apply --server-side --field-manager=bob --force-conflicts -f "$E2E_TMP/bob.yaml"
expect_eq "$(jp job ssa '{.spec.backoffLimit}')" "5" "forced value"
expect_not_contains "$(fields_of alice)" '"f:backoffLimit"' "alice lost backoffLimit"
expect_contains "$(fields_of bob)" '"f:backoffLimit": {}' "bob owns backoffLimit"

# Alice drops her label and activeDeadlineSeconds (and backoffLimit, now
# bob's): the fields only she owned go; bob's field stays.
manifest "" >"$E2E_TMP/alice2.yaml"
expect_ok k apply --server-side --field-manager=alice -f "$E2E_TMP/alice2.yaml"
expect_eq "$(jp job ssa '{.metadata.labels.owner}')" "" "dropped label removed"
expect_eq "$(jp job ssa '{.spec.activeDeadlineSeconds}')" "" "dropped field removed"
expect_eq "$(jp job ssa '{.spec.backoffLimit}')" "5" "field owned by bob kept"
expect_eq "$(jp job ssa '{.metadata.labels.app}')" "e2e" "field still applied kept"

# An Update (kubectl label) is recorded, and an apply that changes its field conflicts.
expect_ok k label job ssa -n "$NS" team=red
expect_eq "$(managers)" "alice:Apply bob:Apply kubectl-label:Update" "update recorded"
manifest "" "    team: blue" >"$E2E_TMP/alice3.yaml"
expect_fail k apply --server-side --field-manager=alice -f "$E2E_TMP/alice3.yaml"
expect_contains "$OUT" 'conflict with "kubectl-label" using batch/v1: .metadata.labels.team' "update owner conflict"
expect_ok k apply --server-side --field-manager=alice --force-conflicts -f "$E2E_TMP/alice3.yaml"
expect_eq "$(jp job ssa '{.metadata.labels.team}')" "blue" "forced over an updater"
expect_eq "$(managers)" "alice:Apply bob:Apply" "the updater owned nothing else"

# Bad requests: no field manager for apply, force on a non-apply patch.
code=$(curl -s -o "$E2E_TMP/nofm.json" -w '%{http_code}' -X PATCH \
  -H 'Content-Type: application/apply-patch+yaml' --data-binary @"$E2E_TMP/bob.yaml" \
  "$SERVER/apis/batch/v1/namespaces/$NS/jobs/ssa")
expect_eq "$code" "400" "apply without fieldManager"
code=$(curl -s -o /dev/null -w '%{http_code}' -X PATCH \
  -H 'Content-Type: application/merge-patch+json' --data '{}' \
  "$SERVER/apis/batch/v1/namespaces/$NS/jobs/ssa?force=true")
expect_eq "$code" "400" "force on a merge patch"
