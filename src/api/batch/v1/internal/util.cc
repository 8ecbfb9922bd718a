#include "api/batch/v1/internal/util.h"

#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "api/validation/names.h"
#include "api/validation/object_meta.h"

namespace batchd::api::batch_v1::internal {

namespace {
std::string_view Std(absl::string_view v) { return std::string_view(v.data(), v.size()); }
}  // namespace

std::vector<std::string> IsDNS1123Subdomain(absl::string_view v) {
  return validation::IsDNS1123Subdomain(Std(v));
}
std::vector<std::string> IsDNS1123Label(absl::string_view v) {
  return validation::IsDNS1123Label(Std(v));
}
std::vector<std::string> IsQualifiedName(absl::string_view v) {
  return validation::IsQualifiedName(Std(v));
}
std::vector<std::string> IsValidLabelValue(absl::string_view v) {
  return validation::IsValidLabelValue(Std(v));
}

ErrorList ValidateDomainPrefixedPath(const Path& p, absl::string_view v) {
  return validation::ValidateDomainPrefixedPath(p, Std(v));
}

ErrorList NonNegative(const Json& value, const Path& p) {
  if (value.is_number_integer() && value.get<int64_t>() < 0) {
    return {Invalid(p, value, "must be greater than or equal to 0")};
  }
  return {};
}

ErrorList Immutable(const Json& now, const Json& old, const Path& p) {
  return validation::ValidateImmutableField(now, old, p);
}

}  // namespace batchd::api::batch_v1::internal
