# --dry-run=server validates and defaults but stores nothing.
source "$E2E_LIB"
ensure_ns

expect_ok k create -f - --dry-run=server -o jsonpath='{.spec.completions}/{.spec.completionMode}' <<<"$(job_yaml dry)"
expect_eq "$OUT" "1/NonIndexed" "dry-run response is defaulted"
expect_absent job dry
expect_ok k create -f - --dry-run=server <<<"$(job_yaml dry)"
expect_eq "$OUT" "job.batch/dry created (server dry run)" "dry-run message"
expect_absent job dry

# Validation still runs.
expect_fail k create -f - --dry-run=server <<<"$(job_yaml dry | sed -e 's/restartPolicy: Never/restartPolicy: Always/')"
expect_contains "$OUT" "spec.template.spec.restartPolicy" "dry-run validation"

# Dry-run update and delete change nothing.
job_yaml real | k create -f - >/dev/null
rv=$(jp job real '{.metadata.resourceVersion}')
expect_ok k label job real -n "$NS" x=y --dry-run=server
expect_eq "$(jp job real '{.metadata.labels.x}')" "" "dry-run label"
expect_ok k delete job real -n "$NS" --dry-run=server
expect_eq "$(jp job real '{.metadata.resourceVersion}')" "$rv" "dry-run delete"
