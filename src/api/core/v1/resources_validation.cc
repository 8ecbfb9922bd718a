// ValidateResourceRequirements for containers: resource names, quantities
// non-negative, requests <= limits (== for resources that cannot be overcommitted).
#include <optional>

#include "api/core/v1/internal/validation.h"
#include "api/json_access.h"
#include "api/resource/quantity.h"
#include "api/validation/names.h"

namespace batchd::api::core_v1::internal {
namespace {

bool IsHugePages(const std::string& name) { return name.rfind("hugepages-", 0) == 0; }

bool IsNative(const std::string& name) {
  size_t slash = name.find('/');
  if (slash == std::string::npos) return true;
  std::string domain = name.substr(0, slash);
  return domain == "kubernetes.io" ||
         (domain.size() > 14 && domain.compare(domain.size() - 14, 14, ".kubernetes.io") == 0);
}

// Extended resources (and hugepages) cannot be overcommitted and must be integers.
bool OvercommitAllowed(const std::string& name) { return IsNative(name) && !IsHugePages(name); }

void ValidateName(ErrorList& errs, const std::string& name, const Path& p) {
  for (const std::string& m : validation::IsQualifiedName(name)) {
    errs.push_back(Invalid(p, name, m));
  }
  if (name.find('/') == std::string::npos) {
    if (name != "cpu" && name != "memory" && name != "ephemeral-storage" && !IsHugePages(name)) {
      errs.push_back(Invalid(p, name, "must be a standard resource for containers"));
    }
  }
}

// Parses and checks one quantity; nullopt when it is unusable.
std::optional<Quantity> CheckQuantity(ErrorList& errs, const std::string& name, const Json& v,
                                      const Path& p) {
  absl::StatusOr<Quantity> q = Quantity::FromJson(v);
  if (!q.ok()) {
    errs.push_back(Invalid(p, v, std::string(q.status().message())));
    return std::nullopt;
  }
  if (q->Sign() < 0) {
    errs.push_back(Invalid(p, q->String(), "must be greater than or equal to 0"));
  }
  if (!OvercommitAllowed(name) && q->MilliValue() % 1000 != 0) {
    errs.push_back(Invalid(p, q->String(), "must be an integer"));
  }
  return *std::move(q);
}

}  // namespace

void ValidateResources(ErrorList& errs, const Json& resources, const Path& path) {
  const Json& limits = MemberObject(resources, "limits");
  const Json& requests = MemberObject(resources, "requests");
  Path lim_path = path.Child("limits");
  Path req_path = path.Child("requests");
  for (auto it = limits.begin(); it != limits.end(); ++it) {
    ValidateName(errs, it.key(), lim_path.Key(it.key()));
    CheckQuantity(errs, it.key(), *it, lim_path.Key(it.key()));
  }
  for (auto it = requests.begin(); it != requests.end(); ++it) {
    const std::string& name = it.key();
    ValidateName(errs, name, req_path.Key(name));
    std::optional<Quantity> req = CheckQuantity(errs, name, *it, req_path.Key(name));
    const Json* lim_json = FindMember(limits, name);
    if (lim_json == nullptr) {
      if (!OvercommitAllowed(name)) {
        errs.push_back(Required(lim_path, "Limit must be set for non overcommitable resources"));
      }
      continue;
    }
    absl::StatusOr<Quantity> lim = Quantity::FromJson(*lim_json);
    if (!req || !lim.ok()) continue;
    if (req->Cmp(*lim) != 0 && !OvercommitAllowed(name)) {
      errs.push_back(Invalid(req_path, req->String(),
                             "must be equal to " + name + " limit of " + lim->String()));
    } else if (req->Cmp(*lim) > 0) {
      errs.push_back(Invalid(req_path, req->String(),
                             "must be less than or equal to " + name + " limit of " +
                                 lim->String()));
    }
  }
}

}  // namespace batchd::api::core_v1::internal
