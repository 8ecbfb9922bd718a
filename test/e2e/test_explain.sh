# kubectl explain reads the OpenAPI v3 documents.
source "$E2E_LIB"

expect_ok k explain job.spec
expect_match "$OUT" "^KIND: +Job$" "explain"
expect_match "$OUT" "^GROUP: +batch$" "explain"
expect_match "$OUT" "^VERSION: +v1$" "explain"
expect_match "$OUT" "^FIELD: +spec <JobSpec>" "explain"
for f in parallelism completions backoffLimit template; do
  expect_match "$OUT" "^  $f	?<" "explain field $f"
done

expect_ok k explain job.spec.template.spec.containers.image
expect_match "$OUT" "^FIELD: +image <string>" "explain nested"

expect_ok k explain cronjob.spec.schedule
expect_match "$OUT" "^FIELD: +schedule <string>" "explain cronjob"

expect_ok k explain pods --recursive
expect_contains "$OUT" "restartPolicy" "explain --recursive"
expect_fail k explain job.spec.nosuchfield
