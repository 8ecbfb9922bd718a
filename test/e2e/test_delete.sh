# kubectl delete removes the object; deleting again is NotFound.
source "$E2E_LIB"
ensure_ns
job_yaml gone | k create -f - >/dev/null
job_yaml stay | k create -f - >/dev/null

expect_ok k delete job gone -n "$NS"
expect_eq "$OUT" 'job.batch "gone" deleted' "delete"
expect_absent job gone
expect_eq "$(k get jobs -n "$NS" -o name)" "job.batch/stay" "the other job remains"
expect_fail k delete job gone -n "$NS"
expect_contains "$OUT" 'Error from server (NotFound): jobs.batch "gone" not found' "second delete"
expect_ok k delete job gone -n "$NS" --ignore-not-found
expect_eq "$OUT" "" "--ignore-not-found"

# Delete by file and by label selector.
job_yaml byfile >"$E2E_TMP/f.yaml"
k create -f "$E2E_TMP/f.yaml" >/dev/null
expect_ok k delete -f "$E2E_TMP/f.yaml"
expect_absent job byfile
expect_ok k delete jobs -n "$NS" -l app=e2e
expect_eq "$(k get jobs -n "$NS" -o name)" "" "delete by selector"
