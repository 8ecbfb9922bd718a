# kubectl version shows the server's version; /version is well-formed.
source "$E2E_LIB"

expect_ok k version
expect_contains "$OUT" "Client Version: v1.32" "kubectl version"
expect_match "$OUT" "Server Version: v1\.[0-9]+\.[0-9]+" "kubectl version"

raw=$(k get --raw /version)
major=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["major"])' <<<"$raw")
expect_eq "$major" "1" "/version major"

# The README's `batchctl kubeconfig --server URL` (the global flag after the
# subcommand) writes a kubeconfig that kubectl uses as is.
KC="$E2E_TMP/version-$$.kubeconfig"
"${BIN_DIR:?}/batchctl" kubeconfig --server "$SERVER" >"$KC" || fail "batchctl kubeconfig --server exited $?"
expect_contains "$(cat "$KC")" "server: $SERVER" "kubeconfig's server"
KUBECONFIG="$KC" kubectl get --raw /version >/dev/null || fail "kubectl with the written kubeconfig failed"
