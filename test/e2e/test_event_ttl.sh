# --event-ttl: Events are deleted that long after their last write (kube-
# apiserver's flag, default 1h). A server of its own with --event-ttl=8s:
# an Event created now is gone within the TTL plus a sweep interval (1 s),
# and one renewed meanwhile (a repeat, as the recorder aggregates it: count
# and lastTimestamp) lives until 8 s after its renewal. (Timestamps have
# whole seconds: the waits leave a second of slack either way.)
source "$E2E_LIB"
BATCHD="${BIN_DIR:?}/batchd"
TTL_DIR=$(mktemp -d "${TMPDIR:-/tmp}/batchd-eventttl.XXXXXX")
TTL_PID=""
cleanup_ttl() {
  if [[ -n "$TTL_PID" ]]; then kill "$TTL_PID" 2>/dev/null || true; wait "$TTL_PID" 2>/dev/null || true; fi
  rm -rf "$TTL_DIR"
}
trap cleanup_ttl EXIT
TTL_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
"$BATCHD" server --listen "127.0.0.1:$TTL_PORT" --allow-loopback-admin --data-dir "$TTL_DIR/data" --no-local-node \
  --event-ttl=8s >"$TTL_DIR/server.log" 2>&1 &
TTL_PID=$!
deadline=$((SECONDS + 30))
until [[ $(curl -s -m 2 "http://127.0.0.1:$TTL_PORT/readyz") == ok ]]; do
  kill -0 "$TTL_PID" 2>/dev/null || fail "server exited: $(tail -n 3 "$TTL_DIR/server.log")"
  ((SECONDS < deadline)) || fail "server not ready within 30s"
  sleep 0.1
done
kt() { kubectl -s "http://127.0.0.1:$TTL_PORT" --cache-dir "$E2E_CACHE" --request-timeout=30s "$@"; }
event() {  # event NAME COUNT: an Event written now
  local now
  now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  printf '{"apiVersion":"v1","kind":"Event","metadata":{"name":"%s","namespace":"default"},"involvedObject":{"kind":"Job","name":"j","namespace":"default"},"reason":"Test","message":"m","type":"Normal","firstTimestamp":"%s","lastTimestamp":"%s","count":%s}' \
    "$1" "$now" "$now" "$2"
}
event short 1 | kt create -f - >/dev/null
event renewed 1 | kt create -f - >/dev/null
sleep 6
# A repeat 6 s in: count 2 and a new lastTimestamp, as the recorder writes it.
event renewed 2 | kt replace -f - >/dev/null
expect_eq "$(kt get events -n default -o name | sort | tr '\n' ' ')" \
  "event/renewed event/short " "both Events before the TTL"
sleep 4  # 10 s: "short" is past 8 s (+1 s sweep); "renewed" about 4 s from its repeat
expect_eq "$(kt get events -n default -o name | tr '\n' ' ')" "event/renewed " "after 10 s"
sleep 8  # 18 s: "renewed" is about 12 s from its repeat
expect_eq "$(kt get events -n default -o name | wc -l)" "0" "after 18 s"
