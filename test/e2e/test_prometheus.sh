# e2e-parallel
# e2e-timeout: 180
# deploy/prometheus and deploy/grafana against Debian's real Prometheus:
# every rule file loads (promtool check rules) and the rules' unit tests pass
# (promtool test rules); the Grafana dashboard is what its generator writes.
# Then Prometheus scrapes this server with a ServiceAccount token from
# deploy/prometheus/rbac.yaml (bearer credentials file, as beyond loopback),
# Jobs run through a ClusterQueue on a simulated node, and PromQL over
# Prometheus' HTTP API answers: sum(kueue_admitted_workloads_total) > 0, the
# recording rules evaluate, every rule is healthy, the ClusterQueue-inactive
# alert is pending for a ClusterQueue whose flavor is missing, and every query
# of the dashboard runs. Every metric name the rules and dashboard use is one
# the server exports.
source "$E2E_LIB"
command -v prometheus >/dev/null && command -v promtool >/dev/null ||
  fail "prometheus/promtool not installed (scripts/install-deps.sh installs the Debian package prometheus)"
ROOT=$(cd "$(dirname "$E2E_LIB")/../.." && pwd)
DEPLOY="$ROOT/deploy"
KQ=kueue.x-k8s.io/v1beta2

# --- Static checks: rules load, rule unit tests, dashboard up to date. ---
expect_ok promtool check rules "$DEPLOY"/prometheus/rules/*.yml
expect_contains "$OUT" "SUCCESS: 10 rules found" "recording rules load"
expect_contains "$OUT" "SUCCESS: 8 rules found" "alerting rules load"
expect_ok promtool test rules "$DEPLOY/prometheus/tests/rules_test.yml"
expect_contains "$OUT" "SUCCESS" "rule unit tests"
python3 "$DEPLOY/grafana/generate.py" >"$E2E_TMP/dash.json"
cmp -s "$E2E_TMP/dash.json" "$DEPLOY/grafana/batchd-kueue.json" ||
  fail "deploy/grafana/batchd-kueue.json differs from what deploy/grafana/generate.py writes"

# --- The cluster: a simulated node, a ClusterQueue and a LocalQueue; and a
# ClusterQueue whose flavor does not exist (inactive). ---
ensure_ns
NODE="sim-$NS"
CQ="cq-$NS"
BAD_CQ="cq-inactive-$NS"
PPID_FILE="$E2E_TMP/prometheus.pid"
cleanup() {
  [[ -f $PPID_FILE ]] && kill "$(cat "$PPID_FILE")" 2>/dev/null
  k delete clusterqueue "$CQ" "$BAD_CQ" --wait=false >/dev/null 2>&1 || true
  k delete resourceflavor "flavor-$NS" --wait=false >/dev/null 2>&1 || true
  k delete node "$NODE" --wait=false >/dev/null 2>&1 || true
  return 0
}
trap cleanup EXIT
cat <<JSON | k apply -f - >/dev/null
{"apiVersion": "v1", "kind": "Node",
 "metadata": {"name": "$NODE", "annotations": {"batchd.io/simulated": "true"},
              "labels": {"kubernetes.io/hostname": "$NODE", "e2e-node": "$NODE"}},
 "spec": {"taints": [{"key": "e2e-node", "value": "$NODE", "effect": "NoSchedule"}]},
 "status": {"capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
            "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}}
JSON
cat <<YAML | k apply -f - >/dev/null
apiVersion: $KQ
kind: ResourceFlavor
metadata: {name: flavor-$NS}
spec:
  nodeLabels: {e2e-node: $NODE}
  tolerations: [{key: e2e-node, operator: Equal, value: $NODE, effect: NoSchedule}]
---
apiVersion: $KQ
kind: ClusterQueue
metadata: {name: $CQ}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu", "memory"]
    flavors:
    - name: flavor-$NS
      resources:
      - {name: cpu, nominalQuota: 4}
      - {name: memory, nominalQuota: 16Gi}
---
apiVersion: $KQ
kind: ClusterQueue
metadata: {name: $BAD_CQ}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: missing-flavor-$NS
      resources:
      - {name: cpu, nominalQuota: 1}
---
apiVersion: $KQ
kind: LocalQueue
metadata: {name: lq, namespace: $NS}
spec: {clusterQueue: $CQ}
YAML
for i in 1 2 3; do
  cat <<YAML | k create -f - >/dev/null
apiVersion: batch/v1
kind: Job
metadata:
  name: j$i
  namespace: $NS
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  template:
    metadata:
      annotations: {batchd.io/sim-duration: 1s}
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        command: ["true"]
        resources:
          requests: {cpu: "1", memory: 100Mi}
YAML
done

# --- Prometheus with a least-privilege token. ---
expect_ok k apply -f "$DEPLOY/prometheus/rbac.yaml"
expect_ok k -n monitoring create token prometheus --duration 1h
printf '%s' "$OUT" >"$E2E_TMP/token"
# The token reads /metrics and nothing else (curl: kubectl sends no token
# over plain HTTP).
code() { curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(cat "$E2E_TMP/token")" "$SERVER$1"; }
expect_eq "$(code /metrics)" "200" "prometheus token reads /metrics"
expect_eq "$(code "/api/v1/namespaces/$NS/pods")" "403" "prometheus token lists no pods"

PPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
PROM="http://127.0.0.1:$PPORT"
# deploy/prometheus/prometheus.yml, with this test's target, plain HTTP
# (loopback) and 1 s intervals.
python3 - "$DEPLOY/prometheus/prometheus.yml" "$E2E_TMP/prometheus.yml" "$PORT" "$E2E_TMP/token" "$DEPLOY/prometheus/rules" <<'PY'
import re, sys
src, dst, port, token, rules = sys.argv[1:]
s = open(src).read()
s = s.replace("scrape_interval: 15s", "scrape_interval: 1s").replace("evaluation_interval: 15s", "evaluation_interval: 1s")
s = s.replace("/etc/prometheus/batchd/rules/*.yml", rules + "/*.yml")
s = s.replace("scheme: https", "scheme: http")
s = s.replace("credentials_file: /etc/prometheus/batchd.token", "credentials_file: " + token)
s = re.sub(r"\n    tls_config:\n      ca_file: [^\n]*", "", s)
s = s.replace('"batchd.example.internal:8443"', '"127.0.0.1:%s"' % port)
assert "127.0.0.1:" + port in s and token in s and "tls_config" not in s
open(dst, "w").write(s)
PY
expect_ok promtool check config "$E2E_TMP/prometheus.yml"
prometheus --config.file="$E2E_TMP/prometheus.yml" --storage.tsdb.path="$E2E_TMP/tsdb" \
  --web.listen-address="127.0.0.1:$PPORT" --log.level=warn >"$E2E_TMP/prometheus.log" 2>&1 &
echo $! >"$PPID_FILE"

# query EXPR: the instant query's JSON result array (fails the test on an error).
query() {
  curl -s -m 10 --data-urlencode "query=$1" "$PROM/api/v1/query" | python3 -c '
import json, sys
d = json.load(sys.stdin)
if d.get("status") != "success":
    print("ERROR " + d.get("error", "?")); sys.exit(0)
print(json.dumps(d["data"]["result"]))'
}
# nonempty EXPR: the query returns at least one series.
nonempty() { local r; r=$(query "$1"); [[ $r != ERROR* && $r != "[]" ]]; }
poll() {  # poll SECONDS CMD...
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.5
  done
}
poll 30 curl -sf "$PROM/-/ready" || fail "prometheus not ready: $(tail -n 3 "$E2E_TMP/prometheus.log" | tr '\n' ' ')"
poll 30 nonempty 'up{job="batchd"} == 1' ||
  fail "target not up: $(curl -s "$PROM/api/v1/targets" | head -c 600)"

# The jobs were admitted: PromQL over Kueue's names sees it.
poll 60 nonempty 'sum(kueue_admitted_workloads_total) > 0' ||
  fail "sum(kueue_admitted_workloads_total) > 0 is empty: $(query 'kueue_admitted_workloads_total')"
admitted3() { [[ $(query "sum(kueue_admitted_workloads_total{cluster_queue=\"$CQ\"})") == *'"3"'* ]]; }
poll 60 admitted3 || fail "admitted in $CQ: $(query "kueue_admitted_workloads_total{cluster_queue=\"$CQ\"}"), want 3"
expect_ok nonempty "kueue_cluster_queue_nominal_quota{cluster_queue=\"$CQ\",resource=\"cpu\"} == 4"
expect_ok nonempty "histogram_quantile(0.99, sum by (le) (kueue_admission_wait_time_seconds_bucket{cluster_queue=\"$CQ\"})) >= 0"
expect_ok nonempty "kube_node_status_condition{node=\"$NODE\",condition=\"Ready\",status=\"true\"} == 1"
expect_ok nonempty "batchd_store_operation_duration_seconds_count{operation=\"create\"} > 0"

# Recording rules evaluate over the scraped data.
poll 30 nonempty "cluster_queue:kueue_pending_workloads:sum{cluster_queue=\"$CQ\"}" ||
  fail "recording rule cluster_queue:kueue_pending_workloads:sum has no $CQ series"
poll 30 nonempty 'operation:batchd_store_operation_duration_seconds:p99_5m{operation="create"}' ||
  fail "recording rule operation:batchd_store_operation_duration_seconds:p99_5m is empty"
# Every rule is healthy (evaluated without error).
rules_ok() {
  curl -s "$PROM/api/v1/rules" | python3 -c '
import json, sys
rules = [r for g in json.load(sys.stdin)["data"]["groups"] for r in g["rules"]]
bad = [(r["name"], r.get("health"), r.get("lastError", "")) for r in rules if r.get("health") != "ok"]
print(len(rules), bad)
sys.exit(0 if len(rules) == 18 and not bad else 1)'
}
poll 30 rules_ok || fail "rules not all healthy: $(rules_ok)"
# The inactive ClusterQueue's alert is pending (it fires after its 10 minutes).
inactive_alert() {
  curl -s "$PROM/api/v1/alerts" | python3 -c '
import json, sys
alerts = json.load(sys.stdin)["data"]["alerts"]
sys.exit(0 if any(a["labels"].get("alertname") == "KueueClusterQueueInactive" and
                  a["labels"].get("cluster_queue") == sys.argv[1] for a in alerts) else 1)' "$BAD_CQ"
}
poll 30 inactive_alert || fail "no KueueClusterQueueInactive alert for $BAD_CQ: $(curl -s "$PROM/api/v1/alerts" | head -c 600)"
curl -s "$PROM/api/v1/alerts" | grep -q "\"cluster_queue\":\"$CQ\"" &&
  fail "an alert names the healthy ClusterQueue $CQ: $(curl -s "$PROM/api/v1/alerts" | head -c 600)"

# Every query of the dashboard runs; the overview's answer what happened.
python3 - "$DEPLOY/grafana/batchd-kueue.json" >"$E2E_TMP/exprs" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for p in d["panels"]:
    for t in p.get("targets", []):
        print(t["expr"].replace("$cluster_queue", ".*"))
PY
n=0
while IFS= read -r e; do
  r=$(query "$e")
  [[ $r == ERROR* ]] && fail "dashboard query fails: $e: $r"
  n=$((n + 1))
done <"$E2E_TMP/exprs"
((n >= 25)) || fail "only $n dashboard queries"
expect_ok nonempty "sum(kueue_admitted_active_workloads{cluster_queue=~\".*\"}) >= 0"

# Every metric the rules and dashboard name is one the server exports.
k get --raw /metrics >"$E2E_TMP/metrics.txt"
missing=$(cat "$DEPLOY"/prometheus/rules/*.yml "$DEPLOY/grafana/batchd-kueue.json" |
  grep -oP '(?<![:\w])(kueue|kube|apiserver|batchd)_[a-z_]*[a-z](?![:\w*])' | sed -E 's/_(bucket|sum|count)$//' | sort -u |
  while read -r m; do grep -q "^# TYPE $m " "$E2E_TMP/metrics.txt" || echo "$m"; done)
[[ -z $missing ]] || fail "rules or dashboard name metrics the server does not export: $missing"
