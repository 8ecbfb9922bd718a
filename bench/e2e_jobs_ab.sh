#!/usr/bin/env bash
# Side by side: bench/e2e_jobs_bench.sh for two builds, alternating, so both
# see the same machine load (CPU per job, writes and commits per job).
#   bench/e2e_jobs_ab.sh BEFORE_BUILD_DIR AFTER_BUILD_DIR [N=500] [ROUNDS=2] [OUT_DIR]
# Each run's report goes to OUT_DIR/{before,after}-ROUND.md; the load average
# before and after each run to OUT_DIR/log. Slurm and the simulated-node part
# are skipped (SKIP_SLURM=1 SKIP_SIM=1) unless set otherwise. Extra
# environment for the after build only: AFTER_ENV="VAR=value ...".
set -euo pipefail
BEFORE=${1:?usage: $0 BEFORE_BUILD_DIR AFTER_BUILD_DIR [N] [ROUNDS] [OUT_DIR]}
AFTER=${2:?usage: $0 BEFORE_BUILD_DIR AFTER_BUILD_DIR [N] [ROUNDS] [OUT_DIR]}
N=${3:-500}
ROUNDS=${4:-2}
OUT=${5:-$(mktemp -d "${TMPDIR:-/tmp}/batchd-ab.XXXXXX")}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$OUT"
export SKIP_SLURM=${SKIP_SLURM:-1} SKIP_SIM=${SKIP_SIM:-1}
for r in $(seq "$ROUNDS"); do
  for v in before after; do
    dir=$BEFORE
    envs=()
    if [[ $v == after ]]; then
      dir=$AFTER
      read -r -a envs <<<"${AFTER_ENV:-}"
    fi
    echo "round $r $v: load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/log"
    env "${envs[@]}" "$HERE/e2e_jobs_bench.sh" "$dir" "$N" >"$OUT/$v-$r.md" 2>>"$OUT/log" || true
    echo "  end load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/log"
  done
done
for f in "$OUT"/*-*.md; do
  printf '%s: %s\n' "$(basename "$f" .md)" \
    "$(grep -E 'jobs/s end|CPU per job \(ms\):|CPU per job by thread|revisions' "$f" | sed -E 's/^\| [^|]* \| ([^|]*) \|$/\1/' | paste -sd'|')"
done
echo "reports: $OUT"
