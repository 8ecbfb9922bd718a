# e2e-parallel
# Kueue's visibility API: the pendingworkloads subresource of a ClusterQueue
# and of a LocalQueue (positions, priority, localQueueName, limit/offset),
# listed in discovery, 404 for a missing queue; batchctl list workloads shows
# POSITION IN QUEUE and batchctl describe workload the blocker and an
# estimated start; the positions are the order in which the workloads are
# then admitted.
source "$(dirname "$0")/lib.sh"
NODE="node-$NS"
CQ="cq-$NS"
FL="fl-$NS"
TB="$NS-b"
make_ns "$NS"
make_ns "$TB"
sim_node "$NODE" 32 128Gi
flavor "$FL" "$NODE"
cluster_queue "$CQ" "$FL" 1 10Gi
local_queue "$NS" lq "$CQ"
local_queue "$TB" lq "$CQ"
priority_class "$NS-low" 10
priority_class "$NS-high" 1000

# One 1-cpu job runs and holds the whole quota; four wait behind it.
queued_job run0 lq 1 1h
poll 30 wl_cond_is run0 Admitted True || fail "run0 not admitted"
queued_job a lq 1 3s "$NS-low"
sleep 1.1
queued_job b lq 1 3s "$NS-high"
sleep 1.1
queued_job c lq 1 3s "$NS-low" 1 "$TB"
sleep 1.1
queued_job d lq 1 3s "$NS-high" 1 "$TB"
for j in a b; do poll 30 has_wl "$j" || fail "no workload for $j"; done
for j in c d; do poll 30 has_wl "$j" "$TB" || fail "no workload for $j"; done

V=/apis/visibility.kueue.x-k8s.io/v1beta2
# Discovery lists the group and its subresources.
expect_contains "$(k get --raw /apis)" "visibility.kueue.x-k8s.io" "group in /apis"
expect_contains "$(k get --raw $V)" "clusterqueues/pendingworkloads" "v1beta2 resources"
expect_contains "$(k get --raw /apis/visibility.kueue.x-k8s.io/v1beta1)" "localqueues/pendingworkloads" "v1beta1 resources"

# Queue order: high priority first (b, d by creation), then low (a, c).
order() {
  k get --raw "$V/clusterqueues/$CQ/pendingworkloads" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["kind"] == "PendingWorkloadsSummary", d
print(" ".join("%s:%s:%s:%s" % (i["metadata"]["namespace"], i["localQueueName"], i["priority"], i["positionInClusterQueue"]) for i in d["items"]))'
}
want="$NS:lq:1000:0 $TB:lq:1000:1 $NS:lq:10:2 $TB:lq:10:3"
four() { [[ $(order) == "$want" ]]; }
poll 20 four || fail "cq pending order: $(order), want $want"
# The LocalQueue view of $TB: d then c, positions in the LocalQueue 0 and 1.
lqv=$(k get --raw "$V/namespaces/$TB/localqueues/lq/pendingworkloads" | python3 -c '
import json, sys
print(" ".join("%s:%s:%s" % (i["priority"], i["positionInClusterQueue"], i["positionInLocalQueue"]) for i in json.load(sys.stdin)["items"]))')
expect_eq "$lqv" "1000:1:0 10:3:1" "localqueue view (priority:posInCQ:posInLQ)"
# limit / offset.
lim=$(k get --raw "$V/clusterqueues/$CQ/pendingworkloads?limit=1&offset=2" | python3 -c '
import json, sys
print(" ".join(str(i["positionInClusterQueue"]) for i in json.load(sys.stdin)["items"]))')
expect_eq "$lim" "2" "limit=1 offset=2"
# A missing queue is 404 NotFound; a bad limit is 400.
out=$(k get --raw "$V/clusterqueues/nope-$NS/pendingworkloads" 2>&1) && fail "missing cq answered: $out"
expect_contains "$out" "NotFound" "missing clusterqueue"
out=$(k get --raw "$V/namespaces/$NS/localqueues/nope/pendingworkloads" 2>&1) && fail "missing lq answered: $out"
expect_contains "$out" "NotFound" "missing localqueue"
out=$(k get --raw "$V/clusterqueues/$CQ/pendingworkloads?limit=-1" 2>&1) && fail "limit=-1 answered: $out"
expect_contains "$out" "BadRequest" "negative limit"

# batchctl: the POSITION IN QUEUE column and describe's blocker.
out=$("$BIN_DIR/batchctl" -s "$SERVER" list workloads -n "$TB" --status pending)
expect_contains "$out" "POSITION IN QUEUE" "batchctl list workloads header"
out=$("$BIN_DIR/batchctl" -s "$SERVER" describe workload -n "$TB" "$(wl_of d "$TB")")
expect_contains "$out" "Position:       1 in ClusterQueue, 0 in LocalQueue" "describe position"
expect_contains "$out" "Blocked by:     cpu in flavor $FL of ClusterQueue $CQ: 1 more needed" "describe blocker"
expect_contains "$out" "Est. start:" "describe estimate"

# Admission order = the positions: b, d, a, c, one at a time (1 cpu), once
# the holder is gone.
k delete job -n "$NS" run0 --cascade=background >/dev/null
admitted_at() {  # JOB NS: the Admitted condition's time, or "".
  wl_field "$1" '{.status.conditions[?(@.type=="Admitted")].lastTransitionTime}' "$2"
}
all_admitted() { for x in "a $NS" "b $NS" "c $TB" "d $TB"; do [[ -n $(admitted_at $x) ]] || return 1; done; }
poll 60 all_admitted || fail "not all admitted: a=$(admitted_at a "$NS") b=$(admitted_at b "$NS") c=$(admitted_at c "$TB") d=$(admitted_at d "$TB")"
got=$(for x in "b $NS" "d $TB" "a $NS" "c $TB"; do echo "$(admitted_at $x) ${x%% *}"; done | sort | awk '{print $2}' | xargs)
expect_eq "$got" "b d a c" "admission order"
