# Optimistic concurrency: replace with a stale resourceVersion is a Conflict.
source "$E2E_LIB"
ensure_ns
job_yaml cf | k create -f - >/dev/null

k get job cf -n "$NS" -o yaml >"$E2E_TMP/old.yaml"
rv1=$(jp job cf '{.metadata.resourceVersion}')
k label job cf -n "$NS" bump=1 >/dev/null
rv2=$(jp job cf '{.metadata.resourceVersion}')
((rv2 > rv1)) || fail "resourceVersion did not grow: $rv1 -> $rv2"

sed -e 's/app: e2e/app: stale/' "$E2E_TMP/old.yaml" >"$E2E_TMP/stale.yaml"
expect_fail k replace -f "$E2E_TMP/stale.yaml"
expect_contains "$OUT" "Error from server (Conflict)" "stale replace"
expect_contains "$OUT" 'Operation cannot be fulfilled on jobs.batch "cf": the object has been modified; please apply your changes to the latest version and try again' "stale replace"
expect_eq "$(jp job cf '{.metadata.labels.app}')/$(jp job cf '{.metadata.labels.bump}')" "e2e/1" "stale replace changed nothing"
expect_eq "$(jp job cf '{.metadata.resourceVersion}')" "$rv2" "resourceVersion unchanged"

# With the current resourceVersion the replace goes through.
k get job cf -n "$NS" -o yaml | sed -e 's/app: e2e/app: fresh/' >"$E2E_TMP/fresh.yaml"
expect_ok k replace -f "$E2E_TMP/fresh.yaml"
expect_eq "$OUT" "job.batch/cf replaced" "fresh replace"
expect_eq "$(jp job cf '{.metadata.labels.app}')" "fresh" "fresh replace applied"

# Creating an existing name is AlreadyExists.
expect_fail k create -f - <<<"$(job_yaml cf)"
expect_contains "$OUT" 'Error from server (AlreadyExists): error when creating "STDIN": jobs.batch "cf" already exists' "duplicate create"
