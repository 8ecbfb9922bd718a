#!/usr/bin/env bash
# Event writes of one Job whose pods all fail (#16: Events aggregated per
# object as Kubernetes' recorder does).
#
#   bench/event_writes.sh BUILD_DIR [PODS]     (PODS default 100)
#
# Starts BUILD_DIR/bin/batchd server (local node on) on a free loopback port
# and a fresh data dir, creates a Job of PODS pods (completions = parallelism
# = PODS, backoffLimit PODS-1, each pod `exit 1`), waits for its Failed
# condition, stops the server (SIGTERM: the recorder writes what it still
# holds) and prints:
#   - the Events left about the Job and its pods: objects and the sum of
#     their counts, by reason (what `kubectl get events` shows), and
#   - bench/store_writes.py's store writes of the run, Event writes by
#     component and reason.
# Deterministic but for how the pods' failures interleave with the Job
# controller's syncs (a replacement pod or two after the first failures).
set -euo pipefail
BUILD=${1:?usage: bench/event_writes.sh BUILD_DIR [PODS]}
PODS=${2:-100}
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/event-writes.XXXXXX")
chmod 0755 "$WORK"  # pods run as an unprivileged user: it must reach the pod root
cleanup() {
  bench_stop_server
  rm -rf "$WORK"
}
trap cleanup EXIT
bench_start_server "$BUILD/bin/batchd" "$WORK/server.log" --data-dir "$WORK/data"
URL="http://127.0.0.1:$PORT"
python3 - "$PODS" >"$WORK/job.json" <<'EOF'
import json, sys
n = int(sys.argv[1])
print(json.dumps({
    "apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "fails", "namespace": "default"},
    "spec": {"completions": n, "parallelism": n, "backoffLimit": n - 1,
             "template": {"spec": {"restartPolicy": "Never", "containers": [
                 {"name": "main", "image": "busybox", "command": ["sh", "-c", "exit 1"]}]}}}}))
EOF
curl -sf -X POST -H 'Content-Type: application/json' --data @"$WORK/job.json" \
  "$URL/apis/batch/v1/namespaces/default/jobs" >/dev/null
failed() {
  curl -sf "$URL/apis/batch/v1/namespaces/default/jobs/fails" | python3 -c '
import json, sys
j = json.load(sys.stdin)
sys.exit(0 if any(c["type"] == "Failed" and c["status"] == "True"
                  for c in j.get("status", {}).get("conditions", [])) else 1)'
}
deadline=$((SECONDS + 300))
until failed; do
  ((SECONDS < deadline)) || { echo "the Job did not fail within 300 s" >&2; exit 1; }
  sleep 0.5
done
sleep 1  # the recorder's last batch
curl -sf "$URL/api/v1/namespaces/default/events" | python3 -c '
import collections, json, sys
objs, counts = collections.Counter(), collections.Counter()
for e in json.load(sys.stdin)["items"]:
    k = (e["involvedObject"]["kind"], e.get("source", {}).get("component", "?"), e["reason"])
    objs[k] += 1
    counts[k] += e.get("count", 1)
print(f"event_objects={sum(objs.values())} event_count_sum={sum(counts.values())}")
for k in sorted(objs):
    print(f"events[{k[0]} | {k[1]} | {k[2]}] objects={objs[k]} count_sum={counts[k]}")'
bench_stop_server
python3 "$HERE/store_writes.py" "$WORK/data/state.db" --jobs 1 >"$WORK/writes.txt"
grep -E '^writes_per_job|^writes\[Event' "$WORK/writes.txt"
awk -F= '/^writes\[Event/ {s += $NF} END {printf "event_writes=%d\n", s}' "$WORK/writes.txt"
