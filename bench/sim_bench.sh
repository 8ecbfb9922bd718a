#!/usr/bin/env bash
# `batchd simulate` wall time, CPU time and peak RSS on generated scenarios
# (bench/gen-scenario), one run each: docs/benchmarks.md "Simulator".
#   bench/sim_bench.sh BUILD_DIR [CASE...]
# Cases: baseline tas large-scale syn-N-J (synthetic: N nodes, J jobs over a day).
# SCENARIOS=DIR keeps the generated scenarios there and reuses them (a
# 100,000-job one takes a minute to write); NICE=N runs under `nice -n N`;
# OUT=DIR keeps each case's summary there as CASE.json (to compare builds).
set -euo pipefail
build=${1:?usage: sim_bench.sh BUILD_DIR [CASE...]}; shift
cases=("$@")
[[ ${#cases[@]} -gt 0 ]] || cases=(baseline syn-10000-10000 syn-10000-30000 syn-10000-100000)
dir=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sim-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
scen=${SCENARIOS:-$tmp}
mkdir -p "$scen"
for c in "${cases[@]}"; do
  if [[ ! -s "$scen/$c.yaml" ]]; then
    case $c in
      syn-*) IFS=- read -r _ nodes jobs <<<"$c"
             "$dir/gen-scenario" --shape synthetic --nodes "$nodes" --jobs "$jobs" --span 24h \
               -o "$scen/$c.yaml.tmp" ;;
      *) "$dir/gen-scenario" --shape "$c" -o "$scen/$c.yaml.tmp" ;;
    esac
    mv "$scen/$c.yaml.tmp" "$scen/$c.yaml"
  fi
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" nice -n "${NICE:-0}" "$build/bin/batchd" \
    simulate -f "$scen/$c.yaml" --until 48h --summary "$tmp/$c.json" -q || true
  load_after=$(cut -d' ' -f1-3 /proc/loadavg)
  if [[ -n ${OUT:-} ]]; then mkdir -p "$OUT" && cp "$tmp/$c.json" "$OUT/$c.json"; fi
  read -r wall user sys rss <"$tmp/time"
  python3 - "$tmp/$c.json" "$c" "$wall" "$user" "$sys" "$rss" "$load" "$load_after" <<'PY'
import json, sys
f, case, wall, user, sys_, rss, load, load_after = sys.argv[1:9]
d = json.load(open(f))
w = d["workloads"]
print(f"case={case} wall_s={wall} user_s={user} sys_s={sys_} peak_rss_mib={int(rss)//1024} "
      f"load_before='{load}' load_after='{load_after}' workloads={w['created']} admitted={w['admitted']} "
      f"preempted={w['preempted']} finished={w['finished']} pending={w['pendingAtEnd']} "
      f"virtual_s={d['endSeconds']} makespan_s={d['makespanSeconds']} "
      f"steps={d['engine']['steps']} reconciles={d['engine']['reconciles']} "
      f"wait_p50={w['waitSeconds'].get('p50')} wait_p90={w['waitSeconds'].get('p90')} "
      f"store_commits={d['engine'].get('storeCommits')} "
      f"by_controller={json.dumps(d['engine'].get('reconcilesByController', {}), separators=(',', ':'))}",
      flush=True)
PY
done
