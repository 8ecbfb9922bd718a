// metav1.LabelSelector validation, matching and formatting, and the time
// helpers declared in util.h: thin adapters over the shared implementations
// in api/labels and api/meta, so batch/v1 has no private copy of either.
#include "absl/strings/string_view.h"
#include "api/batch/v1/internal/util.h"
#include "api/json_access.h"
#include "api/labels/selector.h"
#include "api/meta/time_util.h"

namespace batchd::api::batch_v1::internal {

ErrorList ValidateLabelSelector(const Json& selector, const Path& p) {
  return labels::ValidateLabelSelector(selector, p);
}

bool SelectorConvertible(const Json& selector) {
  return labels::LabelSelector::FromJson(selector).ok();
}

bool SelectorMatches(const Json& selector, const Json& labels_object) {
  auto sel = labels::LabelSelector::FromJson(selector);
  if (!sel.ok()) return false;
  return sel->Matches(labels_object.is_object() ? labels_object : api::EmptyObject());  // No copy.
}

std::string FormatLabelSelector(const Json& selector) {
  auto sel = labels::LabelSelector::FromJson(selector);
  if (!sel.ok()) return "<error>";
  if (sel->IsNothing() || sel->Empty()) return "<none>";
  return sel->String();
}

std::optional<absl::Time> ParseRfc3339(absl::string_view s) {
  auto t = meta::ParseRfc3339(std::string_view(s.data(), s.size()));
  if (!t.ok()) return std::nullopt;
  return *t;
}

std::string HumanDuration(absl::Duration d) { return meta::HumanDuration(d); }

std::string TimestampSince(const Json* ts, absl::Time now) {
  if (ts == nullptr || !ts->is_string()) return "<unknown>";
  auto t = ParseRfc3339(ts->get<std::string>());
  if (!t.has_value()) return "<unknown>";
  return HumanDuration(now - *t);
}

}  // namespace batchd::api::batch_v1::internal
