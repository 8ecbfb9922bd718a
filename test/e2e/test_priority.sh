# Pod priority: kube-apiserver's built-in PriorityClasses, the Priority
# admission (a pod's class sets spec.priority and spec.preemptionPolicy; an
# unknown class or a hand-set priority is Forbidden), one globalDefault, and
# Jobs whose pod template names a class.
source "$E2E_LIB"
ensure_ns

OUT=$(k get pc system-cluster-critical system-node-critical)
expect_match "$OUT" "system-cluster-critical +2000000000 +false" "built-in class"
expect_match "$OUT" "system-node-critical +2000001000 +false" "built-in class"
expect_fail k delete pc system-node-critical
expect_contains "$OUT" 'priorityclasses.scheduling.k8s.io "system-node-critical" is forbidden: this is a system priority class and cannot be deleted' "built-in classes stay"

pc() {  # pc NAME VALUE [EXTRA_LINES]: a PriorityClass manifest
  printf 'apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: %s}\nvalue: %s\n%s\n' \
    "$1" "$2" "${3:-}"
}
expect_ok k apply -f - <<<"$(pc e2e-high 1000 'preemptionPolicy: Never')"

pod() {  # pod NAME [SPEC_LINES]: a pod manifest
  printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: %s}\nspec:\n  containers: [{name: main, image: busybox}]\n%s\n' \
    "$1" "$NS" "${2:-}"
}
expect_ok k create -f - <<<"$(pod high '  priorityClassName: e2e-high')"
expect_eq "$(jp pod high '{.spec.priority}/{.spec.preemptionPolicy}')" "1000/Never" "priority from the class"
expect_ok k create -f - <<<"$(pod plain)"
expect_eq "$(jp pod plain '{.spec.priority}/{.spec.preemptionPolicy}/{.spec.priorityClassName}')" \
  "0/PreemptLowerPriority/" "no class and no default: priority 0"

expect_fail k create -f - <<<"$(pod nope '  priorityClassName: nope')"
expect_contains "$OUT" 'pods "nope" is forbidden: no PriorityClass with name nope was found' "unknown class"
expect_absent pod nope
expect_fail k create -f - <<<"$(pod handset "  priorityClassName: e2e-high
  priority: 5")"
expect_contains "$OUT" "the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name" "hand-set priority"
expect_absent pod handset

# One global default: pods without a class get it; a second is Forbidden.
expect_ok k apply -f - <<<"$(pc e2e-default 7 'globalDefault: true')"
expect_fail k apply -f - <<<"$(pc e2e-default2 8 'globalDefault: true')"
expect_contains "$OUT" "PriorityClass e2e-default is already marked as default. Only one default can exist" "second default"
expect_ok k create -f - <<<"$(pod defaulted)"
expect_eq "$(jp pod defaulted '{.spec.priority}/{.spec.priorityClassName}')" "7/e2e-default" "default class"
k delete pc e2e-default >/dev/null

# A Job's pods get their template's class.
expect_ok k create -f - <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: prio, namespace: $NS}
spec:
  template:
    spec:
      priorityClassName: e2e-high
      restartPolicy: Never
      containers: [{name: main, image: busybox, command: ["true"]}]
YAML
job_pod_exists() { [[ -n $(k get pods -n "$NS" -l job-name=prio -o name) ]]; }
wait_for 30 job_pod_exists || fail "the Job's pod was not created"
expect_eq "$(k get pods -n "$NS" -l job-name=prio -o jsonpath='{.items[0].spec.priority}')" "1000" "Job pod priority"

k delete ns "$NS" --wait=false >/dev/null
k delete pc e2e-high >/dev/null
