# e2e-parallel
# StrictFIFO blocks behind a head that does not fit; BestEffortFIFO admits
# the smaller job behind it.
source "$(dirname "$0")/lib.sh"
ensure_ns
NODE="node-$NS"
sim_node "$NODE" 32 64Gi
flavor "$NS-f" "$NODE"
for s in StrictFIFO BestEffortFIFO; do
  cluster_queue "$NS-${s,,}" "$NS-f" 4 8Gi "queueingStrategy: $s"
  local_queue "$NS" "lq-${s,,}" "$NS-${s,,}"
done

for s in StrictFIFO BestEffortFIFO; do
  p=${s,,}
  queued_job "$p-run" "lq-${s,,}" 2 1h
done
poll 30 admitted_count_is 2 strictfifo-run besteffortfifo-run || fail "first jobs not admitted"
# Heads that do not fit (3 cpu, 2 free), then — a second later, so they are
# younger — small jobs that would fit.
for s in StrictFIFO BestEffortFIFO; do queued_job "${s,,}-head" "lq-${s,,}" 3 1h; done
sleep 1.2
for s in StrictFIFO BestEffortFIFO; do queued_job "${s,,}-small" "lq-${s,,}" 1 1h; done

poll 40 wl_cond_is besteffortfifo-small Admitted True || fail "BestEffortFIFO: the small job behind a blocked head was not admitted"
expect_ne "$(wl_cond besteffortfifo-head Admitted)" "True" "BestEffortFIFO head (3 cpu, 2 free)"
# StrictFIFO: the small job stays behind its head.
sleep 3
expect_ne "$(wl_cond strictfifo-small Admitted)" "True" "StrictFIFO small job behind a blocked head"
expect_ne "$(wl_cond strictfifo-head Admitted)" "True" "StrictFIFO head (3 cpu, 2 free)"
# Once the running job goes, the head is admitted, then the small job.
k delete job strictfifo-run -n "$NS" --cascade=background >/dev/null
poll 60 wl_cond_is strictfifo-head Admitted True || fail "StrictFIFO head not admitted after quota freed"
poll 30 wl_cond_is strictfifo-small Admitted True || fail "StrictFIFO small job not admitted after its head"
