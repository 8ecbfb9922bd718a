# kubectl get: the Job table, -o yaml/json/jsonpath/name/wide, and NotFound.
source "$E2E_LIB"
ensure_ns
job_yaml show | k create -f - >/dev/null

expect_ok k get jobs -n "$NS"
expect_match "$(head -n 1 <<<"$OUT")" "^NAME +STATUS +COMPLETIONS +DURATION +AGE$" "table header"
expect_match "$OUT" "^show +[A-Za-z]+ +0/1 +" "table row"
expect_eq "$(wc -l <<<"$OUT")" "2" "table lines"

expect_ok k get jobs -n "$NS" -o wide
expect_match "$(head -n 1 <<<"$OUT")" "CONTAINERS +IMAGES +SELECTOR" "wide header"
expect_match "$OUT" "main +busybox +" "wide row"

expect_ok k get job show -n "$NS" -o yaml
expect_contains "$OUT" "apiVersion: batch/v1" "yaml"
expect_contains "$OUT" "kind: Job" "yaml"
expect_match "$OUT" "^  name: show$" "yaml name"
expect_match "$OUT" "^  resourceVersion: \"[0-9]+\"$" "yaml resourceVersion"

expect_ok k get job show -n "$NS" -o json
got=$(python3 -c 'import json,sys; o=json.load(sys.stdin); print(o["kind"], o["metadata"]["name"], o["metadata"]["namespace"], o["spec"]["template"]["spec"]["containers"][0]["image"])' <<<"$OUT")
expect_eq "$got" "Job show $NS busybox" "json fields"

expect_eq "$(k get job show -n "$NS" -o jsonpath='{.metadata.name}/{.spec.backoffLimit}')" "show/6" "jsonpath"
expect_eq "$(k get jobs -n "$NS" -o name)" "job.batch/show" "-o name"
expect_eq "$(k get jobs -n "$NS" -o custom-columns=N:.metadata.name,L:.metadata.labels.app --no-headers)" \
  "show   e2e" "custom-columns"

# All namespaces: a NAMESPACE column first.
expect_ok k get jobs -A
expect_match "$(head -n 1 <<<"$OUT")" "^NAMESPACE +NAME +STATUS" "-A header"
expect_match "$OUT" "^$NS +show +" "-A row"

expect_fail k get job nope -n "$NS"
expect_eq "$OUT" 'Error from server (NotFound): jobs.batch "nope" not found' "missing job"

# An empty namespace says so.
make_ns "$NS-empty"
expect_ok k get jobs -n "$NS-empty"
expect_eq "$OUT" "No resources found in $NS-empty namespace." "empty list"
k delete namespace "$NS-empty" --wait=false >/dev/null
