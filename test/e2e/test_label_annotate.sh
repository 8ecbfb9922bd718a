# kubectl label / annotate: add, refuse silent overwrite, overwrite, remove.
source "$E2E_LIB"
ensure_ns
job_yaml la | k create -f - >/dev/null

expect_ok k label job la -n "$NS" tier=gold
expect_eq "$OUT" "job.batch/la labeled" "label"
expect_eq "$(jp job la '{.metadata.labels.tier}')" "gold" "label value"
expect_fail k label job la -n "$NS" tier=silver
expect_contains "$OUT" "already has a value (gold)" "label without --overwrite"
expect_ok k label job la -n "$NS" tier=silver --overwrite
expect_eq "$(jp job la '{.metadata.labels.tier}')" "silver" "overwritten label"
expect_ok k label job la -n "$NS" tier-
expect_eq "$(jp job la '{.metadata.labels.tier}')" "" "removed label"
expect_eq "$(jp job la '{.metadata.labels.app}')" "e2e" "other label kept"
expect_fail k label job la -n "$NS" 'bad key!=x'
expect_eq "$(jp job la '{.metadata.labels.bad}')" "" "invalid label not stored"

expect_ok k annotate job la -n "$NS" note='hello world'
expect_eq "$OUT" "job.batch/la annotated" "annotate"
expect_eq "$(jp job la '{.metadata.annotations.note}')" "hello world" "annotation value"
expect_ok k annotate job la -n "$NS" note-
expect_eq "$(jp job la '{.metadata.annotations.note}')" "" "removed annotation"

# The label is rejected by the server when invalid (sent raw, past kubectl's checks).
expect_fail k patch job la -n "$NS" --type merge -p '{"metadata":{"labels":{"a":"-bad-"}}}'
expect_contains "$OUT" "metadata.labels: Invalid value: \"-bad-\"" "server label validation"
