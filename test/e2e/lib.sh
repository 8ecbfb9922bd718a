# Helpers sourced by every e2e test (test/e2e/test_*.sh). run.sh exports:
#   PORT            the server's port on 127.0.0.1
#   E2E_TMP         a scratch directory for this test (removed afterwards)
#   E2E_CACHE       kubectl's --cache-dir (shared, so discovery is fetched once)
#   E2E_REASON      file the first failed assertion writes its reason to
#   E2E_NAME        the test's name
# A test fails on the first failed assertion (exit 1) or any failing command
# (set -e). Every kubectl call goes through `k`, which never reads the
# user's kubeconfig.
set -euo pipefail

SERVER="http://127.0.0.1:${PORT:?PORT not set}"
export KUBECONFIG=/dev/null

# kubectl against the test server; a 30s request timeout so nothing hangs.
k() {
  kubectl -s "$SERVER" --cache-dir "${E2E_CACHE:?}" --request-timeout=30s "$@"
}

# The namespace of this test, created on first use.
NS="e2e-${E2E_NAME//_/-}"

# Created with apply (JSON body) rather than `kubectl create namespace`,
# whose typed client sends protobuf; test_namespace.sh covers that command.
make_ns() {
  printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n' "$1" | k apply -f - >/dev/null
}
ensure_ns() {
  k get namespace "$NS" >/dev/null 2>&1 || make_ns "$NS"
}

fail() {
  local msg="$*"
  [[ -s "${E2E_REASON:?}" ]] || printf '%s\n' "$msg" >"$E2E_REASON"
  echo "ASSERTION FAILED: $msg" >&2
  exit 1
}

# expect_eq GOT WANT [WHAT]
expect_eq() {
  [[ "$1" == "$2" ]] || fail "${3:-value}: got '$1', want '$2'"
}

# expect_ne GOT UNWANTED [WHAT]
expect_ne() {
  [[ "$1" != "$2" ]] || fail "${3:-value}: got '$1', wanted something else"
}

# expect_contains HAYSTACK NEEDLE [WHAT]  (fixed string)
expect_contains() {
  grep -qF -- "$2" <<<"$1" || fail "${3:-output} does not contain '$2'; got: $(head -c 400 <<<"$1")"
}

# expect_not_contains HAYSTACK NEEDLE [WHAT]
expect_not_contains() {
  if grep -qF -- "$2" <<<"$1"; then
    fail "${3:-output} unexpectedly contains '$2'; got: $(head -c 400 <<<"$1")"
  fi
}

# expect_match HAYSTACK EXTENDED_REGEX [WHAT]
expect_match() {
  grep -qE -- "$2" <<<"$1" || fail "${3:-output} does not match /$2/; got: $(head -c 400 <<<"$1")"
}

# expect_fail CMD...: the command must exit non-zero; its combined output is
# left in $OUT.
expect_fail() {
  local rc=0
  OUT=$("$@" 2>&1) || rc=$?
  ((rc != 0)) || fail "expected failure from: $*; it succeeded with: $(head -c 300 <<<"$OUT")"
}

# expect_ok CMD...: the command must succeed; its combined output is in $OUT.
expect_ok() {
  local rc=0
  OUT=$("$@" 2>&1) || rc=$?
  # One line (the report shows a reason's first line), ending where errors are.
  ((rc == 0)) || fail "command failed (rc=$rc): $*: $(tr '\n' ' ' <<<"$OUT" | tail -c 400)"
}

# expect_absent KIND NAME: `kubectl get` says NotFound.
expect_absent() {
  expect_fail k get -n "$NS" "$1" "$2"
  expect_contains "$OUT" "NotFound" "get $1 $2"
}

# jp KIND NAME JSONPATH: one field of an object.
jp() {
  k get -n "$NS" "$1" "$2" -o "jsonpath=$3"
}

# wait_for SECONDS CMD...: retries CMD every 0.1s until it succeeds.
wait_for() {
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.1
  done
}

# free_port: a loopback TCP port free at the moment (for extra servers,
# agents' log ports, proxies).
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# A minimal Job manifest: job_yaml NAME [EXTRA_LABEL_LINES]
job_yaml() {
  cat <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  namespace: $NS
  labels:
    app: e2e
${2:-}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        command: ["true"]
YAML
}
