#include "cmd/feature_gates.h"

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/string_view.h"

namespace batchd::cmd {

namespace {

// Go's strconv.ParseBool.
bool ParseGoBool(absl::string_view s, bool* out) {
  static constexpr absl::string_view kTrue[] = {"1", "t", "T", "TRUE", "true", "True"};
  static constexpr absl::string_view kFalse[] = {"0", "f", "F", "FALSE", "false", "False"};
  for (absl::string_view t : kTrue) {
    if (s == t) {
      *out = true;
      return true;
    }
  }
  for (absl::string_view f : kFalse) {
    if (s == f) {
      *out = false;
      return true;
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<FeatureGates> ParseFeatureGates(std::string_view flag) {
  FeatureGates gates;
  for (absl::string_view item : absl::StrSplit(Sv(flag), ',', absl::SkipWhitespace())) {
    item = absl::StripAsciiWhitespace(item);
    std::vector<absl::string_view> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
    absl::string_view name = absl::StripAsciiWhitespace(kv[0]);
    if (kv.size() != 2) {
      return absl::InvalidArgumentError(absl::StrCat("missing bool value for ", name));
    }
    absl::string_view value = absl::StripAsciiWhitespace(kv[1]);
    bool* gate = nullptr;
    if (name == "WorkloadWithJob") gate = &gates.workload_with_job;
    if (gate == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("unrecognized feature gate: ", name));
    }
    if (!ParseGoBool(value, gate)) {
      return absl::InvalidArgumentError(absl::StrCat("invalid value of ", name, "=", value,
                                                     ", err: strconv.ParseBool: parsing \"",
                                                     value, "\": invalid syntax"));
    }
  }
  return gates;
}

}  // namespace batchd::cmd
