# kubectl get -w sees objects created and changed after it started.
source "$E2E_LIB"
ensure_ns
job_yaml w1 | k create -f - >/dev/null

out="$E2E_TMP/watch.out"
timeout 30 kubectl -s "$SERVER" --cache-dir "$E2E_CACHE" get jobs -n "$NS" -w \
  --output-watch-events >"$out" 2>&1 &
wpid=$!
trap 'kill $wpid 2>/dev/null || true' EXIT

wait_for 15 grep -qE '^ADDED +w1 ' "$out" || fail "watch never listed w1: $(cat "$out")"
job_yaml w2 | k create -f - >/dev/null
wait_for 15 grep -qE '^ADDED +w2 ' "$out" || fail "watch never saw w2 created: $(cat "$out")"
k label job w1 -n "$NS" seen=yes >/dev/null
wait_for 15 grep -qE '^MODIFIED +w1 ' "$out" || fail "watch never saw w1 modified: $(cat "$out")"
k delete job w2 -n "$NS" >/dev/null
wait_for 15 grep -qE '^DELETED +w2 ' "$out" || fail "watch never saw w2 deleted: $(cat "$out")"
kill $wpid 2>/dev/null || true

# A raw watch from a resourceVersion replays what happened after it.
rv=$(k get --raw "/apis/batch/v1/namespaces/$NS/jobs" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["resourceVersion"])')
expect_match "$rv" '^[0-9]+$' "list resourceVersion"
job_yaml w3 | k create -f - >/dev/null
events=$(k get --raw "/apis/batch/v1/namespaces/$NS/jobs?watch=1&resourceVersion=$rv&timeoutSeconds=1")
expect_contains "$events" '"type":"ADDED"' "raw watch"
expect_contains "$events" '"name":"w3"' "raw watch"
expect_not_contains "$events" '"name":"w1"' "raw watch after rv"
