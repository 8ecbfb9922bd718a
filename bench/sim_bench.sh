#!/usr/bin/env bash
# `batchd simulate` wall time, CPU time and peak RSS on generated scenarios
# (bench/gen-scenario), one run each: docs/benchmarks.md "Simulator".
#   bench/sim_bench.sh BUILD_DIR [CASE...]
# Cases: baseline tas large-scale syn-N-J (synthetic: N nodes, J jobs over a day).
set -euo pipefail
build=${1:?usage: sim_bench.sh BUILD_DIR [CASE...]}; shift
cases=("$@")
[[ ${#cases[@]} -gt 0 ]] || cases=(baseline syn-10000-10000 syn-10000-30000 syn-10000-100000)
dir=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sim-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for c in "${cases[@]}"; do
  case $c in
    syn-*) IFS=- read -r _ nodes jobs <<<"$c"
           "$dir/gen-scenario" --shape synthetic --nodes "$nodes" --jobs "$jobs" --span 24h \
             -o "$tmp/$c.yaml" ;;
    *) "$dir/gen-scenario" --shape "$c" -o "$tmp/$c.yaml" ;;
  esac
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$build/bin/batchd" simulate -f "$tmp/$c.yaml" \
    --until 48h --summary "$tmp/$c.json" -q || true
  read -r wall user sys rss <"$tmp/time"
  python3 - "$tmp/$c.json" "$c" "$wall" "$user" "$sys" "$rss" "$load" <<'PY'
import json, sys
f, case, wall, user, sys_, rss, load = sys.argv[1:8]
d = json.load(open(f))
w = d["workloads"]
print(f"case={case} wall_s={wall} user_s={user} sys_s={sys_} peak_rss_mib={int(rss)//1024} "
      f"load_before='{load}' workloads={w['created']} admitted={w['admitted']} "
      f"preempted={w['preempted']} finished={w['finished']} pending={w['pendingAtEnd']} "
      f"virtual_s={d['endSeconds']} makespan_s={d['makespanSeconds']} "
      f"steps={d['engine']['steps']} reconciles={d['engine']['reconciles']} "
      f"wait_p50={w['waitSeconds'].get('p50')} wait_p90={w['waitSeconds'].get('p90')}", flush=True)
PY
done
