# Namespaces: created Active; deleting a namespace removes the jobs in it.
# (`kubectl create namespace` itself is in test_typed_create.sh.)
source "$E2E_LIB"

printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n' "$NS" >"$E2E_TMP/ns.yaml"
expect_ok k create -f "$E2E_TMP/ns.yaml"
expect_eq "$OUT" "namespace/$NS created" "create namespace"
expect_eq "$(k get namespace "$NS" -o jsonpath='{.status.phase}')" "Active" "phase"
expect_fail k create -f "$E2E_TMP/ns.yaml"
expect_contains "$OUT" "AlreadyExists" "second create"
expect_ok k get namespaces
expect_match "$OUT" "^NAME +STATUS +AGE$" "namespace table header"
expect_match "$OUT" "^$NS +Active +" "namespace row"
expect_match "$OUT" "^default +Active +" "default namespace"

for j in a b; do job_yaml "$j" | k apply -f - >/dev/null; done
expect_eq "$(k get jobs -n "$NS" -o name | wc -l)" "2" "jobs before delete"

expect_ok k delete namespace "$NS" --timeout=60s
expect_eq "$OUT" "namespace \"$NS\" deleted" "delete namespace"
expect_fail k get namespace "$NS"
expect_contains "$OUT" "Error from server (NotFound): namespaces \"$NS\" not found" "namespace gone"
expect_eq "$(k get jobs -n "$NS" -o name)" "" "jobs after namespace delete"

# Nothing can be created in a namespace that does not exist.
expect_fail k create -f - <<<"$(job_yaml c)"
expect_contains "$OUT" "NotFound" "create in missing namespace"
