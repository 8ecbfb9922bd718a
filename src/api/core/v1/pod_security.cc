#include "api/core/v1/pod_security.h"

#include <functional>

#include "absl/strings/str_cat.h"
#include "api/json_access.h"

namespace batchd::api::core_v1 {
namespace {

constexpr char kHostProcess[] = "pods run as host processes";

bool Set(const Json& obj, const char* field) {
  const Json* v = FindMember(obj, field);
  if (v == nullptr || v->is_null()) return false;
  if ((v->is_object() || v->is_array()) && v->empty()) return false;
  return true;
}

void Containers(const Json& spec, const std::function<void(const Json&, const std::string&)>& fn) {
  for (const char* list : {"initContainers", "containers", "ephemeralContainers"}) {
    const Json& cs = MemberArray(spec, list);
    for (size_t i = 0; i < cs.size(); ++i) fn(cs[i], absl::StrCat("spec.", list, "[", i, "]"));
  }
}

}  // namespace

std::vector<std::string> UnappliedSecurityFields(const Json& pod) {
  std::vector<std::string> out;
  const Json& spec = MemberObject(pod, "spec");
  const Json& psc = MemberObject(spec, "securityContext");
  auto add = [&](const std::string& path, const std::string& why) {
    out.push_back(absl::StrCat(path, ": ", why));
  };
  const std::string pod_path = "spec.securityContext";
  for (const char* f : {"seLinuxOptions", "seccompProfile", "appArmorProfile", "windowsOptions",
                        "seLinuxChangePolicy"}) {
    if (Set(psc, f)) add(absl::StrCat(pod_path, ".", f), absl::StrCat("not applied (", kHostProcess, ")"));
  }
  if (Set(psc, "sysctls")) {
    add(pod_path + ".sysctls", "not applied (pods share the node's kernel settings)");
  }
  Containers(spec, [&](const Json& c, const std::string& path) {
    const Json& sc = MemberObject(c, "securityContext");
    const std::string p = path + ".securityContext";
    for (const char* f : {"seLinuxOptions", "seccompProfile", "appArmorProfile", "windowsOptions"}) {
      if (Set(sc, f)) add(absl::StrCat(p, ".", f), absl::StrCat("not applied (", kHostProcess, ")"));
    }
    const Json* ro = FindMember(sc, "readOnlyRootFilesystem");
    if (ro != nullptr && ro->is_boolean() && ro->get<bool>()) {
      add(p + ".readOnlyRootFilesystem",
          "not applied (a host process shares the node's root filesystem)");
    }
    const std::string proc_mount = CopyStringMember(sc, "procMount");
    if (!proc_mount.empty() && proc_mount != "Default") {
      add(p + ".procMount", "not applied (pods see the node's /proc)");
    }
    bool all = false;
    const Json& drop = MemberArray(MemberObject(sc, "capabilities"), "drop");
    for (const Json& d : drop) all |= d.is_string() && d.get<std::string>() == "ALL";
    if (!drop.empty() && !all) {
      add(p + ".capabilities.drop",
          "only [ALL] is applied (it empties the bounding set); single capabilities are not "
          "dropped");
    }
  });
  return out;
}

std::vector<std::string> RootViolations(const Json& pod) {
  std::vector<std::string> out;
  const Json& spec = MemberObject(pod, "spec");
  auto root = [](const Json& sc) {
    const Json* v = FindMember(sc, "runAsUser");
    return v != nullptr && v->is_number_integer() && v->get<int64_t>() == 0;
  };
  if (root(MemberObject(spec, "securityContext"))) out.push_back("pod must not set runAsUser=0");
  Containers(spec, [&](const Json& c, const std::string&) {
    if (root(MemberObject(c, "securityContext"))) {
      out.push_back(absl::StrCat("container \"", CopyStringMember(c, "name"),
                                 "\" must not set runAsUser=0"));
    }
  });
  return out;
}

}  // namespace batchd::api::core_v1
