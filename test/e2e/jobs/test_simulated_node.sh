# A Node annotated batchd.io/simulated runs pods in the built-in simulated
# kubelet: a Job pinned to it with batchd.io/sim-duration: 2s completes in
# about 2 s. The node is tainted so other tests' pods never land on it.
source "$(dirname "$0")/lib.sh"
ensure_ns
NODE="sim-$NS"

cat <<JSON | k create -f - >/dev/null
{"apiVersion": "v1", "kind": "Node",
 "metadata": {"name": "$NODE", "annotations": {"batchd.io/simulated": "true"},
              "labels": {"kubernetes.io/hostname": "$NODE", "e2e-sim": "yes"}},
 "spec": {"taints": [{"key": "e2e-sim", "value": "yes", "effect": "NoSchedule"}]},
 "status": {"capacity": {"cpu": "8", "memory": "16Gi", "pods": "110"},
            "allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}}
JSON
trap 'k delete node "$NODE" --wait=false >/dev/null 2>&1 || true' EXIT
expect_eq "$(k get node "$NODE" -o jsonpath='{.status.capacity.cpu}')" "8" "node capacity kept"

cat <<YAML | k create -f - >/dev/null
apiVersion: batch/v1
kind: Job
metadata: {name: simjob, namespace: $NS}
spec:
  completions: 3
  parallelism: 3
  template:
    metadata:
      annotations: {batchd.io/sim-duration: 2s}
    spec:
      restartPolicy: Never
      nodeSelector: {kubernetes.io/hostname: $NODE}
      tolerations: [{key: e2e-sim, operator: Equal, value: "yes", effect: NoSchedule}]
      containers:
      - name: main
        image: busybox
        command: ["sh", "-c", "exit 3"]
YAML
start=$SECONDS
kwait simjob complete 30
elapsed=$((SECONDS - start))
((elapsed >= 1 && elapsed <= 20)) || fail "simulated job took ${elapsed}s, want about 2s"
expect_eq "$(jp job simjob '{.status.succeeded}')" "3" "status.succeeded"
nodes=$(k get pods -n "$NS" -l job-name=simjob -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort -u)
expect_eq "$nodes" "$NODE" "pods' node"
# The pods never ran on this host: the command would have exited 3.
pods=$(job_pods simjob); pod=${pods%%$'\n'*}  # not `| head`: SIGPIPE under pipefail
expect_eq "$(jp pod "$pod" '{.status.phase}')" "Succeeded" "pod phase"
python3 - "$(jp pod "$pod" '{.status.startTime}')" "$(jp job simjob '{.status.completionTime}')" <<'PY' || fail "job ran for less than the 2s sim-duration"
import sys, datetime
f = lambda s: datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ")
sys.exit(0 if (f(sys.argv[2]) - f(sys.argv[1])).total_seconds() >= 1 else 1)
PY
