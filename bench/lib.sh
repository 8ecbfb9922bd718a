# Helpers sourced by the benchmark scripts in bench/.

# bench_start_server BATCHD LOG [flags...]: starts `BATCHD server` with
# --allow-loopback-admin on a free loopback port (PORT) with the given flags
# (at least --data-dir), its output in LOG, its pid in PID; waits up to 30 s
# for /healthz and exits 1 with the log's tail if the server dies or stays
# unhealthy.
bench_start_server() {
  local batchd=$1 log=$2; shift 2
  PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
  "$batchd" server --allow-loopback-admin --listen "127.0.0.1:$PORT" "$@" >"$log" 2>&1 &
  PID=$!
  local deadline=$((SECONDS + 30))
  until [[ $(curl -s -m 2 "http://127.0.0.1:$PORT/healthz" 2>/dev/null) == ok ]]; do
    kill -0 "$PID" 2>/dev/null || { tail -n 20 "$log" >&2; exit 1; }
    ((SECONDS < deadline)) || { echo "$(basename "$0"): server not healthy" >&2; exit 1; }
    sleep 0.1
  done
}

# bench_stop_server: SIGTERM to PID (if any), SIGKILL after 5 s; reaps it.
bench_stop_server() {
  [[ -n "${PID:-}" ]] || return 0
  kill "$PID" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$PID" 2>/dev/null || true
  wait "$PID" 2>/dev/null || true
  PID=""
}
