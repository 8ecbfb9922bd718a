#!/usr/bin/env bash
# Stops the Slurm daemons bench/slurm/run.sh started (the anchor's stop.sh:
# cancels leftover jobs, then slurmd, slurmctld and munged by their PID files).
set -uo pipefail
# The anchor lies beside the repository (../shared/anchors/slurm); from a git
# worktree, beside the main checkout that owns it.
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ANCHOR=${SLURM_ANCHOR:-$REPO/../shared/anchors/slurm}
if [[ -z "${SLURM_ANCHOR:-}" && ! -d "$ANCHOR" ]]; then
  common=$(git -C "$REPO" rev-parse --path-format=absolute --git-common-dir 2>/dev/null || true)
  [[ -n "$common" ]] && ANCHOR=$(dirname "$common")/../shared/anchors/slurm
fi
[[ -f "$ANCHOR/stop.sh" ]] || {
  echo "slurm: the Slurm recipe $ANCHOR/stop.sh is not there: it lies in ../shared/anchors/slurm" \
    "beside the repository (or beside the main checkout of a git worktree); set SLURM_ANCHOR=DIR" >&2
  exit 2
}
exec bash "$ANCHOR/stop.sh"
