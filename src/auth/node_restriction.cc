#include "auth/node_restriction.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/json_access.h"

namespace batchd::auth {

using api::Json;

namespace {

// The part of a label key before '/' ("" when it has none).
std::string_view LabelNamespace(std::string_view key) {
  size_t slash = key.find('/');
  return slash == std::string_view::npos ? std::string_view() : key.substr(0, slash);
}

// `ns` is `domain` or a subdomain of it.
bool InDomain(std::string_view ns, std::string_view domain) {
  return ns == domain || (ns.size() > domain.size() && ns.ends_with(domain) &&
                          ns[ns.size() - domain.size() - 1] == '.');
}

bool IsKubernetesLabel(std::string_view key) {
  std::string_view ns = LabelNamespace(key);
  return InDomain(ns, "kubernetes.io") || InDomain(ns, "k8s.io");
}

// The keys added, removed or changed between two label maps (sorted, as
// Kubernetes lists them).
std::set<std::string> ModifiedLabels(const Json& now, const Json& before) {
  std::set<std::string> out;
  auto diff = [&](const Json& a, const Json& b) {
    if (!a.is_object()) return;
    for (auto it = a.begin(); it != a.end(); ++it) {
      auto other = b.is_object() ? b.find(it.key()) : b.end();
      if (!b.is_object() || other == b.end() || *other != *it) out.insert(it.key());
    }
  };
  diff(now, before);
  diff(before, now);
  return out;
}

std::set<std::string> ForbiddenLabels(const std::set<std::string>& modified) {
  std::set<std::string> out;
  for (const std::string& key : modified) {
    if (InDomain(LabelNamespace(key), "node-restriction.kubernetes.io") ||
        (IsKubernetesLabel(key) && !IsKubeletLabel(key))) {
      out.insert(key);
    }
  }
  return out;
}

const Json& Labels(const Json& node) {
  return api::MemberObject(api::MemberObject(node, "metadata"), "labels");
}

// spec.taints, an absent list and an empty one alike (Kubernetes compares
// decoded objects, where both are a nil slice).
Json Taints(const Json& node) {
  const Json& t = api::Member(api::MemberObject(node, "spec"), "taints");
  return t.is_array() && !t.empty() ? t : Json::array();
}

}  // namespace

bool IsKubeletLabel(std::string_view key) {
  static const std::set<std::string, std::less<>> kLabels = {
      "kubernetes.io/hostname",
      "topology.kubernetes.io/zone",
      "topology.kubernetes.io/region",
      "failure-domain.beta.kubernetes.io/zone",
      "failure-domain.beta.kubernetes.io/region",
      "beta.kubernetes.io/instance-type",
      "node.kubernetes.io/instance-type",
      "kubernetes.io/os",
      "kubernetes.io/arch",
      "beta.kubernetes.io/os",
      "beta.kubernetes.io/arch",
  };
  if (kLabels.count(key) > 0) return true;
  std::string_view ns = LabelNamespace(key);
  return InDomain(ns, "kubelet.kubernetes.io") || InDomain(ns, "node.kubernetes.io");
}

std::string NodeSelfWriteRefusal(const std::string& node, const Json& obj, const Json* old) {
  if (old == nullptr) {
    std::set<std::string> forbidden = ForbiddenLabels(ModifiedLabels(Labels(obj), Json::object()));
    if (!forbidden.empty()) {
      return absl::StrCat("node \"", node, "\" is not allowed to set the following labels: ",
                          absl::StrJoin(forbidden, ", "));
    }
    return "";
  }
  if (Taints(obj) != Taints(*old)) {
    return absl::StrCat("node \"", node, "\" is not allowed to modify taints");
  }
  std::set<std::string> forbidden = ForbiddenLabels(ModifiedLabels(Labels(obj), Labels(*old)));
  if (!forbidden.empty()) {
    // Kubernetes' update message names no node.
    return absl::StrCat("is not allowed to modify labels: ", absl::StrJoin(forbidden, ", "));
  }
  return "";
}

}  // namespace batchd::auth
