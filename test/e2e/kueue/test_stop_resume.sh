# e2e-parallel
# batchctl stop/resume: a HoldAndDrain ClusterQueue evicts what it admitted
# and admits nothing; resume admits again. Hold (--keep-already-running)
# keeps running work but admits nothing new. A deactivated workload is
# evicted and never admitted.
source "$(dirname "$0")/lib.sh"
ensure_ns
NODE="node-$NS"
sim_node "$NODE" 16 32Gi
flavor "$NS-f" "$NODE"
"$BIN_DIR/batchctl" -s "$SERVER" create clusterqueue "$NS" --nominal-quota "$NS-f:cpu=4;memory=8Gi" >/dev/null
"$BIN_DIR/batchctl" -s "$SERVER" create localqueue lq -n "$NS" -c "$NS" >/dev/null
queued_job j1 lq 2 1h
poll 30 wl_cond_is j1 Admitted True || fail "j1 not admitted"

"$BIN_DIR/batchctl" -s "$SERVER" stop clusterqueue "$NS" >/dev/null
poll 30 wl_cond_is j1 Evicted True || fail "HoldAndDrain did not evict j1"
expect_eq "$(wl_field j1 '{.status.conditions[?(@.type=="Evicted")].reason}')" "ClusterQueueStopped" "eviction reason"
poll 30 is_suspended j1 || fail "j1 not suspended after its eviction"
queued_job j2 lq 1 1h
sleep 3
expect_ne "$(wl_cond j2 Admitted)" "True" "admission while the ClusterQueue is stopped"
inactive() { [[ $(k get cq "$NS" -o jsonpath='{.status.conditions[?(@.type=="Active")].status}') == False ]]; }
poll 20 inactive || fail "stopped ClusterQueue not Active=False"

"$BIN_DIR/batchctl" -s "$SERVER" resume clusterqueue "$NS" >/dev/null
poll 40 admitted_count_is 2 j1 j2 || fail "after resume admitted $(admitted_count j1 j2) of 2"

# Hold keeps what runs.
"$BIN_DIR/batchctl" -s "$SERVER" stop clusterqueue "$NS" --keep-already-running >/dev/null
queued_job j3 lq 1 1h
sleep 3
expect_eq "$(wl_cond j1 Admitted)" "True" "j1 under Hold"
expect_ne "$(wl_cond j3 Admitted)" "True" "j3 admitted under Hold"
"$BIN_DIR/batchctl" -s "$SERVER" resume clusterqueue "$NS" >/dev/null
poll 40 wl_cond_is j3 Admitted True || fail "j3 not admitted after resume"

# Deactivating a workload evicts it for good.
wl=$(wl_of j3)
"$BIN_DIR/batchctl" -s "$SERVER" stop workload "$wl" -n "$NS" >/dev/null
poll 30 wl_cond_is j3 Evicted True || fail "deactivated workload not evicted"
expect_eq "$(wl_field j3 '{.status.conditions[?(@.type=="Evicted")].reason}')" "Deactivated" "eviction reason"
poll 30 is_suspended j3 || fail "deactivated workload's job not suspended"
sleep 2
expect_ne "$(wl_cond j3 Admitted)" "True" "deactivated workload admitted again"
