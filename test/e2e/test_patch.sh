# kubectl patch with --type merge, json and strategic.
source "$E2E_LIB"
ensure_ns
job_yaml pj | k create -f - >/dev/null
gen=$(jp job pj '{.metadata.generation}')

expect_ok k patch job pj -n "$NS" --type merge -p '{"spec":{"backoffLimit":3},"metadata":{"labels":{"m":"1"}}}'
expect_eq "$OUT" "job.batch/pj patched" "merge patch"
expect_eq "$(jp job pj '{.spec.backoffLimit}')" "3" "merge patch value"
expect_eq "$(jp job pj '{.metadata.labels.m}')/$(jp job pj '{.metadata.labels.app}')" "1/e2e" "merge keeps labels"
expect_eq "$(jp job pj '{.metadata.generation}')" "$((gen + 1))" "generation bumped by spec change"

expect_ok k patch job pj -n "$NS" --type json \
  -p '[{"op":"replace","path":"/spec/backoffLimit","value":4},{"op":"add","path":"/metadata/annotations","value":{"j":"2"}}]'
expect_eq "$(jp job pj '{.spec.backoffLimit}')/$(jp job pj '{.metadata.annotations.j}')" "4/2" "json patch"
# A failed test op changes nothing.
expect_fail k patch job pj -n "$NS" --type json \
  -p '[{"op":"replace","path":"/spec/backoffLimit","value":9},{"op":"test","path":"/spec/backoffLimit","value":5}]'
expect_eq "$(jp job pj '{.spec.backoffLimit}')" "4" "failed json patch is atomic"
expect_fail k patch job pj -n "$NS" --type json -p '[{"op":"remove","path":"/spec/nothere"}]'

expect_ok k patch job pj -n "$NS" --type strategic -p '{"metadata":{"labels":{"s":"3"}},"spec":{"backoffLimit":5}}'
expect_eq "$(jp job pj '{.metadata.labels.s}')/$(jp job pj '{.spec.backoffLimit}')" "3/5" "strategic patch"

# Strategic merge of a keyed list: containers merge by name (pod images are mutable).
cat <<YAML | k create -f - >/dev/null
apiVersion: v1
kind: Pod
metadata:
  name: pp
  namespace: $NS
spec:
  containers:
  - name: a
    image: busybox:1
    command: ["sleep", "1"]
  - name: b
    image: busybox:1
    command: ["sleep", "2"]
YAML
expect_ok k patch pod pp -n "$NS" --type strategic -p '{"spec":{"containers":[{"name":"b","image":"busybox:2"}]}}'
expect_eq "$(jp pod pp '{.spec.containers[*].name}')" "a b" "containers kept"
expect_eq "$(jp pod pp '{.spec.containers[*].image}')" "busybox:1 busybox:2" "only b's image changed"
expect_eq "$(jp pod pp '{.spec.containers[1].command[1]}')" "2" "b's command kept"
# The same body as a merge patch replaces the whole list, which is invalid for
# a pod (containers may not be added or removed): refused, nothing changes.
expect_fail k patch pod pp -n "$NS" --type merge -p '{"spec":{"containers":[{"name":"b","image":"busybox:3"}]}}'
expect_eq "$(jp pod pp '{.spec.containers[*].image}')" "busybox:1 busybox:2" "refused merge patch changed nothing"

# status belongs to the status subresource: ignored on the main resource.
expect_ok k patch job pj -n "$NS" --type merge -p '{"status":{"ready":5}}'
expect_ne "$(jp job pj '{.status.ready}')" "5" "status via main resource ignored"
expect_ok k patch job pj -n "$NS" --subresource=status --type merge -p '{"status":{"ready":0}}'
expect_eq "$(jp job pj '{.status.ready}')" "0" "status subresource"
expect_fail k patch job nope -n "$NS" --type merge -p '{"spec":{}}'
expect_contains "$OUT" 'jobs.batch "nope" not found' "patch missing job"
