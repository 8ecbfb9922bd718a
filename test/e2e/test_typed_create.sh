# kubectl's generator commands (create namespace / cronjob / job). Their
# typed client sends protobuf request bodies, so the server must accept
# application/vnd.kubernetes.protobuf for built-in kinds.
source "$E2E_LIB"

expect_ok k create namespace "$NS"
expect_eq "$OUT" "namespace/$NS created" "kubectl create namespace"
expect_eq "$(k get namespace "$NS" -o jsonpath='{.status.phase}')" "Active" "phase"

expect_ok k create cronjob nightly -n "$NS" --image=busybox --schedule='0 3 * * *' -- echo hi
expect_eq "$OUT" "cronjob.batch/nightly created" "kubectl create cronjob"
expect_eq "$(k get cj nightly -n "$NS" -o jsonpath='{.spec.schedule}|{.spec.jobTemplate.spec.template.spec.containers[0].command[*]}')" \
  "0 3 * * *|echo hi" "cronjob fields"

expect_ok k create job once -n "$NS" --image=busybox -- true
expect_eq "$OUT" "job.batch/once created" "kubectl create job"
expect_eq "$(k get job once -n "$NS" -o jsonpath='{.spec.template.spec.restartPolicy}')" "Never" "job restartPolicy"

expect_ok k create job fromcron -n "$NS" --from=cronjob/nightly
expect_eq "$(k get job fromcron -n "$NS" -o jsonpath='{.metadata.annotations.cronjob\.kubernetes\.io/instantiate}')" \
  "manual" "job from cronjob"
