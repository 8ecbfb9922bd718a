# /metrics serves Prometheus text with request counters; health endpoints work.
source "$E2E_LIB"

k get namespaces >/dev/null
expect_ok k get --raw /metrics
expect_contains "$OUT" "apiserver_request_total" "metrics"
expect_match "$OUT" '^apiserver_request_total\{.*\} [0-9]+' "metrics sample"
expect_contains "$OUT" "# TYPE apiserver_request_total counter" "metrics type"
# The controllers' Event recorder: Events its spam filter or queue dropped.
expect_match "$OUT" '^batchd_events_dropped_total\{reason="spam_filter"\} [0-9]+$' "events metric"
expect_match "$OUT" '^batchd_events_dropped_total\{reason="queue_full"\} [0-9]+$' "events metric"
expect_match "$OUT" '^batchd_events_combined_total [0-9]+$' "events metric"

for p in /healthz /readyz /livez; do
  expect_eq "$(k get --raw "$p")" "ok" "$p"
done
