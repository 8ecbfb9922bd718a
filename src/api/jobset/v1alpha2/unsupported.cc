// ValidateUnsupported: the one place where JobSet fields and values that
// batchd accepts in its schema but does not implement yet are refused
// (Forbidden with the field path), so none is silently ignored. Lifting a
// refusal = deleting its function from `kRefusals` once the controller
// honours the field.
#include <string>

#include "absl/strings/str_cat.h"
#include "api/jobset/v1alpha2/jobset_v1alpha2.h"
#include "api/json_access.h"

namespace batchd::api::jobset_v1alpha2 {
namespace {

constexpr char kNotYet[] = " is not supported by batchd yet";

// Failure policy actions RestartJob / RestartJobAndIgnoreMaxRestarts
// (upstream's alpha RestartJob gate).
void RefuseRestartJobActions(const Json& js, ErrorList& errs) {
  const Json& rules = MemberAt(js, {"spec", "failurePolicy", "rules"});
  if (!rules.is_array()) return;
  for (size_t i = 0; i < rules.size(); ++i) {
    std::string_view action = StringMember(rules[i], "action");
    if (action != kRestartJob && action != kRestartJobAndIgnoreMaxRestarts) continue;
    errs.push_back(Forbidden(
        Path("spec").Child("failurePolicy").Child("rules").Index(i).Child("action"),
        "the RestartJob and RestartJobAndIgnoreMaxRestarts failure policy actions are not "
        "supported by batchd yet"));
  }
}

using Refusal = void (*)(const Json& js, ErrorList& errs);
constexpr Refusal kRefusals[] = {RefuseRestartJobActions};

}  // namespace

ErrorList ValidateUnsupported(const Json& js) {
  ErrorList errs;
  for (Refusal refuse : kRefusals) refuse(js, errs);
  return errs;
}

}  // namespace batchd::api::jobset_v1alpha2
