#!/usr/bin/env bash
# Fails when a component includes another component's internal/ headers
# (STYLE.md practice 1). A component is a top-level folder under src/, or a
# folder under src/api/ (api/core/v1 and api/batch/v1 count as one each).
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
while IFS= read -r line; do
  file=${line%%:*}
  inc=$(sed -E 's/.*#include "([^"]+)".*/\1/' <<<"${line#*:}")
  owner=${inc%%/internal/*}
  dir=${file#src/}
  case "$dir" in
    "$owner"/*) ;;  # Includes its own internals.
    *) echo "layering: $file includes $inc (internal to $owner)"; status=1 ;;
  esac
done < <(grep -rn --include='*.h' --include='*.cc' '#include ".*/internal/' src || true)
exit $status
