// Shell completion for batchctl: `batchctl completion bash|zsh` prints a
// script generated from the CLI11 command tree (subcommands and their
// aliases, flags, which flags take a value, and the choices of positional
// arguments), so completion follows the commands as they change.
//
// The script defines `_batchctl` (bash's programmable completion; zsh loads it
// through bashcompinit) and registers it for `batchctl`. It completes:
//   - subcommand names (and aliases) at each level,
//   - the flags of the current command and of its parents after a `-`,
//   - the `choices` given for a command's positional arguments,
//   - file names after a flag that takes a value.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace CLI {
class App;
}  // namespace CLI

namespace batchd::cli {

// Positional choices per command path ("list", "create clusterqueue").
using CompletionChoices = std::map<std::string, std::vector<std::string>>;

// The completion script for `shell` ("bash" or "zsh"); InvalidArgument for
// another shell.
absl::StatusOr<std::string> CompletionScript(const CLI::App& app, const std::string& shell,
                                             const CompletionChoices& choices = {});

}  // namespace batchd::cli
