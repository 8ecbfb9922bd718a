# Pods can be created from a manifest and listed.
source "$E2E_LIB"
ensure_ns

for p in p1 p2; do
cat <<YAML | k create -f - >/dev/null
apiVersion: v1
kind: Pod
metadata:
  name: $p
  namespace: $NS
  labels: {role: $p}
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: busybox
    command: ["sleep", "1"]
YAML
done
expect_ok k get pods -n "$NS"
expect_match "$(head -n 1 <<<"$OUT")" "^NAME +READY +STATUS +RESTARTS +AGE$" "pod header"
expect_match "$OUT" "^p1 +0/1 +Pending +0 +" "pod row"
expect_match "$OUT" "^p2 +0/1 +Pending +0 +" "pod row"
expect_eq "$(k get pod p1 -n "$NS" -o jsonpath='{.status.phase}/{.spec.dnsPolicy}/{.spec.containers[0].imagePullPolicy}')" \
  "Pending/ClusterFirst/Always" "pod defaults"
expect_eq "$(k get pods -n "$NS" -l role=p2 -o name)" "pod/p2" "pod label selector"
expect_eq "$(k get pods -n "$NS" --field-selector status.phase=Pending -o name | wc -l)" "2" "pod field selector"

expect_fail k create -f - <<<"apiVersion: v1
kind: Pod
metadata: {name: nocontainers, namespace: $NS}
spec: {containers: []}"
expect_contains "$OUT" "spec.containers: Required value" "pod without containers"
expect_absent pod nocontainers

expect_ok k delete pod p1 -n "$NS" --grace-period=0 --force --wait=true --timeout=30s
expect_absent pod p1
