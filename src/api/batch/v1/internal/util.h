// Internal to api/batch/v1: name/format checks (delegating to
// api/validation), struct-form label selector matching/formatting and time
// formatting used by the Job and CronJob hooks. The selector and time helpers
// are private stand-ins for api/labels and api/meta, which did not exist
// when this was written. Not a public API. Stateless and thread-safe.
#pragma once

#include "absl/strings/string_view.h"
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "api/field_error.h"

namespace batchd::api::batch_v1::internal {

// apimachinery's IsDNS1123Subdomain / IsDNS1123Label / IsQualifiedName /
// IsValidLabelValue: the list of problems, empty when valid.
std::vector<std::string> IsDNS1123Subdomain(absl::string_view v);
std::vector<std::string> IsDNS1123Label(absl::string_view v);
std::vector<std::string> IsQualifiedName(absl::string_view v);
std::vector<std::string> IsValidLabelValue(absl::string_view v);
// IsDomainPrefixedPath ("acme.io/foo").
ErrorList ValidateDomainPrefixedPath(const Path& p, absl::string_view v);

// ValidateNonnegativeField / ValidateImmutableField.
ErrorList NonNegative(const Json& value, const Path& p);
ErrorList Immutable(const Json& now, const Json& old, const Path& p);

// metav1 LabelSelector (struct form) helpers. `selector` may be null (JSON
// null or missing), which selects nothing.
// ValidateLabelSelector: keys, values and operators.
ErrorList ValidateLabelSelector(const Json& selector, const Path& p);
// LabelSelectorAsSelector succeeds (null converts to "nothing").
bool SelectorConvertible(const Json& selector);
// True when `labels` (a JSON map, possibly null) matches; false for a null
// selector or an invalid one.
bool SelectorMatches(const Json& selector, const Json& labels);
// metav1.FormatLabelSelector: "a=b,c in (d,e),!f", "<none>" when empty/null.
std::string FormatLabelSelector(const Json& selector);

// RFC 3339 parsing (seconds or fractional seconds, Z or offset).
std::optional<absl::Time> ParseRfc3339(absl::string_view s);
// apimachinery's duration.HumanDuration ("5s", "2m30s", "3h", "4d", ...).
std::string HumanDuration(absl::Duration d);
// translateTimestampSince: "<unknown>" when `ts` is null/unparsable.
std::string TimestampSince(const Json* ts, absl::Time now);

}  // namespace batchd::api::batch_v1::internal
