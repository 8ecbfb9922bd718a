#!/usr/bin/env bash
# e2e-parallel
# The README's quickstart, run as written against a server started as
# `make run` starts it (embedded SQLite store, the local node, loopback admin
# without credentials). The `sh` blocks of "Quickstart with kubectl" are
# read from README.md itself, so the README cannot drift from what works;
# only the port, the paths of the binaries and the kubeconfig, and the
# endless `kubectl get -w` are adapted.
source "${E2E_LIB:?}"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
README="$ROOT/README.md"
QPORT=$(free_port)
SPID=""
cleanup() {
  [[ -n $SPID ]] && kill "$SPID" 2>/dev/null || true
  wait 2>/dev/null || true
}
trap cleanup EXIT

# `make run`'s command (Makefile, target run), with this test's port and data dir.
run_cmd=$(sed -n '/^run:/,/^$/p' "$ROOT/Makefile" | grep -F 'bin/batchd server') ||
  fail "Makefile's run target has no 'batchd server' line"
expect_contains "$run_cmd" "--allow-loopback-admin" "make run's command"
"$BIN_DIR/batchd" server --listen "127.0.0.1:$QPORT" --data-dir "$E2E_TMP/batchd-data" \
  --allow-loopback-admin >"$E2E_TMP/server.log" 2>&1 &
SPID=$!
wait_for 30 curl -sf "http://127.0.0.1:$QPORT/readyz" >/dev/null ||
  fail "server as make run starts it did not become ready: $(tail -3 "$E2E_TMP/server.log")"

# A reader gets to `kubectl top nodes` seconds after start; the agent's
# first metrics sample must exist by then (as it does for a reader).
wait_for 30 env HOME="$E2E_TMP/home" kubectl -s "http://127.0.0.1:$QPORT" top nodes ||
  fail "no node metrics 30 s after start"

# The sh blocks between "## Quickstart with kubectl" and the next heading.
section=$(sed -n '/^## Quickstart with kubectl/,/^## /p' "$README")
blocks=$(awk '/^```sh$/ {on=1; next} /^```$/ {on=0} on' <<<"$section")
[[ $(grep -c "^\`\`\`sh$" <<<"$section") -ge 2 ]] || fail "README quickstart: expected its sh blocks"
expect_contains "$blocks" "kubectl wait -n team-a --for=condition=complete job/hello" "README quickstart"

# Adapt: no `make run &` (the server runs), this port, the built binaries,
# a scratch kubeconfig, and `-w` bounded (it watches until interrupted).
script=$(sed -e '/^make run &/d' \
  -e "s#http://127.0.0.1:8080#http://127.0.0.1:$QPORT#g" \
  -e "s#build/bin/#$BIN_DIR/#g" \
  -e "s#/tmp/batchd.kubeconfig#$E2E_TMP/batchd.kubeconfig#g" \
  -e 's#^\(kubectl get [^#]* -w\)\( .*\)\?$#timeout 3 \1 || [ $? = 124 ]#' <<<"$blocks")
expect_not_contains "$script" "8080" "adapted quickstart"
printf '%s\n' "$script" >"$E2E_TMP/quickstart.sh"

# Run it as a user would paste it: each command must succeed. HOME is
# scratch so kubectl's cache and config are this test's own.
HOME="$E2E_TMP/home" bash -euo pipefail "$E2E_TMP/quickstart.sh" >"$E2E_TMP/quickstart.out" 2>&1 ||
  fail "README quickstart failed (exit $?): $(tail -5 "$E2E_TMP/quickstart.out")"
out=$(cat "$E2E_TMP/quickstart.out")
# What the README says the reader sees.
expect_match "$out" "^hello [0-2]$" "kubectl logs job/hello (one of its pods)"
expect_contains "$out" "job.batch/hello condition met" "kubectl wait"
expect_contains "$out" "job.batch/hi created" "kubectl create job"

# "two Admitted, one Pending: insufficient unused quota for cpu ...": the
# block's last listing may run before admission settles; poll the same command.
kc() { KUBECONFIG="$E2E_TMP/batchd.kubeconfig" HOME="$E2E_TMP/home" "$@"; }
settled() {
  local l
  l=$(kc "$BIN_DIR/batchctl" list workloads -n team-a 2>&1) || return 1
  [[ $(grep -c 'Admitted' <<<"$l") -eq 2 && $(grep -c 'Pending' <<<"$l") -eq 1 ]] &&
    grep -q 'insufficient unused quota for cpu' <<<"$l"
}
wait_for 30 settled || fail "batchctl list workloads: want two Admitted and one Pending (quota), got: $(kc "$BIN_DIR/batchctl" list workloads -n team-a 2>&1 | head -5)"

# Ctrl-C / SIGTERM ends the server promptly (a hang check, not a timing: it
# took about 5 s while its informers stopped one after another; now ~0.3 s),
# with exit status 0.
start=$(date +%s%N)
kill -TERM "$SPID"
rc=0
wait "$SPID" || rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
SPID=""
expect_eq "$rc" "0" "server exit status after SIGTERM"
((ms < 3000)) || fail "server took ${ms} ms to exit after SIGTERM (want < 3 s): $(tail -3 "$E2E_TMP/server.log")"
