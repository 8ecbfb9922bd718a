#!/usr/bin/env bash
# The scenario tests ctest runs (test/scenarios/CMakeLists.txt):
#   run.sh golden BATCHD NAME       NAME.yaml: its events (and summary) must
#                                   equal NAME.events (NAME.summary.json);
#                                   "# sim-flags:" adds flags, "# sim-expect-exit:"
#                                   and "# sim-expect-error:" lines check the
#                                   exit code and stderr.
#   run.sh determinism BATCHD NAME  two runs, byte-identical events, state, summary.
#   run.sh sacct BATCHD FILE        tools/sacct-to-trace FILE must give trace.csv.
#   run.sh allocator BATCHD FILE    jemalloc's options: huge pages for simulate only.
#   run.sh bad BATCHD FILE          bad/FILE (a scenario, or a trace run against
#                                   queueing.yaml) exits 2 with the "# expect:"
#                                   message and writes no output file.
# UPDATE_GOLDEN=1 rewrites the golden files instead of comparing.
set -euo pipefail
mode=$1 batchd=$2 name=$3
dir=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/batchd-scenario.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$dir"
fail() { echo "FAIL $mode $name: $*" >&2; exit 1; }
flags() { sed -n 's/^# sim-flags: //p' "$1"; }

case $mode in
golden)
  f=$name.yaml
  want=$(sed -n 's/^# sim-expect-exit: //p' "$f"); want=${want:-0}
  rc=0
  # shellcheck disable=SC2046
  # No --state: finished work is dropped as the run goes (SimOptions::
  # drop_finished), so the goldens (written with every object kept) also
  # check that dropping changes no event; the determinism runs keep them.
  "$batchd" simulate -f "$f" $(flags "$f") --events "$tmp/events" --summary "$tmp/summary" \
    -q 2>"$tmp/stderr" || rc=$?
  [[ $rc == "$want" ]] || { cat "$tmp/stderr" >&2; fail "exit code $rc, want $want"; }
  while IFS= read -r e; do
    grep -qF -- "$e" "$tmp/stderr" || { cat "$tmp/stderr" >&2; fail "stderr lacks: $e"; }
  done < <(sed -n 's/^# sim-expect-error: //p' "$f")
  if [[ "${UPDATE_GOLDEN:-}" == 1 ]]; then
    cp "$tmp/events" "$name.events"
    [[ $rc == 0 ]] && cp "$tmp/summary" "$name.summary.json"
    echo "updated $name"
    exit 0
  fi
  diff -u "$name.events" "$tmp/events" || fail "events differ from $name.events"
  if [[ -f "$name.summary.json" ]]; then
    # "engine" (steps, reconciles) and the Kubernetes Event counts change with
    # any controller's implementation; the rest is behaviour.
    strip() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d.pop("engine",None); d.pop("k8sEvents",None); print(json.dumps(d,indent=1,sort_keys=True))' "$1"; }
    diff -u <(strip "$name.summary.json") <(strip "$tmp/summary") ||
      fail "summary differs from $name.summary.json"
  fi
  ;;
determinism)
  f=$name.yaml
  for i in 1 2; do
    # shellcheck disable=SC2046
    "$batchd" simulate -f "$f" $(flags "$f") --seed 7 --events "$tmp/events$i" \
      --summary "$tmp/summary$i" --state "$tmp/state$i" -q 2>/dev/null
  done
  for o in events summary state; do
    cmp "$tmp/${o}1" "$tmp/${o}2" || fail "$o differs between two runs"
  done
  [[ -s "$tmp/events1" && -s "$tmp/state1" ]] || fail "empty output"
  ;;
bad)
  f=bad/$name
  want=$(sed -n 's/^# expect: //p' "$f")
  [[ -n "$want" ]] || fail "no '# expect:' line"
  if [[ $f == *.csv || $f == *.jsonl ]]; then
    args=(-f queueing.yaml --trace "$f")
  else
    args=(-f "$f")
  fi
  rc=0
  "$batchd" simulate "${args[@]}" --events "$tmp/events" --summary "$tmp/summary" \
    --state "$tmp/state" --plot "$tmp/plot.svg" 2>"$tmp/stderr" || rc=$?
  [[ $rc == 2 ]] || { cat "$tmp/stderr" >&2; fail "exit code $rc, want 2"; }
  grep -qF -- "$want" "$tmp/stderr" || { cat "$tmp/stderr" >&2; fail "stderr lacks: $want"; }
  for o in events events.tmp summary state plot.svg; do
    [[ ! -e "$tmp/$o" ]] || fail "$o was written"
  done
  ;;
sacct)
  # tools/sacct-to-trace on Slurm's sacct --parsable2 output: must give trace.csv.
  python3 ../../tools/sacct-to-trace "$name" >"$tmp/trace.csv" 2>"$tmp/stderr"
  diff -u trace.csv "$tmp/trace.csv" || fail "converted trace differs from trace.csv"
  grep -qF "skipped 1 jobs that never started" "$tmp/stderr" || fail "no skipped-job note"
  ;;
allocator)
  # jemalloc's options per subcommand (src/cmd/jemalloc_conf.cc): huge pages
  # for `simulate` only. jemalloc prints its options at exit with
  # stats_print; without jemalloc there is nothing to check (skipped, 77).
  MALLOC_CONF=stats_print:true "$batchd" --version >/dev/null 2>"$tmp/version" || fail "--version"
  grep -q 'opt\.thp' "$tmp/version" || { echo "batchd is not linked with jemalloc"; exit 77; }
  MALLOC_CONF=stats_print:true "$batchd" simulate -f "$name" -q 2>"$tmp/simulate" >/dev/null ||
    fail "simulate"
  grep -q 'opt\.thp: "always"' "$tmp/simulate" || fail "simulate: thp is not always"
  grep -q 'opt\.metadata_thp: "always"' "$tmp/simulate" || fail "simulate: metadata_thp"
  grep -q 'opt\.narenas: 2$' "$tmp/simulate" || fail "simulate: the server's options are lost"
  grep -q 'opt\.thp: "default"' "$tmp/version" || fail "other subcommands: thp is not default"
  # MALLOC_CONF still overrides.
  MALLOC_CONF=stats_print:true,thp:never "$batchd" simulate -f "$name" -q 2>"$tmp/never" \
    >/dev/null || fail "simulate with thp:never"
  grep -q 'opt\.thp: "never"' "$tmp/never" || fail "MALLOC_CONF does not override"
  ;;
*) fail "unknown mode" ;;
esac
echo "ok $mode $name"
