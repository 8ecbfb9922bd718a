#!/usr/bin/env bash
# Checks the include structure (STYLE.md practice 1) and fails on the first
# kind of violation it finds, printing every offending line:
#  1. No component includes another component's internal/ headers. A
#     component is a top-level folder under src/, or a folder under src/api/
#     (api/core/v1 and api/batch/v1 count as one each). bench/ and fuzz/ may
#     include the internals of the one component a file is named after
#     (bench/scheduler_bench.cc -> scheduler/internal/...), and no other.
#  2. No circle between components: each top-level component under src/ may
#     include only the components listed for it below (its layer and the ones
#     beneath). Tests (*_test.cc, testing/) may also include what they drive
#     (e.g. the HTTP client's test starts a real API server).
set -euo pipefail
cd "$(dirname "$0")/.."
status=0

# 1. internal/ headers.
while IFS= read -r line; do
  file=${line%%:*}
  [[ ${line#*:} =~ \#include\ \"([^\"]+)\" ]] || continue
  inc=${BASH_REMATCH[1]}  # (no sed per line: thousands of forks took 47 s)
  owner=${inc%%/internal/*}
  case "$file" in
    src/*)
      dir=${file#src/}
      case "$dir" in
        "$owner"/*) continue ;;  # Includes its own internals.
      esac ;;
    bench/* | fuzz/*)
      base=$(basename "$file" .cc)
      base=${base%_bench}; base=${base#fuzz_}
      [[ "$owner" == "$base" || "$owner" == */"$base" ]] && continue ;;
  esac
  echo "layering: $file includes $inc (internal to $owner)"
  status=1
done < <(grep -rn --include='*.h' --include='*.cc' '#include ".*/internal/' src bench fuzz || true)

# 2. The allowed dependencies of each top-level component (what it may
# include besides itself and third-party headers).
declare -A allowed=(
  [common]=""
  [api]="common"
  [store]="common api"
  [registry]="common api store"
  [auth]="common api store registry"
  [apiserver]="common api store registry auth"
  [ui]="common apiserver"
  [client]="common api store registry"
  [reconcile]="common api store registry client"
  [queueing]="common api"
  [scheduler]="common api store registry client reconcile"
  [agent]="common api store registry client reconcile apiserver auth"
  [controllers]="common api store registry client reconcile queueing"
  [cli]="common api store registry client auth"
  [sim]="common api store registry client reconcile queueing scheduler agent controllers"
  [cmd]="*"
)
while IFS= read -r line; do
  file=${line%%:*}
  [[ ${line#*:} =~ \#include\ \"([^\"]+)\" ]] || continue
  inc=${BASH_REMATCH[1]}  # (no sed per line: thousands of forks took 47 s)
  from=${file#src/}; from=${from%%/*}
  to=${inc%%/*}
  [[ "$to" == "$from" || ! -d "src/$to" ]] && continue  # Itself, or not a component.
  case "$file" in *_test.cc | */testing/*) continue ;; esac
  if [[ ! -v allowed[$from] ]]; then
    echo "layering: $file: component src/$from has no entry in scripts/check-layering.sh"
    status=1
    continue
  fi
  deps=${allowed[$from]}
  [[ "$deps" == "*" || " $deps " == *" $to "* ]] && continue
  echo "layering: $file includes $inc ($from may include only: ${deps:-nothing})"
  status=1
done < <(grep -rn --include='*.h' --include='*.cc' '^#include "' src || true)
exit $status
