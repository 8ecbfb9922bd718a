# Server-side apply, describe, `get all`, delete --all and wait --for=delete.
source "$E2E_LIB"
ensure_ns

job_yaml ssa >"$E2E_TMP/ssa.yaml"
expect_ok k apply --server-side -f "$E2E_TMP/ssa.yaml"
expect_eq "$OUT" "job.batch/ssa serverside-applied" "server-side apply"
sed -e 's/app: e2e/app: e2e\n    ssa: two/' "$E2E_TMP/ssa.yaml" >"$E2E_TMP/ssa2.yaml"
expect_ok k apply --server-side -f "$E2E_TMP/ssa2.yaml"
expect_eq "$(jp job ssa '{.metadata.labels.ssa}')/$(jp job ssa '{.spec.completionMode}')" "two/NonIndexed" "second server-side apply"

expect_ok k describe job ssa -n "$NS"
expect_match "$OUT" "^Name: +ssa$" "describe"
expect_match "$OUT" "^Completion Mode: +NonIndexed$" "describe"
expect_match "$OUT" "^Backoff Limit: +6$" "describe"

expect_ok k get all -n "$NS"
expect_match "$OUT" "^job.batch/ssa +" "get all lists jobs"

job_yaml other | k create -f - >/dev/null
expect_ok k delete jobs --all -n "$NS"
expect_contains "$OUT" 'job.batch "ssa" deleted' "delete --all"
expect_contains "$OUT" 'job.batch "other" deleted' "delete --all"
expect_ok k wait --for=delete job/ssa -n "$NS" --timeout=10s
expect_eq "$(k get jobs -n "$NS" -o name)" "" "all jobs gone"
