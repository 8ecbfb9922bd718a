# A paged LIST (limit/continue) of 10,000 objects under concurrent writes is
# one snapshot (kube-apiserver: later pages read at the first page's
# resourceVersion), equal to a resourceVersionMatch=Exact list at that
# revision, and an informer-style list-then-watch misses nothing compared
# with the store's final state. Leases: cheap objects no controller touches.
source "$E2E_LIB"
ensure_ns
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
expect_ok python3 "$HERE/list_snapshot.py" "$PORT" "$NS" "${LIST_SNAPSHOT_COUNT:-10000}"
echo "$OUT"
# kubectl's own chunked list of the same collection agrees with one plain list.
expect_eq "$(k get leases -n "$NS" --chunk-size=500 -o name | wc -l)" \
  "$(k get leases -n "$NS" --chunk-size=0 -o name | wc -l)" "kubectl chunked vs unchunked count"
k delete namespace "$NS" --wait=false >/dev/null
