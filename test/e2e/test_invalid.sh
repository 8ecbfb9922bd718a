# Invalid objects are refused with field paths and nothing is stored.
source "$E2E_LIB"
ensure_ns

cat >"$E2E_TMP/noimage.yaml" <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: noimage, namespace: $NS}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main}]
YAML
expect_fail k create -f "$E2E_TMP/noimage.yaml"
expect_contains "$OUT" 'The Job "noimage" is invalid' "missing image"
expect_contains "$OUT" "spec.template.spec.containers[0].image: Required value" "missing image"
expect_absent job noimage

job_yaml negpar | sed -e 's/^spec:$/spec:\n  parallelism: -1/' >"$E2E_TMP/negpar.yaml"
expect_fail k create -f "$E2E_TMP/negpar.yaml"
expect_contains "$OUT" "spec.parallelism: Invalid value: -1: must be greater than or equal to 0" "negative parallelism"
expect_absent job negpar

job_yaml badrp | sed -e 's/restartPolicy: Never/restartPolicy: Always/' >"$E2E_TMP/badrp.yaml"
expect_fail k create -f "$E2E_TMP/badrp.yaml"
expect_contains "$OUT" 'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"' "restartPolicy"
expect_absent job badrp

expect_fail k create -f - <<<"$(job_yaml BadName)"
expect_contains "$OUT" 'metadata.name: Invalid value: "BadName"' "bad name"

# A type error is a 400 BadRequest naming the field.
job_yaml strpar | sed -e 's/^spec:$/spec:\n  parallelism: "two"/' >"$E2E_TMP/strpar.yaml"
expect_fail k create -f "$E2E_TMP/strpar.yaml" --validate=false
expect_contains "$OUT" "parallelism" "type error"
expect_absent job strpar

# Strict field validation (kubectl's default): unknown field named by the server.
job_yaml bogus | sed -e 's/^spec:$/spec:\n  bogus: 1/' >"$E2E_TMP/bogus.yaml"
expect_fail k create -f "$E2E_TMP/bogus.yaml"
expect_contains "$OUT" 'unknown field "spec.bogus"' "strict validation"
expect_absent job bogus

# --validate=false: accepted, unknown field dropped.
expect_ok k create -f "$E2E_TMP/bogus.yaml" --validate=false
expect_eq "$OUT" "job.batch/bogus created" "validate=false"
expect_not_contains "$(k get job bogus -n "$NS" -o json)" "bogus\":" "pruned field"
# --validate=warn: accepted with a warning.
job_yaml bogus2 | sed -e 's/^spec:$/spec:\n  bogus: 1/' >"$E2E_TMP/bogus2.yaml"
expect_ok k create -f "$E2E_TMP/bogus2.yaml" --validate=warn
expect_contains "$OUT" 'unknown field "spec.bogus"' "warn validation"
expect_contains "$OUT" "job.batch/bogus2 created" "warn validation"
