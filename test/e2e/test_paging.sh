# --chunk-size paging: kubectl follows continue tokens and lists everything.
source "$E2E_LIB"
ensure_ns
for i in 1 2 3 4 5; do job_yaml "pg$i" | k create -f - >/dev/null; done

expect_eq "$(k get jobs -n "$NS" --chunk-size=2 -o name | tr '\n' ' ')" \
  "job.batch/pg1 job.batch/pg2 job.batch/pg3 job.batch/pg4 job.batch/pg5 " "chunked list"
expect_eq "$(k get jobs -n "$NS" --chunk-size=2 --no-headers | wc -l)" "5" "chunked table"

# The server really pages: limit=2 gives 2 items and a continue token.
page() {
  python3 -c 'import json,sys; o=json.load(sys.stdin); m=o["metadata"]; import urllib.parse as u; print(len(o["items"]), u.quote(m.get("continue",""), safe=""), m.get("remainingItemCount",""))'
}
read -r n cont remaining <<<"$(k get --raw "/apis/batch/v1/namespaces/$NS/jobs?limit=2" | page)"
expect_eq "$n" "2" "first page size"
expect_ne "$cont" "" "continue token"
expect_eq "$remaining" "3" "remainingItemCount"
read -r n cont2 _ <<<"$(k get --raw "/apis/batch/v1/namespaces/$NS/jobs?limit=2&continue=$cont" | page)"
expect_eq "$n" "2" "second page size"
read -r n cont3 _ <<<"$(k get --raw "/apis/batch/v1/namespaces/$NS/jobs?limit=2&continue=$cont2" | page)"
expect_eq "$n/$cont3" "1/" "last page"
expect_fail k get --raw "/apis/batch/v1/namespaces/$NS/jobs?limit=2&continue=garbage"
