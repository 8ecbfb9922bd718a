# Label selectors (-l) and field selectors (--field-selector).
source "$E2E_LIB"
ensure_ns
job_yaml s1 "    tier: a" | k create -f - >/dev/null
job_yaml s2 "    tier: b" | k create -f - >/dev/null
job_yaml s3 | k create -f - >/dev/null

names() { k get jobs -n "$NS" -o 'jsonpath={range .items[*]}{.metadata.name} {end}' "$@"; }
expect_eq "$(names -l tier=a)" "s1 " "-l tier=a"
expect_eq "$(names -l 'tier!=a')" "s2 s3 " "-l tier!=a"
expect_eq "$(names -l 'tier in (a,b)')" "s1 s2 " "-l set"
expect_eq "$(names -l tier)" "s1 s2 " "-l exists"
expect_eq "$(names -l '!tier')" "s3 " "-l not exists"
expect_eq "$(names -l app=e2e,tier=b)" "s2 " "-l and"
expect_eq "$(names -l tier=zzz)" "" "-l no match"
expect_fail k get jobs -n "$NS" -l 'tier in (a'

expect_eq "$(names --field-selector metadata.name=s2)" "s2 " "field selector"
expect_eq "$(names --field-selector metadata.name!=s2)" "s1 s3 " "field selector !="
expect_eq "$(names --field-selector metadata.namespace=$NS,metadata.name=s3)" "s3 " "field selector and"
expect_fail k get jobs -n "$NS" --field-selector spec.nosuch=x
expect_contains "$OUT" "field label not supported" "unsupported field selector"
