#!/usr/bin/env bash
# API creates/s with authentication + RBAC against the same server without
# them: ./bench/auth_bench.sh BUILD_DIR [ROUNDS] [apiserver_bench flags]
# Each round starts BUILD_DIR/bin/batchd (SQLite, --store-sync normal,
# --no-local-node) twice on a fresh data dir:
#   plain: --authorization-mode AlwaysAllow --allow-loopback-admin, no credentials
#          (no token lookup, no RBAC: the cost before security);
#   rbac:  --token-auth-file with user `bench` (not in system:masters), bound
#          to ClusterRole edit in bench-a, bench-b and bench-w by RoleBindings and allowed
#          to create namespaces by a ClusterRoleBinding, every request with
#          its bearer token (token lookup + RBAC decision + audit off);
#   tls-rbac: rbac over HTTPS (--serve-https always, the generated CA; the
#          client verifies it and keeps its connections alive), with no
#          loopback admin at all: the admin's set-up uses DATA/admin.token.
# AUTH_BENCH_MODES picks and orders the modes (default "plain rbac"; the
# issue-12 comparison is AUTH_BENCH_MODES="plain tls-rbac").
# Rounds alternate the modes (plain, rbac, plain, rbac, ...) so a loaded
# machine hurts them alike. Prints one line per run: mode create_per_sec create_p99_ms
# server_cpu_s (the server process's user+system CPU over the whole run).
set -euo pipefail
BUILD_DIR=${1:?usage: $0 BUILD_DIR [ROUNDS] [apiserver_bench flags]}
ROUNDS=${2:-2}
shift; shift || true
BATCHD="$BUILD_DIR/bin/batchd"
BENCH="$BUILD_DIR/bin/apiserver_bench"
for b in "$BATCHD" "$BENCH"; do
  [[ -x "$b" ]] || { echo "auth_bench: $b not built" >&2; exit 2; }
done
WORK=$(mktemp -d "${TMPDIR:-/tmp}/batchd-authbench.XXXXXX")
PID=""
cleanup() {
  if [[ -n "$PID" ]]; then kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
TOKEN=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
echo "$TOKEN,bench,2000,bench-users" >"$WORK/tokens.csv"

run() {  # run MODE N
  local mode=$1 n=$2 port data="$WORK/data-$1-$2"
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
  mkdir -p "$data"
  local flags=(--authorization-mode AlwaysAllow --allow-loopback-admin)
  [[ $mode == rbac ]] && flags=(--token-auth-file "$WORK/tokens.csv" --allow-loopback-admin)
  [[ $mode == tls-rbac ]] && flags=(--token-auth-file "$WORK/tokens.csv" --serve-https always)
  "$BATCHD" server --listen "127.0.0.1:$port" --data-dir "$data" --no-local-node \
    "${flags[@]}" >"$WORK/server-$mode-$n.log" 2>&1 &
  PID=$!
  local scheme=http curl_tls=() bench_tls=()
  if [[ $mode == tls-rbac ]]; then
    scheme=https
    curl_tls=(--cacert "$data/pki/ca.crt")
    bench_tls=(--tls-ca "$data/pki/ca.crt")
  fi
  local deadline=$((SECONDS + 30))
  until [[ $(curl -s -m 2 "${curl_tls[@]}" "$scheme://127.0.0.1:$port/healthz" 2>/dev/null) == ok ]]; do
    kill -0 "$PID" 2>/dev/null || { cat "$WORK/server-$mode-$n.log" >&2; exit 1; }
    ((SECONDS < deadline)) || { echo "auth_bench: server not healthy" >&2; exit 1; }
    sleep 0.1
  done
  local token_args=()
  if [[ $mode == rbac || $mode == tls-rbac ]]; then
    # The admin (loopback without credentials; over TLS its generated token)
    # grants `bench` its rights.
    local k=(kubectl -s "$scheme://127.0.0.1:$port" --request-timeout=30s)
    [[ $mode == tls-rbac ]] &&
      k+=(--certificate-authority "$data/pki/ca.crt" --token "$(cat "$data/admin.token")")
    "${k[@]}" create namespace bench-a >/dev/null
    "${k[@]}" create namespace bench-b >/dev/null
    "${k[@]}" create namespace bench-w >/dev/null
    "${k[@]}" create clusterrole ns-creator --verb=create --resource=namespaces >/dev/null
    "${k[@]}" create clusterrolebinding bench-ns --clusterrole=ns-creator --group=bench-users >/dev/null
    for ns in bench-a bench-b bench-w; do
      "${k[@]}" create rolebinding bench-edit --clusterrole=edit --user=bench -n "$ns" >/dev/null
    done
    token_args=(--token "$TOKEN")
  fi
  timeout 600 "$BENCH" --port "$port" "${token_args[@]}" "${bench_tls[@]}" "$@" >"$WORK/$mode-$n.out" || {
    echo "auth_bench: apiserver_bench failed ($mode)" >&2; tail -n 5 "$WORK/server-$mode-$n.log" >&2; exit 1; }
  # The server's CPU for the whole run (set-up, creates, list, watch): less
  # swayed by the machine's load than the rates.
  local ticks
  ticks=$(awk '{print $14 + $15}' "/proc/$PID/stat")
  kill "$PID"; wait "$PID" 2>/dev/null || true; PID=""
  printf '%s create_per_sec=%s create_p99_ms=%s server_cpu_s=%s\n' "$mode" \
    "$(grep -E '^create_per_sec=' "$WORK/$mode-$n.out" | cut -d= -f2)" \
    "$(grep -E '^create_p99_ms=' "$WORK/$mode-$n.out" | cut -d= -f2)" \
    "$(awk -v t="$ticks" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.2f", t / hz}')"
}

read -r -a MODES <<<"${AUTH_BENCH_MODES:-plain rbac}"
for ((r = 1; r <= ROUNDS; r++)); do
  for m in "${MODES[@]}"; do run "$m" "$r" "$@"; done
done
