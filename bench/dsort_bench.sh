#!/usr/bin/env bash
# The distributed sort example's throughput (docs/benchmarks.md,
# "Distributed sort"): bench/dsort_bench.sh BUILD_DIR [N ...]
#
# For each N (default: 10 million and 100 million 64-bit numbers), on the same
# generated numbers (seed 1):
#   jobset  the example's JobSet (examples/distributed-sort/demo.sh, WORKERS
#           pods per phase): the time from the generator's completion to the
#           reducers' (map + reduce, pod starts and Job bookkeeping included)
#   local   sort-local: the same sample / range-partition / radix sort in one
#           process, in memory (read input, write runs included)
#   gnu     GNU sort -n --parallel=$(nproc) on the same numbers as decimal text
#           (one per line, ~20 bytes each), LC_ALL=C, -S 50%, only for N up
#           to GNU_MAX_N (default 10 million: text sort of 10^8 takes minutes)
# Throughput is N x 8 bytes / seconds for all three (for GNU sort the bytes
# it reads are ~2.5x that). Each figure is the median of REPS runs (default 3).
# Prints one markdown table row per N and method.
set -euo pipefail

BUILD=$(cd "${1:?usage: $0 BUILD_DIR [N ...]}" && pwd)
shift
SIZES=("$@")
((${#SIZES[@]})) || SIZES=(10000000 100000000)
REPS=${REPS:-3}
GNU_MAX_N=${GNU_MAX_N:-10000000}
WORKERS=${WORKERS:-$(nproc)}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN="$BUILD/bin"
TMP=$(mktemp -d /tmp/dsort-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
row() {  # row N METHOD SECONDS
  awk -v n="$1" -v m="$2" -v s="$3" 'BEGIN{
    printf "| %d | %s | %.2f | %.3f | %.1f |\n", n, m, s, n*8/1e9/s, n/1e6/s }'
}

echo "| numbers | method | seconds | GB/s (8-byte numbers) | million numbers/s |"
echo "|---:|---|---:|---:|---:|"
for N in "${SIZES[@]}"; do
  # jobset: the demo's own measurement (map + reduce).
  times=()
  for _ in $(seq "$REPS"); do
    out=$(N=$N WORKERS=$WORKERS BIN_DIR="$BIN" "$HERE/../examples/distributed-sort/demo.sh" 2>&1) ||
      { echo "$out" >&2; exit 1; }
    times+=("$(sed -n 's/^demo: map + reduce took \([0-9.]*\) s.*/\1/p' <<<"$out")")
  done
  row "$N" "jobset ($WORKERS pods per phase)" "$(printf '%s\n' "${times[@]}" | median)"

  # local: one process on the same numbers.
  rm -rf "$TMP/d"
  for i in $(seq 0 $((WORKERS - 1))); do
    "$BIN/sort-gen" --dir "$TMP/d" --count "$N" --shards "$WORKERS" --index "$i" >/dev/null
  done
  times=()
  for _ in $(seq "$REPS"); do
    t0=$(now)
    "$BIN/sort-local" --dir "$TMP/d" --shards "$WORKERS" --reducers "$WORKERS" >/dev/null
    times+=("$(awk -v a="$(now)" -v b="$t0" 'BEGIN{print a - b}')")
  done
  "$BIN/sort-verify" --dir "$TMP/d" --shards "$WORKERS" --reducers "$WORKERS" >/dev/null
  row "$N" "sort-local (1 process)" "$(printf '%s\n' "${times[@]}" | median)"

  # gnu: GNU sort -n on the same numbers as text.
  if ((N <= GNU_MAX_N)); then
    for i in $(seq 0 $((WORKERS - 1))); do
      "$BIN/sort-gen" --dir "$TMP/d" --count "$N" --shards "$WORKERS" --index "$i" --format text >/dev/null
    done
    times=()
    for _ in $(seq "$REPS"); do
      t0=$(now)
      LC_ALL=C sort -n --parallel="$(nproc)" -S 50% -T "$TMP/d" -o "$TMP/d/sorted.txt" "$TMP"/d/text/*.txt
      times+=("$(awk -v a="$(now)" -v b="$t0" 'BEGIN{print a - b}')")
    done
    [[ $(wc -l <"$TMP/d/sorted.txt") == "$N" ]] || { echo "GNU sort lost lines" >&2; exit 1; }
    row "$N" "GNU sort -n (text, --parallel=$(nproc))" "$(printf '%s\n' "${times[@]}" | median)"
  fi
  rm -rf "$TMP/d"
done
