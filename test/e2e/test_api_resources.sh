# kubectl api-resources lists the batch and core kinds with short names.
source "$E2E_LIB"

expect_ok k api-resources
out=$OUT
expect_match "$out" "^NAME +SHORTNAMES +APIVERSION +NAMESPACED +KIND" "header"
expect_match "$out" "^jobs +batch/v1 +true +Job$" "jobs row"
expect_match "$out" "^cronjobs +cj +batch/v1 +true +CronJob$" "cronjobs row"
expect_match "$out" "^pods +po +v1 +true +Pod$" "pods row"
expect_match "$out" "^namespaces +ns +v1 +false +Namespace$" "namespaces row"
expect_match "$out" "^nodes +no +v1 +false +Node$" "nodes row"
expect_match "$out" "^events +ev +v1 +true +Event$" "events row"
expect_match "$out" "^leases +coordination.k8s.io/v1 +true +Lease$" "leases row"
expect_match "$out" "^services +svc +v1 +true +Service$" "services row"
expect_match "$out" "^endpointslices +discovery.k8s.io/v1 +true +EndpointSlice$" "endpointslices row"

# Short names resolve.
expect_ok k get cj -A
expect_ok k get po -A
expect_ok k get svc -A
# Group filter.
expect_ok k api-resources --api-group=batch -o name
expect_eq "$(sort <<<"$OUT" | tr '\n' ' ')" "cronjobs.batch jobs.batch " "batch resources"
