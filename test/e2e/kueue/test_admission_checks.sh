# e2e-parallel
# Two-phase admission with kubectl: a ClusterQueue with AdmissionChecks
# reserves quota (QuotaReserved) and admits only once every check is Ready.
#  - An external check (its controller played here with status patches):
#    inactive until Active, then Ready with podSetUpdates that reach the pods;
#    Rejected deactivates the workload.
#  - The built-in provisioning check (kueue.x-k8s.io/provisioning-request):
#    a job waits QuotaReserved until `batchctl create simulated-nodes` makes
#    room, then is Admitted and completes; with no room, Retry (backoff) and
#    then Rejected.
source "$(dirname "$0")/lib.sh"
ensure_ns
P="$NS"
bc() { "$BIN_DIR/batchctl" -s "$SERVER" "$@"; }
cleanup() {
  k delete jobs -n "$NS" --all --wait=false >/dev/null 2>&1 || true
  k delete nodes -l "e2e-node=$P" --wait=false >/dev/null 2>&1 || true
  k delete nodes "$P-ext" --wait=false >/dev/null 2>&1 || true
}
trap cleanup EXIT
now() { date -u +%Y-%m-%dT%H:%M:%SZ; }
cq_active() { k get cq "$1" -o jsonpath='{.status.conditions[?(@.type=="Active")].reason}'; }
check_state() { wl_field "$1" "{.status.admissionChecks[?(@.name==\"$2\")].state}"; }
check_state_is() { [[ $(check_state "$1" "$2") == "$3" ]]; }
# set_check JOB CHECK STATE [PODSETUPDATES_JSON]: what a check controller writes.
set_check() {
  local wl upd=""
  wl=$(wl_of "$1")
  [[ -n "${4:-}" ]] && upd=", \"podSetUpdates\": $4"
  k patch workloads.kueue.x-k8s.io -n "$NS" "$wl" --subresource=status --type=merge -p \
    "{\"status\": {\"admissionChecks\": [{\"name\": \"$2\", \"state\": \"$3\", \"message\": \"e2e\", \"lastTransitionTime\": \"$(now)\"$upd}]}}" >/dev/null
}

# --- an external check ---
sim_node "$P-ext" 8 16Gi
flavor "$NS-ext" "$P-ext"
cat <<YAML | k apply -f - >/dev/null
apiVersion: $KQ
kind: AdmissionCheck
metadata: {name: $NS-ext}
spec: {controllerName: example.com/e2e}
YAML
cluster_queue "$NS-ext" "$NS-ext" 4 8Gi "admissionChecksStrategy: {admissionChecks: [{name: $NS-ext}]}"
local_queue "$NS" ext "$NS-ext"
reason_is() { [[ $(cq_active "$1") == "$2" ]]; }
poll 20 reason_is "$NS-ext" AdmissionCheckInactive ||
  fail "ClusterQueue with an inactive check: Active reason '$(cq_active "$NS-ext")'"
expect_contains "$(k get cq "$NS-ext" -o jsonpath='{.status.conditions[0].message}')" \
  "references inactive AdmissionCheck(s): [$NS-ext]" "inactive message"
k patch admissioncheck "$NS-ext" --subresource=status --type=merge -p \
  "{\"status\": {\"conditions\": [{\"type\": \"Active\", \"status\": \"True\", \"reason\": \"Active\", \"message\": \"e2e\", \"lastTransitionTime\": \"$(now)\"}]}}" >/dev/null
poll 20 reason_is "$NS-ext" Ready || fail "ClusterQueue not Active once its check is: '$(cq_active "$NS-ext")'"

queued_job ext-ok ext 1 1s
poll 30 wl_cond_is ext-ok QuotaReserved True || fail "ext-ok: no quota reserved"
expect_eq "$(check_state ext-ok "$NS-ext")" "Pending" "check state after reservation"
sleep 2
expect_ne "$(wl_cond ext-ok Admitted)" "True" "admitted before its check"
expect_eq "$(suspended ext-ok)" "true" "job before its check is Ready"
set_check ext-ok "$NS-ext" Ready '[{"name": "main", "labels": {"e2e-checked": "yes"}, "annotations": {"e2e/ann": "v"}}]'
poll 30 wl_cond_is ext-ok Admitted True || fail "ext-ok not admitted after its check is Ready"
kwait ext-ok complete 60
pods=$(job_pods ext-ok); pod=${pods%%$'\n'*}
expect_eq "$(k get pod -n "$NS" "$pod" -o jsonpath='{.metadata.labels.e2e-checked} {.metadata.annotations.e2e/ann}')" \
  "yes v" "podSetUpdates on the pod"

queued_job ext-no ext 1 1s
poll 30 wl_cond_is ext-no QuotaReserved True || fail "ext-no: no quota reserved"
set_check ext-no "$NS-ext" Rejected
inactive_wl() { [[ $(wl_field ext-no '{.spec.active}') == false ]]; }
poll 30 inactive_wl || fail "Rejected did not deactivate the workload"
poll 30 wl_cond_is ext-no QuotaReserved False || fail "the rejected workload keeps its quota"
expect_eq "$(wl_field ext-no '{.status.conditions[?(@.type=="Evicted")].reason}')" \
  "DeactivatedDueToAdmissionCheck" "eviction reason"
expect_contains "$(wl_field ext-no '{.status.conditions[?(@.type=="Evicted")].message}')" \
  "Admission check(s): [$NS-ext], were rejected" "eviction message"
expect_eq "$(suspended ext-no)" "true" "rejected job"

# --- the provisioning check ---
cat <<YAML | k apply -f - >/dev/null
apiVersion: $KQ
kind: ProvisioningRequestConfig
metadata: {name: $NS-wait}
spec:
  provisioningClassName: check-capacity.autoscaling.x-k8s.io
  parameters: {batchd.io/node-selector: "e2e-pool=$P", batchd.io/provisioning-timeout: 5m}
---
apiVersion: $KQ
kind: AdmissionCheck
metadata: {name: $NS-prov}
spec:
  controllerName: kueue.x-k8s.io/provisioning-request
  parameters: {apiGroup: kueue.x-k8s.io, kind: ProvisioningRequestConfig, name: $NS-wait}
YAML
active_check() { [[ $(k get admissioncheck "$1" -o jsonpath='{.status.conditions[?(@.type=="Active")].status}') == True ]]; }
poll 20 active_check "$NS-prov" || fail "provisioning check not Active: $(k get admissioncheck "$NS-prov" -o jsonpath='{.status}')"
flavor "$NS-pool" "$P"
cluster_queue "$NS-prov" "$NS-pool" 16 32Gi "admissionChecksStrategy: {admissionChecks: [{name: $NS-prov}]}"
local_queue "$NS" prov "$NS-prov"
queued_job grow prov 2 1s "" 2
poll 30 wl_cond_is grow QuotaReserved True || fail "grow: no quota reserved"
sleep 3
expect_eq "$(check_state grow "$NS-prov")" "Pending" "provisioning check with no nodes"
expect_contains "$(wl_field grow "{.status.admissionChecks[0].message}")" "0 of 2 pod(s) fit" "waiting message"
expect_eq "$(suspended grow)" "true" "job while capacity is missing"
bc create simulated-nodes --levels hostname=2 --prefix "$P" --cpu 2 --memory 4Gi \
  --labels "e2e-node=$P,e2e-pool=$P" --taints "e2e-node=$P:NoSchedule" >/dev/null
poll 30 check_state_is grow "$NS-prov" Ready || fail "provisioning check not Ready once nodes exist: $(wl_field grow '{.status.admissionChecks}')"
poll 30 wl_cond_is grow Admitted True || fail "grow not admitted after provisioning"
kwait grow complete 60
pods=$(job_pods grow); pod=${pods%%$'\n'*}
expect_eq "$(k get pod -n "$NS" "$pod" -o jsonpath='{.spec.nodeSelector.e2e-pool}')" "$P" "pool node selector from podSetUpdates"
expect_contains "$(k get pod -n "$NS" "$pod" -o jsonpath='{.metadata.annotations}')" \
  "autoscaling.x-k8s.io/consume-provisioning-request" "provisioning annotation"

# No room within the timeout: Retry after 2 s, then Rejected.
cat <<YAML | k apply -f - >/dev/null
apiVersion: $KQ
kind: ProvisioningRequestConfig
metadata: {name: $NS-short}
spec:
  provisioningClassName: check-capacity.autoscaling.x-k8s.io
  parameters: {batchd.io/node-selector: "e2e-pool=$P", batchd.io/provisioning-timeout: 3s}
  retryStrategy: {backoffLimitCount: 1, backoffBaseSeconds: 2, backoffMaxSeconds: 10}
---
apiVersion: $KQ
kind: AdmissionCheck
metadata: {name: $NS-short}
spec:
  controllerName: kueue.x-k8s.io/provisioning-request
  parameters: {apiGroup: kueue.x-k8s.io, kind: ProvisioningRequestConfig, name: $NS-short}
YAML
cluster_queue "$NS-short" "$NS-pool" 100 32Gi "admissionChecksStrategy: {admissionChecks: [{name: $NS-short}]}"
local_queue "$NS" short "$NS-short"
queued_job huge short 50 1s
poll 30 wl_cond_is huge QuotaReserved True || fail "huge: no quota reserved"
# The Retry eviction lasts from the first timeout to the requeue (about 2 s);
# a slow poll on a loaded machine may miss it, so the workload's
# EvictedDueToAdmissionCheck Event (which outlives it) is accepted too.
evicted_by_check() {
  [[ $(wl_field huge '{.status.conditions[?(@.type=="Evicted")].reason}') == AdmissionCheck ]] && return 0
  [[ -n $(wl_event_messages huge EvictedDueToAdmissionCheck) ]]
}
poll 30 evicted_by_check || fail "no Retry eviction: $(wl_field huge '{.status}' | head -c 600)"
gone_inactive() { [[ $(wl_field huge '{.spec.active}') == false ]]; }
poll 40 gone_inactive || fail "huge not deactivated after the retry: $(wl_field huge '{.status}' | head -c 600)"
expect_eq "$(wl_field huge "{.status.admissionChecks[0].retryCount}")" "1" "attempts retried"
expect_contains "$(wl_field huge '{.status.conditions[?(@.type=="Evicted")].message}')" \
  "Admission check(s): [$NS-short], were rejected" "rejection"
expect_eq "$(suspended huge)" "true" "rejected job"
