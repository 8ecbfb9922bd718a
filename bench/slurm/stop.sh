#!/usr/bin/env bash
# Stops the Slurm daemons bench/slurm/run.sh started (the anchor's stop.sh:
# cancels leftover jobs, then slurmd, slurmctld and munged by their PID files).
set -uo pipefail
ANCHOR=${SLURM_ANCHOR:-/work/shared/anchors/slurm}
exec bash "$ANCHOR/stop.sh"
