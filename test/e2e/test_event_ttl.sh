# e2e-quiet
# --event-ttl: Events are deleted that long after their last write (kube-
# apiserver's flag, default 1h). A server of its own with --event-ttl=12s:
# an Event created at T0 is still there 6 s in and gone within the TTL plus
# a sweep interval (1 s); one renewed at T0+6 (a repeat, as the recorder
# aggregates it: count and lastTimestamp) outlives it and goes 12 s after
# its renewal. Timestamps have whole seconds; the checks poll for the state
# they expect and leave several seconds between states, so a slow kubectl
# on a loaded machine does not decide the outcome.
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
  --event-ttl=12s >"$TTL_DIR/server.log" 2>&1 &
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
t0=$(date +%s.%N)
event short 1 | kt create -f - >/dev/null
event renewed 1 | kt create -f - >/dev/null
until_t() {  # until_t SECONDS: sleep until SECONDS after t0
  local left
  left=$(python3 -c "import time; print(max(0.0, $t0 + $1 - time.time()))")
  sleep "$left"
}
elapsed() { python3 -c "import time; print(f'{time.time() - $t0:.1f}')"; }
until_t 6
# A repeat 6 s in: count 2 and a new lastTimestamp, as the recorder writes it.
event renewed 2 | kt replace -f - >/dev/null
expect_eq "$(kt get events -n default -o name | sort | tr '\n' ' ')" \
  "event/renewed event/short " "both Events before the TTL (at $(elapsed) s)"
# "short" goes at 12 s (+1 s sweep, +1 s timestamp rounding); "renewed" not
# before 18 s.
short_gone() { [[ $(kt get events -n default -o name | tr '\n' ' ') == "event/renewed " ]]; }
wait_for 20 short_gone || fail "after $(elapsed) s: $(kt get events -n default -o name | tr '\n' ' '), want only event/renewed"
gone_at=$(elapsed)
python3 -c "import sys; sys.exit(0 if $gone_at >= 11 else 1)" || fail "short gone at ${gone_at} s, before its TTL"
none_left() { [[ -z $(kt get events -n default -o name) ]]; }
wait_for 20 none_left || fail "after $(elapsed) s: $(kt get events -n default -o name | tr '\n' ' '), want none"
gone_at=$(elapsed)
python3 -c "import sys; sys.exit(0 if $gone_at >= 17 else 1)" || fail "renewed gone at ${gone_at} s, before 12 s after its renewal"
