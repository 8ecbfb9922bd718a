#!/usr/bin/env bash
# The Slurm side of bench/e2e_jobs_bench.sh, on this machine (as root):
#   bench/slurm/run.sh N [OUT]
# Brings up the single-host Slurm cluster with the shared anchor's setup.sh
# (SLURM_ANCHOR, default ../shared/anchors/slurm beside the repository: Debian slurm-wlm 22.05,
# slurmctld + the real node + NFAKE=32 emulated nodes, tuned scheduler), then
# runs the anchor's bench.py twice: N separate `sbatch --wrap true` and one
# N-task job array, each timed from the first submit until slurmctld has
# logged N completions (jobcomp log; cheaper than polling sacct/squeue).
# Writes key=value lines to OUT (default stdout).  Does not stop Slurm: run
# bench/slurm/stop.sh (e2e_jobs_bench.sh does so on exit).
# SLURM_QUOTA=Q: then also the limited runs of bench/slurm/limited.py (the
# counterpart of e2e_jobs_bench.sh's KUEUE=1 step): N separate jobs under a
# limit of Q running at once (SLURM_LIMIT=licenses, the default, or
# partition; see limited.py) and an N-task array throttled to Q (%Q).
# SLURM_PLAIN=0 skips the unlimited runs. Each run's timeout grows with N
# (SLURM_JOBS_TIMEOUT, SLURM_ARRAY_TIMEOUT, SLURM_QUOTA_TIMEOUT, seconds:
# default 200, 100, 200 or 0.1, 0.05, 0.2 s per job, whichever is more).
set -euo pipefail
N=${1:-1000}
OUT=${2:-/dev/stdout}
JOBS_TIMEOUT=${SLURM_JOBS_TIMEOUT:-$(( N / 10 > 200 ? N / 10 : 200 ))}
ARRAY_TIMEOUT=${SLURM_ARRAY_TIMEOUT:-$(( N / 20 > 100 ? N / 20 : 100 ))}
QUOTA_TIMEOUT=${SLURM_QUOTA_TIMEOUT:-$(( N / 5 > 200 ? N / 5 : 200 ))}
# The anchor lies beside the repository (../shared/anchors/slurm); from a git
# worktree, beside the main checkout that owns it.
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
ANCHOR=${SLURM_ANCHOR:-$REPO/../shared/anchors/slurm}
if [[ -z "${SLURM_ANCHOR:-}" && ! -d "$ANCHOR" ]]; then
  common=$(git -C "$REPO" rev-parse --path-format=absolute --git-common-dir 2>/dev/null || true)
  [[ -n "$common" ]] && ANCHOR=$(dirname "$common")/../shared/anchors/slurm
fi
PARTITION=${SLURM_PARTITION:-fake}
[[ -f "$ANCHOR/setup.sh" ]] || {
  echo "slurm: the Slurm recipe $ANCHOR/setup.sh is not there: it lies in ../shared/anchors/slurm" \
    "beside the repository (or beside the main checkout of a git worktree); set SLURM_ANCHOR=DIR" >&2
  exit 2
}
[[ $(id -u) == 0 ]] || { echo "slurm: must run as root" >&2; exit 2; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/slurm-e2e.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
NFAKE=${NFAKE:-32} SCHED=${SCHED:-tuned} bash "$ANCHOR/setup.sh" >"$TMP/setup.log" 2>&1 ||
  { cat "$TMP/setup.log" >&2; exit 1; }
sleep 2
cd "$TMP"  # sbatch's working directory (job output goes to /dev/null)
touch "$TMP/runs.jsonl"
if [[ "${SLURM_PLAIN:-1}" == 1 ]]; then
  python3 "$ANCHOR/bench/bench.py" jobs "$N" --partition "$PARTITION" --timeout "$JOBS_TIMEOUT" --out "$TMP/runs.jsonl" >/dev/null
  if [[ "${SLURM_ARRAY:-1}" == 1 ]]; then
    python3 "$ANCHOR/bench/bench.py" array "$N" --partition "$PARTITION" --timeout "$ARRAY_TIMEOUT" --out "$TMP/runs.jsonl" >/dev/null
  fi
fi
if [[ -n "${SLURM_QUOTA:-}" ]]; then
  python3 "$HERE/limited.py" jobs "$N" --quota "$SLURM_QUOTA" --limit "${SLURM_LIMIT:-licenses}" \
    --partition "$PARTITION" --timeout "$QUOTA_TIMEOUT" >"$TMP/limited.out" ||
    echo "slurm: limited run (separate jobs) failed or timed out" >&2
  python3 "$HERE/limited.py" array "$N" --quota "$SLURM_QUOTA" \
    --partition "$PARTITION" --timeout "$QUOTA_TIMEOUT" >>"$TMP/limited.out" ||
    echo "slurm: limited run (array) failed or timed out" >&2
fi
python3 - "$TMP/runs.jsonl" "$PARTITION" "$(slurmctld -V)" "$(sinfo -h -p "$PARTITION" -o %D)" >"$OUT" <<'PY'
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip().startswith("{")]
print(f"slurm_version={sys.argv[3]}")
print(f"slurm_partition={sys.argv[2]} ({sys.argv[4]} nodes)")
for r in runs:
    k = "slurm_jobs" if r["bench"] == "jobs" else "slurm_array"
    print(f"{k}_n={r['n']}")
    print(f"{k}_completed={r['completed']}")
    print(f"{k}_timed_out={int(r['timed_out'])}")
    print(f"{k}_submit_s={r['submit_s']}")
    print(f"{k}_e2e_s={r['e2e_s']}")
    print(f"{k}_per_s={r['e2e_jobs_per_s']}")
    print(f"{k}_host_cpu_ms_per_job={r['host_cpu_ms_per_job']}")
    print(f"{k}_ctld_rss_mb_peak={r['ctld_rss_mb_peak']}")
PY
[[ -f "$TMP/limited.out" ]] && cat "$TMP/limited.out" >>"$OUT"
exit 0
