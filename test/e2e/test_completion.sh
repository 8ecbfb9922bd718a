# `batchctl completion bash|zsh`: the scripts load in their shells and the
# completion function completes subcommands, aliases, flags (a command's and
# the global --server), positional choices and file names after a valued flag,
# as bash (and zsh through bashcompinit) would ask for them.
source "$E2E_LIB"
BATCHCTL="${BIN_DIR:?}/batchctl"

expect_ok "$BATCHCTL" completion bash
printf '%s\n' "$OUT" >"$E2E_TMP/batchctl.bash"
expect_fail "$BATCHCTL" completion fish
expect_contains "$OUT" 'unsupported shell "fish": want bash or zsh' "fish refused"

# complete_bash WORDS...: what _batchctl offers for the last word (one line, sorted).
complete_bash() {
  bash --norc --noprofile -c '
    source "$1"; shift
    complete -p batchctl >/dev/null || { echo "not registered"; exit 1; }
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
    _batchctl
    printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' _ "$E2E_TMP/batchctl.bash" "$@"
}
expect_eq "$(complete_bash batchctl "")" \
  "completion create describe get kubeconfig list resume stop version " "top level"
expect_eq "$(complete_bash batchctl li)" "list " "prefix"
expect_eq "$(complete_bash batchctl list "")" "clusterqueues cq localqueues lq wl workloads " "list kinds"
expect_eq "$(complete_bash batchctl -s http://x list w)" "wl workloads " "after a global valued flag"
expect_eq "$(complete_bash batchctl create "")" \
  "clusterqueue cq localqueue lq node-token resourceflavor rf simulated-node simulated-nodes " "create"
got=$(complete_bash batchctl create cq x --)
expect_contains "$got" "--cohort" "create cq flags"
expect_contains "$got" "--nominal-quota" "create cq flags"
expect_contains "$got" "--server" "global flag below a subcommand"
expect_not_contains "$got" "--all-namespaces" "list's flag under create cq"
expect_eq "$(complete_bash batchctl get "")" "workload " "alias get = describe"
expect_eq "$(complete_bash batchctl completion "")" "bash zsh " "shells"
# After a flag that takes a value: file names, not subcommands.
touch "$E2E_TMP/kubeconfig-file"
expect_eq "$(complete_bash batchctl kubeconfig --data-dir "$E2E_TMP/kubeconfig-f")" \
  "$E2E_TMP/kubeconfig-file " "value of --data-dir"
# A flag without a value does not swallow the next word.
expect_eq "$(complete_bash batchctl list -A w)" "wl workloads " "after a boolean flag"

# zsh: the script loads and its function answers the same (bashcompinit).
if command -v zsh >/dev/null; then
  expect_ok "$BATCHCTL" completion zsh
  printf '%s\n' "$OUT" >"$E2E_TMP/_batchctl"
  expect_ok zsh -f -c '
    autoload -U compinit && compinit -u -d "$2/zcompdump"
    source "$1" || exit 1
    [[ ${_comps[batchctl]} == _bash_complete* ]] || { echo "not registered: ${_comps[batchctl]}"; exit 1; }
    emulate -L sh
    COMP_WORDS=(batchctl list "")
    COMP_CWORD=2
    _batchctl
    echo "${COMPREPLY[@]}"' _ "$E2E_TMP/_batchctl" "$E2E_TMP"
  expect_contains "$OUT" "clusterqueues" "zsh completes list kinds"
  expect_contains "$OUT" "workloads" "zsh completes list kinds"
fi
