#include "cli/completion.h"

#include <CLI/CLI.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace batchd::cli {
namespace {

struct Tables {
  std::map<std::string, std::vector<std::string>> subs;    // path -> subcommand words
  std::map<std::string, std::vector<std::string>> flags;   // path -> flags (own + parents')
  std::map<std::string, std::vector<std::string>> valued;  // path -> flags taking a value
  std::map<std::string, std::string> canonical;  // path (with aliases) -> path of names
};

// Words are command names and flags: [A-Za-z0-9-], nothing a shell would
// interpret; anything else is left out of the tables.
bool Plain(const std::string& w) {
  if (w.empty()) return false;
  for (char c : w) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) {
      return false;
    }
  }
  return true;
}

void Walk(const CLI::App& app, const std::string& path, const std::string& canonical,
          std::vector<std::string> inherited_flags, std::vector<std::string> inherited_valued,
          Tables& t) {
  t.canonical[path] = canonical;
  std::vector<std::string>& flags = t.flags[path];
  std::vector<std::string>& valued = t.valued[path];
  for (const CLI::Option* o : app.get_options()) {
    if (!o->nonpositional()) continue;
    std::vector<std::string> names;
    for (const std::string& s : o->get_snames()) names.push_back("-" + s);
    for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
    for (const std::string& n : names) {
      if (!Plain(n)) continue;
      flags.push_back(n);
      if (o->get_expected_max() > 0) valued.push_back(n);
    }
  }
  for (const std::string& f : inherited_flags) {
    if (std::find(flags.begin(), flags.end(), f) == flags.end()) flags.push_back(f);
  }
  for (const std::string& f : inherited_valued) {
    if (std::find(valued.begin(), valued.end(), f) == valued.end()) valued.push_back(f);
  }
  // Parents' flags apply below only when the command lets them through
  // (fallthrough); batchctl's global --server does.
  std::vector<std::string> pass_flags, pass_valued;
  if (app.get_fallthrough() || path.empty()) {
    pass_flags = flags;
    pass_valued = valued;
  }
  std::vector<std::string>& subs = t.subs[path];
  for (const CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; })) {
    const std::string& name = s->get_name();
    if (!Plain(name)) continue;
    std::vector<std::string> words = {name};
    for (const std::string& a : s->get_aliases()) {
      if (Plain(a)) words.push_back(a);
    }
    for (const std::string& w : words) {
      subs.push_back(w);
      std::string child = path.empty() ? w : absl::StrCat(path, " ", w);
      std::string child_canonical = canonical.empty() ? name : absl::StrCat(canonical, " ", name);
      std::vector<std::string> f, v;
      if (s->get_fallthrough()) {
        f = pass_flags;
        v = pass_valued;
      }
      Walk(*s, child, child_canonical, f, v, t);
    }
  }
}

std::string Quote(const std::string& s) { return absl::StrCat("'", s, "'"); }

std::string Table(const char* name, const std::map<std::string, std::vector<std::string>>& m) {
  std::string out = absl::StrCat("  declare -gA ", name, "=(\n");
  for (const auto& [k, v] : m) {
    absl::StrAppend(&out, "    [", Quote(k.empty() ? "." : k), "]=", Quote(absl::StrJoin(v, " ")),
                    "\n");
  }
  absl::StrAppend(&out, "  )\n");
  return out;
}

constexpr char kFunction[] = R"SH(
_batchctl() {
  local cur prev path word i
  cur=${COMP_WORDS[COMP_CWORD]}
  prev=""
  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD-1]}
  path="."
  # The command path: every earlier word that names a subcommand of the path
  # so far (flags and their values are skipped).
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=${COMP_WORDS[i]}
    if [[ $word == -* ]]; then
      [[ $word != *=* && " ${_batchctl_valued[$path]} " == *" $word "* ]] && ((i++))
      continue
    fi
    if [[ " ${_batchctl_subs[$path]} " == *" $word "* ]]; then
      if [[ $path == . ]]; then path=$word; else path="$path $word"; fi
    fi
  done
  if [[ $prev == -* && $prev != *=* && " ${_batchctl_valued[$path]} " == *" $prev "* ]]; then
    COMPREPLY=($(compgen -f -- "$cur"))
    return 0
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "${_batchctl_flags[$path]}" -- "$cur"))
    return 0
  fi
  COMPREPLY=($(compgen -W "${_batchctl_subs[$path]} ${_batchctl_choices[$path]}" -- "$cur"))
  return 0
}
)SH";

}  // namespace

absl::StatusOr<std::string> CompletionScript(const CLI::App& app, const std::string& shell,
                                             const CompletionChoices& choices) {
  if (shell != "bash" && shell != "zsh") {
    return absl::InvalidArgumentError(
        absl::StrCat("unsupported shell \"", shell, "\": want bash or zsh"));
  }
  Tables t;
  Walk(app, "", "", {}, {}, t);
  std::map<std::string, std::vector<std::string>> plain_choices;
  for (const auto& [path, canonical] : t.canonical) {
    auto it = choices.find(canonical);
    if (it == choices.end()) continue;
    for (const std::string& w : it->second) {
      if (Plain(w)) plain_choices[path].push_back(w);
    }
  }
  std::string out;
  if (shell == "zsh") {
    absl::StrAppend(&out,
                    "#compdef batchctl\n"
                    "# zsh completion for batchctl (bash's function through bashcompinit).\n"
                    "# Load: source <(batchctl completion zsh), or save as _batchctl in a\n"
                    "# directory of $fpath.\n"
                    "autoload -U +X compinit && { (( $+functions[compdef] )) || compinit; }\n"
                    "autoload -U +X bashcompinit && bashcompinit\n");
  } else {
    absl::StrAppend(&out,
                    "# bash completion for batchctl.\n"
                    "# Load: source <(batchctl completion bash), or save as\n"
                    "# /usr/share/bash-completion/completions/batchctl.\n");
  }
  absl::StrAppend(&out, "_batchctl_tables() {\n", Table("_batchctl_subs", t.subs),
                  Table("_batchctl_flags", t.flags), Table("_batchctl_valued", t.valued),
                  Table("_batchctl_choices", plain_choices), "}\n_batchctl_tables\n", kFunction,
                  "complete -o default -F _batchctl batchctl\n");
  return out;
}

}  // namespace batchd::cli
