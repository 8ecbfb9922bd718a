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
  if (v.empty()) return {Required(p)};
  std::vector<absl::string_view> seg = absl::StrSplit(v, absl::MaxSplits('/', 1));
  if (seg.size() != 2 || seg[0].empty() || seg[1].empty()) {
    return {Invalid(p, std::string(v), "must be a domain-prefixed path (such as \"acme.io/foo\")")};
  }
  ErrorList errs;
  for (const std::string& m : IsDNS1123Subdomain(seg[0])) {
    errs.push_back(Invalid(p, std::string(seg[0]), m));
  }
  static constexpr absl::string_view kPathChars =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/-._~%!$&'()*+,;=:";
  if (seg[1].find_first_not_of(kPathChars) != absl::string_view::npos) {
    errs.push_back(Invalid(p, std::string(seg[1]),
                           "Invalid path (regex used for validation is "
                           "'[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')"));
  }
  return errs;
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
