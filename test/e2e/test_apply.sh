# apply, then re-apply a modified manifest: the change lands, fields from
# elsewhere and server defaults survive, removed labels go.
source "$E2E_LIB"
ensure_ns

cat >"$E2E_TMP/v1.yaml" <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: app
  namespace: $NS
  labels:
    app: e2e
    stage: one
spec:
  backoffLimit: 2
  activeDeadlineSeconds: 600
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox:1.36
        command: ["sh", "-c", "echo hi"]
YAML
sed -e 's/stage: one/tier: two/' "$E2E_TMP/v1.yaml" >"$E2E_TMP/v2.yaml"

expect_ok k apply -f "$E2E_TMP/v1.yaml"
expect_eq "$OUT" "job.batch/app created" "first apply"
uid=$(jp job app '{.metadata.uid}')
expect_ne "$uid" "" "uid"
expect_contains "$(jp job app '{.metadata.annotations}')" "kubectl.kubernetes.io/last-applied-configuration" "annotations"
# Server-side defaults.
expect_eq "$(jp job app '{.spec.completions}')" "1" "defaulted completions"
expect_eq "$(jp job app '{.spec.parallelism}')" "1" "defaulted parallelism"
expect_eq "$(jp job app '{.spec.completionMode}')" "NonIndexed" "defaulted completionMode"
expect_eq "$(jp job app '{.spec.template.spec.containers[0].terminationMessagePath}')" \
  "/dev/termination-log" "defaulted terminationMessagePath"
expect_eq "$(jp job app '{.spec.template.spec.containers[0].imagePullPolicy}')" "IfNotPresent" "defaulted imagePullPolicy"
sel=$(jp job app '{.spec.selector.matchLabels}')
expect_contains "$sel" "controller-uid" "generated selector"

# Something set outside the manifest.
k annotate job app -n "$NS" owner=ops >/dev/null

# Unchanged re-apply is a no-op.
expect_ok k apply -f "$E2E_TMP/v1.yaml"
expect_eq "$OUT" "job.batch/app unchanged" "re-apply same"

expect_ok k apply -f "$E2E_TMP/v2.yaml"
expect_eq "$OUT" "job.batch/app configured" "second apply"
expect_eq "$(jp job app '{.metadata.labels.tier}')" "two" "new label"
expect_eq "$(jp job app '{.metadata.labels.stage}')" "" "removed label"
expect_eq "$(jp job app '{.metadata.labels.app}')" "e2e" "kept label"
expect_eq "$(jp job app '{.metadata.annotations.owner}')" "ops" "annotation set outside apply"
expect_eq "$(jp job app '{.spec.backoffLimit}')" "2" "backoffLimit from the manifest"
expect_eq "$(jp job app '{.spec.activeDeadlineSeconds}')" "600" "activeDeadlineSeconds"
expect_eq "$(jp job app '{.spec.template.spec.containers[0].command[2]}')" "echo hi" "command"
expect_eq "$(jp job app '{.spec.completionMode}')" "NonIndexed" "default kept"
expect_eq "$(jp job app '{.spec.template.spec.containers[0].terminationMessagePath}')" \
  "/dev/termination-log" "default kept in template"
expect_eq "$(jp job app '{.metadata.uid}')" "$uid" "same object"
expect_contains "$(jp job app '{.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}')" \
  '"tier":"two"' "last-applied updated"

# An apply that changes an immutable field is refused and changes nothing.
sed -e 's/busybox:1.36/busybox:1.37/' "$E2E_TMP/v2.yaml" >"$E2E_TMP/v3.yaml"
expect_fail k apply -f "$E2E_TMP/v3.yaml"
expect_contains "$OUT" "field is immutable" "template change"
expect_eq "$(jp job app '{.spec.template.spec.containers[0].image}')" "busybox:1.36" "image unchanged"
