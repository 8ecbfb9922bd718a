#!/usr/bin/env bash
# End-to-end throughput: batchd vs Slurm on this machine.
#   bench/e2e_jobs_bench.sh BUILD_DIR [N=1000]
# 1. batchd: starts BUILD_DIR/bin/batchd server (local node agent on) with a
#    fresh data dir on a free loopback port, submits N one-pod Jobs running
#    `true` over keep-alive HTTP (bench/e2e_jobs_client.py, CONNS connections)
#    and waits (watch) until all N are Complete: jobs/s, p50/p99 latency, RSS.
# 2. batchd, scheduler: a second server with --no-local-node, SIM_NODES
#    simulated Nodes and SIM_PODS pods (sim-duration 1h): pods bound/s.
# 3. Slurm: bench/slurm/run.sh N (N x `sbatch --wrap true`, and a N-task array),
#    then the ratio batchd/Slurm.  SKIP_SLURM=1 skips it, SKIP_SIM=1 skips 2.
# Optional steps (environment switches, off by default), each on a fresh server:
# KUBECTL_CREATE=1: 1b. the same N Jobs written as one multi-document YAML file
#    and created by one `kubectl create -f FILE` (KUBECTL, default `kubectl`
#    on PATH, v1.32; discovery cached by a warm-up call first): kubectl start →
#    all Complete, jobs/s, and kubectl's own wall, CPU (user+sys) and peak RSS —
#    its per-object cost is the floor of what a user's `kubectl create` sees.
# KUEUE=1: 1c. N Jobs through Kueue: a ResourceFlavor, a ClusterQueue `bench`
#    with cpu nominalQuota KUEUE_QUOTA (default 8) x 100m, a LocalQueue `lq`,
#    and N Jobs labelled kueue.x-k8s.io/queue-name=lq whose pod requests
#    100m cpu: at most KUEUE_QUOTA admitted (and running) at once, the rest
#    queued suspended. jobs/s, p50/p99 submit→Complete, most admitted at once.
#    Step 3 then also runs Slurm limited to KUEUE_QUOTA jobs running at once
#    (bench/slurm/limited.py: N x `sbatch -L quota:K` against the anchor's
#    Licenses=quota:8, K = 8/KUEUE_QUOTA, so KUEUE_QUOTA is 1, 2, 4 or 8 — or
#    SLURM_LIMIT=partition: a partition of KUEUE_QUOTA emulated nodes with
#    MaxCPUsPerNode=1; and an N-task array with %KUEUE_QUOTA), and the ratios.
# SKIP_JOBS=1 skips step 1 and Slurm's unlimited runs (e.g. only KUEUE=1).
# Large N (e.g. 10000): every wait grows with N (batchd: 280 s or 0.05 s a job,
# 0.2 s a job for the kubectl and Kueue steps; Slurm: see bench/slurm/run.sh);
# "jobs/s, first / second half" shows whether the rate holds as the store fills.
# Every step is bounded by `timeout`; servers and Slurm daemons are stopped on exit.
# PERF_OUT=DIR: `perf record -g` (PERF_CALL_GRAPH, default dwarf; PERF_FREQ, default 499)
# of the server during step 1; DIR gets perf.data and text reports by thread and by symbol.
# Exits 3 when the batchd/Slurm ratio falls below MIN_RATIO (default 10).
set -euo pipefail
BUILD_DIR=${1:?usage: $0 BUILD_DIR [N]}
N=${2:-1000}
CONNS=${CONNS:-8}
SIM_NODES=${SIM_NODES:-1000}
SIM_PODS=${SIM_PODS:-5000}
KUEUE_QUOTA=${KUEUE_QUOTA:-8}
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
KUBECTL=${KUBECTL:-kubectl}
max() { echo $(( $1 > $2 ? $1 : $2 )); }
JOBS_TIMEOUT=$(max 280 $(( N / 20 )))      # batchd steps, seconds
SLOW_TIMEOUT=$(max 280 $(( N / 5 )))       # kubectl and Kueue steps
export SLURM_JOBS_TIMEOUT=${SLURM_JOBS_TIMEOUT:-$(max 200 $(( N / 10 )))}
export SLURM_ARRAY_TIMEOUT=${SLURM_ARRAY_TIMEOUT:-$(max 100 $(( N / 20 )))}
export SLURM_QUOTA_TIMEOUT=${SLURM_QUOTA_TIMEOUT:-$(max 200 $(( N / 5 )))}
if [[ "${KUBECTL_CREATE:-0}" == 1 ]] && ! command -v "$KUBECTL" >/dev/null; then
  echo "e2e: KUBECTL_CREATE=1 needs kubectl ($KUBECTL) on PATH" >&2; exit 2
fi
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/lib.sh"
BATCHD="$BUILD_DIR/bin/batchd"
for b in "$BATCHD" "$BUILD_DIR/bin/batchd-shim"; do
  [[ -x "$b" ]] || { echo "e2e: $b not built (cmake --build $BUILD_DIR --target batchd batchd-shim)" >&2; exit 2; }
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/batchd-e2e.XXXXXX")
chmod 711 "$WORK"  # pods run as the unprivileged pod user: their dirs must be reachable
PID=""
SLURM_UP=0
cleanup() {
  bench_stop_server
  [[ $SLURM_UP == 1 ]] && bash "$HERE/slurm/stop.sh" >/dev/null 2>&1 || true
  [[ -n "${KEEP_WORK:-}" ]] || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start_server() {  # start_server NAME [flags...] -> PID, PORT
  local name=$1; shift
  mkdir -p "$WORK/data-$name"
  bench_start_server "$BATCHD" "$WORK/server-$name.log" --data-dir "$WORK/data-$name" "$@"
  # The default namespace must exist before namespaced creates.
  for _ in $(seq 50); do
    curl -sf -o /dev/null "http://127.0.0.1:$PORT/api/v1/namespaces/default" && break
    sleep 0.1
  done
}

wait_local_node() {  # the local node must be registered (and Ready) before the clock starts
  for _ in $(seq 100); do
    [[ $(curl -s "http://127.0.0.1:$PORT/api/v1/nodes" | grep -c '"name"') -gt 0 ]] && break
    sleep 0.1
  done
}

# -------------------------------------------------------------- 1. batchd jobs
if [[ "${SKIP_JOBS:-0}" != 1 ]]; then
start_server jobs
wait_local_node
echo "e2e: batchd jobs N=$N on port $PORT ..." >&2
PERF_PID=""
if [[ -n "${PERF_OUT:-}" ]]; then
  mkdir -p "$PERF_OUT"
  perf record -q -F "${PERF_FREQ:-499}" --call-graph "${PERF_CALL_GRAPH:-dwarf}" -p "$PID" \
    -o "$PERF_OUT/perf.data" 2>"$PERF_OUT/record.log" &
  PERF_PID=$!
  sleep 0.5
fi
timeout $((JOBS_TIMEOUT + 20)) python3 "$HERE/e2e_jobs_client.py" jobs --port "$PORT" --n "$N" --conns "$CONNS" \
  --server-pid "$PID" --timeout "$JOBS_TIMEOUT" >"$WORK/jobs.out" ||
  { echo "e2e: batchd jobs run failed or timed out" >&2; cat "$WORK/jobs.out" >&2; tail -n 20 "$WORK/server-jobs.log" >&2; }
if [[ -n "$PERF_PID" ]]; then
  kill -INT "$PERF_PID" 2>/dev/null || true
  wait "$PERF_PID" 2>/dev/null || true
  perf report -i "$PERF_OUT/perf.data" --no-children --sort comm --stdio 2>/dev/null \
    | grep -v '^#' | grep -v '^$' | head -n 40 >"$PERF_OUT/by-thread.txt" || true
  perf report -i "$PERF_OUT/perf.data" --no-children --sort dso,sym --stdio -g none 2>/dev/null \
    | grep -v '^#' | grep -v '^$' | head -n 150 >"$PERF_OUT/by-symbol.txt" || true
  perf report -i "$PERF_OUT/perf.data" --children --sort sym --stdio -g none 2>/dev/null \
    | grep -v '^#' | grep -v '^$' | head -n 250 >"$PERF_OUT/children.txt" || true
fi
bench_stop_server
# Store writes per Job by kind and writer, from the stopped server's MVCC log.
python3 "$HERE/store_writes.py" "$WORK/data-jobs/state.db" --markdown \
  --after "$(grep -E '^jobs_rev0=' "$WORK/jobs.out" | cut -d= -f2 || echo 0)" >"$WORK/writes.out" 2>&1 ||
  echo "e2e: store_writes.py failed" >&2
fi

# -------------------------------------------------------------- 1b. kubectl create -f
if [[ "${KUBECTL_CREATE:-0}" == 1 ]]; then
  start_server kubectl
  wait_local_node
  echo "e2e: batchd, kubectl create -f of $N Jobs on port $PORT ..." >&2
  timeout $((SLOW_TIMEOUT + 60)) python3 "$HERE/e2e_jobs_client.py" kubectl --port "$PORT" --n "$N" \
    --kubectl "$KUBECTL" --workdir "$WORK/kubectl" --server-pid "$PID" --timeout "$SLOW_TIMEOUT" >"$WORK/kc.out" ||
    { echo "e2e: kubectl run failed or timed out" >&2; cat "$WORK/kc.out" >&2; tail -n 20 "$WORK/server-kubectl.log" >&2; }
  bench_stop_server
fi

# -------------------------------------------------------------- 1c. Kueue
if [[ "${KUEUE:-0}" == 1 ]]; then
  start_server kueue
  wait_local_node
  echo "e2e: batchd, $N Jobs through Kueue (quota $KUEUE_QUOTA at once) on port $PORT ..." >&2
  timeout $((SLOW_TIMEOUT + 60)) python3 "$HERE/e2e_jobs_client.py" kueue --port "$PORT" --n "$N" \
    --quota "$KUEUE_QUOTA" --conns "$CONNS" --server-pid "$PID" --timeout "$SLOW_TIMEOUT" >"$WORK/kq.out" ||
    { echo "e2e: Kueue run failed or timed out" >&2; cat "$WORK/kq.out" >&2; tail -n 20 "$WORK/server-kueue.log" >&2; }
  bench_stop_server
  python3 "$HERE/store_writes.py" "$WORK/data-kueue/state.db" --markdown \
    --after "$(grep -E '^kq_rev0=' "$WORK/kq.out" | cut -d= -f2 || echo 0)" >"$WORK/kq-writes.out" 2>&1 ||
    echo "e2e: store_writes.py (Kueue) failed" >&2
fi

# -------------------------------------------------------------- 2. simulated nodes
if [[ "${SKIP_SIM:-0}" != 1 ]]; then
  start_server sim --no-local-node
  echo "e2e: batchd scheduler, $SIM_NODES simulated nodes, $SIM_PODS pods on port $PORT ..." >&2
  timeout 200 python3 "$HERE/e2e_jobs_client.py" sim --port "$PORT" --nodes "$SIM_NODES" \
    --pods "$SIM_PODS" --conns "$CONNS" --server-pid "$PID" --timeout 150 >"$WORK/sim.out" ||
    { echo "e2e: sim run failed or timed out" >&2; cat "$WORK/sim.out" >&2; tail -n 20 "$WORK/server-sim.log" >&2; }
  bench_stop_server
fi

# -------------------------------------------------------------- 3. Slurm
if [[ "${SKIP_SLURM:-0}" != 1 ]]; then
  SLURM_UP=1
  echo "e2e: Slurm N=$N ..." >&2
  slurm_budget=120
  [[ "${SKIP_JOBS:-0}" != 1 ]] && slurm_budget=$((slurm_budget + 300 + SLURM_JOBS_TIMEOUT + SLURM_ARRAY_TIMEOUT))
  [[ "${KUEUE:-0}" == 1 ]] && slurm_budget=$((slurm_budget + 300 + 2 * SLURM_QUOTA_TIMEOUT))
  slurm_env=()
  [[ "${SKIP_JOBS:-0}" == 1 ]] && slurm_env+=(SLURM_PLAIN=0)
  [[ "${KUEUE:-0}" == 1 ]] && slurm_env+=(SLURM_QUOTA="$KUEUE_QUOTA")
  timeout "$slurm_budget" env "${slurm_env[@]}" bash "$HERE/slurm/run.sh" "$N" "$WORK/slurm.out" ||
    echo "e2e: Slurm run failed or timed out" >&2
fi

# -------------------------------------------------------------- report
val() { [[ -f "$WORK/$1.out" ]] && grep -E "^$2=" "$WORK/$1.out" | head -n 1 | cut -d= -f2- || true; }
ratio() { python3 -c "import sys; a,b=sys.argv[1:]; print(f'{float(a)/float(b):.1f}x' if a and b and float(b)>0 else 'n/a')" "$1" "$2" 2>/dev/null || echo n/a; }
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
os=$(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")
echo
echo "batchd end-to-end benchmark — $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs ($cpu), $os, $(uname -r)"
echo "command: bench/e2e_jobs_bench.sh $BUILD_DIR $N   (CONNS=$CONNS SIM_NODES=$SIM_NODES SIM_PODS=$SIM_PODS$(
  [[ "${SKIP_JOBS:-0}" == 1 ]] && echo " SKIP_JOBS=1")$([[ "${KUBECTL_CREATE:-0}" == 1 ]] && echo " KUBECTL_CREATE=1")$(
  [[ "${KUEUE:-0}" == 1 ]] && echo " KUEUE=1 KUEUE_QUOTA=$KUEUE_QUOTA SLURM_LIMIT=${SLURM_LIMIT:-licenses}"))"
echo "load (1/5/15-min averages): at the start $LOAD0, at the end $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| metric | value |"
echo "|---|---|"
row() { printf '| %s | %s |\n' "$1" "$2"; }
# The anchor's bench.py divides N by the time it waited even when it gave up:
# a Slurm run that timed out shows a rate it did not reach.
slurm_timed_out() {
  [[ "$(val slurm "$1_timed_out")" == 1 ]] &&
    echo " — TIMED OUT: not all completed; its jobs/s is an upper bound and the ratio a lower bound"
  true
}
if [[ -f "$WORK/jobs.out" ]]; then
row "batchd: Jobs (1 pod, \`true\`, local node), N" "$(val jobs jobs_n)"
row "batchd: submit time (s), $CONNS keep-alive conns" "$(val jobs jobs_submit_s)"
row "batchd: first submit → all Complete (s)" "$(val jobs jobs_e2e_s)"
row "**batchd: jobs/s end to end**" "**$(val jobs jobs_per_s)**"
row "batchd: submit→Complete latency p50 / p99 (ms)" "$(val jobs jobs_lat_p50_ms) / $(val jobs jobs_lat_p99_ms)"
row "batchd: jobs Failed / not finished (timed out)" "$(val jobs jobs_failed) / $(val jobs jobs_timed_out)"
row "batchd: server CPU per job (ms) / host CPU per job (ms)" "$(val jobs jobs_server_cpu_ms_per_item) / $(val jobs jobs_host_cpu_ms_per_item)"
row "batchd: CPU per job (ms): server / pods (shims+containers) / load client" "$(val jobs jobs_server_cpu_ms_per_item) / $(val jobs jobs_pods_cpu_ms_per_item) / $(val jobs jobs_client_cpu_ms_per_item)"
row "batchd: server CPU per job by thread (ms)" "$(val jobs jobs_server_threads_cpu_ms_per_item)"
row "batchd: store writes per job (revisions) / store transactions (commits) per job" "$(val jobs jobs_store_writes_per_item) / $(val jobs jobs_store_transactions_per_item)"
if [[ -f "$WORK/writes.out" ]]; then
  row "batchd: writes per job by writer (bench/store_writes.py)" \
    "$(grep -E '^writes_by_writer' "$WORK/writes.out" | sed -E 's/^writes_by_writer\[(.*)\]=/\1 /' | paste -sd, | sed 's/,/, /g')"
fi
row "batchd: server RSS peak / end (MiB)" "$(val jobs jobs_server_rss_peak_mib) / $(val jobs jobs_server_rss_end_mib)"
row "batchd: jobs/s, first / second half of the N (does the rate hold?)" "$(val jobs jobs_per_s_halves)"
row "batchd: load client RSS peak (MiB)" "$(val jobs jobs_client_rss_peak_mib)"
fi
if [[ -f "$WORK/kc.out" ]]; then
  row "kubectl: \`kubectl create -f\` of one file of N Job documents: N / not created / Failed / not finished" \
    "$(val kc kc_n) / $(val kc kc_submit_failures) / $(val kc kc_failed) / $(val kc kc_timed_out) (kubectl exit $(val kc kc_kubectl_rc))"
  row "kubectl: wall (s) / objects created per s" "$(val kc kc_kubectl_wall_s) / $(val kc kc_kubectl_creates_per_s)"
  row "kubectl: CPU user / sys (s); **CPU per object (ms)**; wall per object (ms)" \
    "$(val kc kc_kubectl_user_sys_s); **$(val kc kc_kubectl_cpu_ms_per_item)**; $(val kc kc_kubectl_wall_ms_per_item)"
  row "kubectl: peak RSS (MiB); the watching client's (MiB)" "$(val kc kc_kubectl_rss_peak_mib); $(val kc kc_client_rss_peak_mib)"
  row "**kubectl create -f: jobs/s end to end** (kubectl start → all Complete)" "**$(val kc kc_per_s)** ($(val kc kc_e2e_s) s)"
  row "kubectl create -f: created→Complete latency p50 / p99 (ms)" "$(val kc kc_lat_p50_ms) / $(val kc kc_lat_p99_ms)"
  row "kubectl create -f: jobs/s, first / second half" "$(val kc kc_per_s_halves)"
  row "kubectl create -f: CPU per job (ms): server / pods / host (kubectl included)" \
    "$(val kc kc_server_cpu_ms_per_item) / $(val kc kc_pods_cpu_ms_per_item) / $(val kc kc_host_cpu_ms_per_item)"
fi
if [[ -f "$WORK/kq.out" ]]; then
  row "Kueue: ClusterQueue quota; Jobs (1 pod, \`true\`, 100m cpu), N" "$(val kq kq_quota); $(val kq kq_n)"
  row "Kueue: submit time (s), $CONNS keep-alive conns / first submit → all Complete (s)" "$(val kq kq_submit_s) / $(val kq kq_e2e_s)"
  row "**Kueue: jobs/s end to end**" "**$(val kq kq_per_s)**"
  row "Kueue: submit→Complete latency p50 / p99 (ms)" "$(val kq kq_lat_p50_ms) / $(val kq kq_lat_p99_ms)"
  row "Kueue: jobs/s, first / second half" "$(val kq kq_per_s_halves)"
  row "Kueue: most Workloads admitted / reserving at once (sampled 2/s; quota $KUEUE_QUOTA)" "$(val kq kq_admitted_max) / $(val kq kq_reserving_max)"
  row "Kueue: jobs Failed / not finished (timed out)" "$(val kq kq_failed) / $(val kq kq_timed_out)"
  row "Kueue: CPU per job (ms): server / pods / load client; host" \
    "$(val kq kq_server_cpu_ms_per_item) / $(val kq kq_pods_cpu_ms_per_item) / $(val kq kq_client_cpu_ms_per_item); $(val kq kq_host_cpu_ms_per_item)"
  row "Kueue: store writes per job / transactions per job" "$(val kq kq_store_writes_per_item) / $(val kq kq_store_transactions_per_item)"
  if [[ -f "$WORK/kq-writes.out" ]]; then
    row "Kueue: writes per job by writer (bench/store_writes.py)" \
      "$(grep -E '^writes_by_writer' "$WORK/kq-writes.out" | sed -E 's/^writes_by_writer\[(.*)\]=/\1 /' | paste -sd, | sed 's/,/, /g')"
  fi
  row "Kueue: server RSS peak (MiB) / load client RSS peak (MiB)" "$(val kq kq_server_rss_peak_mib) / $(val kq kq_client_rss_peak_mib)"
fi
if [[ -f "$WORK/sim.out" ]]; then
  row "sim: nodes created (s)" "$(val sim sim_nodes) in $(val sim sim_node_create_s)"
  row "sim: pods submitted / submit pods/s" "$(val sim bind_n) / $(val sim bind_submit_per_s)"
  row "**sim: pods bound/s (first submit → all bound)**" "**$(val sim bind_per_s)**"
  row "sim: submit→bound latency p50 / p99 (ms)" "$(val sim bind_lat_p50_ms) / $(val sim bind_lat_p99_ms)"
  row "sim: server RSS peak (MiB)" "$(val sim bind_server_rss_peak_mib)"
fi
if [[ -f "$WORK/slurm.out" ]]; then
  row "Slurm: $(val slurm slurm_version), partition $(val slurm slurm_partition)" ""
fi
if [[ -n "$(val slurm slurm_jobs_per_s)" ]]; then
  row "**Slurm: $N × sbatch --wrap true, jobs/s end to end**" "**$(val slurm slurm_jobs_per_s)**"
  row "Slurm: same, e2e (s) / submit (s) / completed" "$(val slurm slurm_jobs_e2e_s) / $(val slurm slurm_jobs_submit_s) / $(val slurm slurm_jobs_completed)$(slurm_timed_out slurm_jobs)"
  row "Slurm: $N-task array, jobs/s end to end (e2e s, completed)" "$(val slurm slurm_array_per_s) ($(val slurm slurm_array_e2e_s) s, $(val slurm slurm_array_completed)$(slurm_timed_out slurm_array))"
  row "**ratio batchd / Slurm (separate jobs)**" "**$(ratio "$(val jobs jobs_per_s)" "$(val slurm slurm_jobs_per_s)")**"
  row "ratio batchd / Slurm (array)" "$(ratio "$(val jobs jobs_per_s)" "$(val slurm slurm_array_per_s)")"
fi
if [[ -n "$(val slurm slurm_q_jobs_n)" ]]; then
  row "Slurm limited: separate jobs' limit; the array's" "$(val slurm slurm_q_jobs_limit); $(val slurm slurm_q_array_limit)"
  row "**Slurm limited: $N × sbatch, at most $KUEUE_QUOTA running, jobs/s end to end**" \
    "**$(val slurm slurm_q_jobs_per_s)** ($(val slurm slurm_q_jobs_completed) done, $(val slurm slurm_q_jobs_states))"
  row "Slurm limited: same, e2e (s) / submit (s) / p50 / p99 submit→complete (ms)" \
    "$(val slurm slurm_q_jobs_e2e_s) / $(val slurm slurm_q_jobs_submit_s) / $(val slurm slurm_q_jobs_lat_p50_ms) / $(val slurm slurm_q_jobs_lat_p99_ms)"
  row "Slurm limited: same, jobs/s first / second half; most running at once (sampled 2/s)" \
    "$(val slurm slurm_q_jobs_per_s_halves); $(val slurm slurm_q_jobs_running_max)"
  row "Slurm limited: same, host CPU per job (ms) / slurmctld CPU per job (ms)" \
    "$(val slurm slurm_q_jobs_host_cpu_ms_per_job) / $(val slurm slurm_q_jobs_ctld_cpu_ms_per_job)"
  row "Slurm limited: $N-task array %$KUEUE_QUOTA, jobs/s end to end" \
    "$(val slurm slurm_q_array_per_s) ($(val slurm slurm_q_array_completed) done, $(val slurm slurm_q_array_states))"
  row "Slurm limited: array, e2e (s) / p50 / p99 submit→complete (ms) / most running" \
    "$(val slurm slurm_q_array_e2e_s) / $(val slurm slurm_q_array_lat_p50_ms) / $(val slurm slurm_q_array_lat_p99_ms) / $(val slurm slurm_q_array_running_max)"
  row "**ratio batchd Kueue / Slurm limited (separate jobs)**" "**$(ratio "$(val kq kq_per_s)" "$(val slurm slurm_q_jobs_per_s)")**"
  row "ratio batchd Kueue / Slurm limited (array)" "$(ratio "$(val kq kq_per_s)" "$(val slurm slurm_q_array_per_s)")"
fi

if [[ -f "$WORK/writes.out" ]]; then
  echo
  echo "Store writes per Job (bench/store_writes.py, writes after the first submit):"
  echo
  sed -n '/^| object/,$p' "$WORK/writes.out"
fi
if [[ -f "$WORK/kq-writes.out" ]]; then
  echo
  echo "Store writes per Job through Kueue (bench/store_writes.py, writes after the first submit):"
  echo
  sed -n '/^| object/,$p' "$WORK/kq-writes.out"
fi

# The floor (#16): batchd must stay at least MIN_RATIO (default 10) times
# Slurm's separate-job throughput on the same machine in the same run. Below
# it the benchmark fails loudly (exit 3) so a regression cannot pass quietly.
if [[ -f "$WORK/jobs.out" && -n "$(val slurm slurm_jobs_per_s)" ]]; then
  MIN_RATIO=${MIN_RATIO:-10}
  if ! python3 -c "import sys; a,b,m=map(float,sys.argv[1:]); sys.exit(0 if b > 0 and a / b >= m else 1)" \
      "$(val jobs jobs_per_s)" "$(val slurm slurm_jobs_per_s)" "$MIN_RATIO" 2>/dev/null; then
    echo "e2e: REGRESSION: batchd/Slurm ratio $(ratio "$(val jobs jobs_per_s)" "$(val slurm slurm_jobs_per_s)") is below the ${MIN_RATIO}x floor" >&2
    exit 3
  fi
fi
