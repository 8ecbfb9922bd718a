// ValidatePodSpec / ValidatePodTemplateSpec for the fields batchd models,
// with Kubernetes' field paths and messages.
#include <algorithm>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "api/core/v1/core_v1.h"
#include "api/core/v1/internal/validation.h"
#include "api/json_access.h"
#include "api/validation/object_meta.h"

namespace batchd::api::core_v1 {
namespace {

using namespace internal;  // NOLINT: file-local convenience.

void AddEach(ErrorList& errs, const Path& p, const Json& v, const validation::Messages& msgs) {
  for (const std::string& m : msgs) errs.push_back(Invalid(p, v, m));
}

// The volume sources batchd provides (docs/api.md "Volumes"); every other
// one is refused rather than ignored.
constexpr const char* kSupportedVolumes[] = {"emptyDir", "hostPath", "persistentVolumeClaim",
                                             "secret", "configMap"};

// A file mode of a secret/configMap volume (Kubernetes' message).
void ValidateFileMode(ErrorList& errs, const Json* mode, const Path& p) {
  if (mode == nullptr || mode->is_null()) return;
  if (!mode->is_number_integer() || mode->get<int64_t>() < 0 || mode->get<int64_t>() > 0777) {
    errs.push_back(Invalid(p, *mode, "must be a number between 0 and 0777 (octal), both inclusive"));
  }
}

// A relative path inside the volume (Kubernetes' validateLocalDescendingPath).
void ValidateLocalPath(ErrorList& errs, const std::string& path, const Path& p) {
  if (path.empty()) {
    errs.push_back(Required(p, ""));
    return;
  }
  if (path.front() == '/') errs.push_back(Invalid(p, path, "must be a relative path"));
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part == "..") {
      errs.push_back(Invalid(p, path, "must not contain '..'"));
      break;
    }
  }
  if (path.rfind("..", 0) == 0) errs.push_back(Invalid(p, path, "must not start with '..'"));
}

// secret / configMap: the object's name, items (key, path, mode), defaultMode.
void ValidateConfigSource(ErrorList& errs, const Json& src, const Path& sp, const char* name_field) {
  if (StringMember(src, name_field).empty()) errs.push_back(Required(sp.Child(name_field), ""));
  ValidateFileMode(errs, FindMember(src, "defaultMode"), sp.Child("defaultMode"));
  const Json& items = MemberArray(src, "items");
  for (size_t i = 0; i < items.size(); ++i) {
    const Path ip = sp.Child("items").Index(i);
    if (StringMember(items[i], "key").empty()) errs.push_back(Required(ip.Child("key"), ""));
    ValidateLocalPath(errs, std::string(StringMember(items[i], "path")), ip.Child("path"));
    ValidateFileMode(errs, FindMember(items[i], "mode"), ip.Child("mode"));
  }
}

void ValidateVolumeSource(ErrorList& errs, const Json& v, const Path& p) {
  std::vector<std::string> sources;
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (it.key() != "name" && !it->is_null()) sources.push_back(it.key());
  }
  if (sources.empty()) {
    errs.push_back(Required(p, "must specify a volume type"));
    return;
  }
  for (const std::string& src : sources) {
    bool supported = false;
    for (const char* s : kSupportedVolumes) supported |= src == s;
    if (!supported) {
      errs.push_back(Forbidden(p.Child(src), src + " volumes are not supported by batchd "
                                                "(supported: emptyDir, hostPath, "
                                                "persistentVolumeClaim, secret, configMap)"));
    }
  }
  if (sources.size() > 1) {
    errs.push_back(Forbidden(p.Child(sources[1]), "may not specify more than 1 volume type"));
    return;
  }
  const Json& src = v[sources[0]];
  const Path sp = p.Child(sources[0]);
  if (sources[0] == "emptyDir") {
    std::string medium(StringMember(src, "medium"));
    if (!medium.empty() && medium != "Memory") {
      errs.push_back(Forbidden(sp.Child("medium"), "only \"\" (disk) and \"Memory\" are "
                                                   "supported by batchd"));
    }
    if (const Json* limit = FindMember(src, "sizeLimit"); limit && limit->is_string()) {
      if (limit->get<std::string>().rfind('-', 0) == 0) {
        errs.push_back(Invalid(sp.Child("sizeLimit"), *limit,
                               "must be greater than or equal to 0"));
      }
    }
  } else if (sources[0] == "hostPath") {
    std::string path(StringMember(src, "path"));
    if (path.empty()) {
      errs.push_back(Required(sp.Child("path"), ""));
    } else if (path.find("..") != std::string::npos) {
      errs.push_back(Invalid(sp.Child("path"), path, "must not contain '..'"));
    } else if (path.front() != '/') {
      errs.push_back(Invalid(sp.Child("path"), path, "must be an absolute path"));
    }
    std::string type(StringMember(src, "type"));
    static const std::vector<std::string> kTypes = {
        "", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File",
        "FileOrCreate", "Socket"};
    if (std::find(kTypes.begin(), kTypes.end(), type) == kTypes.end()) {
      errs.push_back(NotSupported(sp.Child("type"), type,
                                  std::vector<std::string>(kTypes.begin(), kTypes.end())));
    }
  } else if (sources[0] == "secret") {
    ValidateConfigSource(errs, src, sp, "secretName");
  } else if (sources[0] == "configMap") {
    ValidateConfigSource(errs, src, sp, "name");
  } else if (sources[0] == "persistentVolumeClaim") {
    std::string claim(StringMember(src, "claimName"));
    if (claim.empty()) {
      errs.push_back(Required(sp.Child("claimName"), ""));
    } else {
      AddEach(errs, sp.Child("claimName"), claim, validation::IsDNS1123Subdomain(claim));
    }
  }
}

std::set<std::string> ValidateVolumes(ErrorList& errs, const Json& volumes, const Path& path) {
  std::set<std::string> names;
  for (size_t i = 0; i < volumes.size(); ++i) {
    Path p = path.Index(i);
    std::string name(StringMember(volumes[i], "name"));
    if (name.empty()) {
      errs.push_back(Required(p.Child("name"), ""));
    } else {
      AddEach(errs, p.Child("name"), name, validation::IsDNS1123Label(name));
      if (!names.insert(name).second) errs.push_back(Duplicate(p.Child("name"), name));
    }
    if (volumes[i].is_object()) ValidateVolumeSource(errs, volumes[i], p);
  }
  return names;
}

void ValidateContainers(ErrorList& errs, const Json& spec, const Path& path,
                        ContainerContext& ctx) {
  const Json& inits = MemberArray(spec, "initContainers");
  ctx.init = true;
  for (size_t i = 0; i < inits.size(); ++i) {
    ValidateContainer(errs, inits[i], path.Child("initContainers").Index(i), ctx);
  }
  const Json& containers = MemberArray(spec, "containers");
  if (containers.empty()) errs.push_back(Required(path.Child("containers"), ""));
  ctx.init = false;
  for (size_t i = 0; i < containers.size(); ++i) {
    ValidateContainer(errs, containers[i], path.Child("containers").Index(i), ctx);
  }
}

void ValidateTolerations(ErrorList& errs, const Json& tolerations, const Path& path) {
  for (size_t i = 0; i < tolerations.size(); ++i) {
    const Json& t = tolerations[i];
    Path p = path.Index(i);
    std::string key = std::string(StringMember(t, "key")), op = std::string(StringMember(t, "operator"));
    std::string value = std::string(StringMember(t, "value")), effect = std::string(StringMember(t, "effect"));
    if (!key.empty()) AddEach(errs, p.Child("key"), key, validation::IsQualifiedName(key));
    if (key.empty() && op != "Exists") {
      errs.push_back(Invalid(p.Child("operator"), op, "operator must be Exists when `key` is "
                                                      "empty, which means \"match all values "
                                                      "and all keys\""));
    }
    if (FindMember(t, "tolerationSeconds") && effect != "NoExecute") {
      errs.push_back(Invalid(p.Child("effect"), effect, "effect must be 'NoExecute' when "
                                                        "`tolerationSeconds` is set"));
    }
    if (op.empty() || op == "Equal") {
      validation::Messages m = validation::IsValidLabelValue(value);
      if (!m.empty()) errs.push_back(Invalid(p.Child("operator"), value, absl::StrJoin(m, ";")));
    } else if (op == "Exists") {
      if (!value.empty()) {
        errs.push_back(Invalid(p.Child("operator"), t, "value must be empty when `operator` is "
                                                       "'Exists'"));
      }
    } else {
      errs.push_back(NotSupported(p.Child("operator"), op, {"Equal", "Exists"}));
    }
    if (!effect.empty() && effect != "NoSchedule" && effect != "PreferNoSchedule" &&
        effect != "NoExecute") {
      errs.push_back(NotSupported(p.Child("effect"), effect,
                                  {"NoExecute", "NoSchedule", "PreferNoSchedule"}));
    }
  }
}

void ValidateNodeSelectorRequirement(ErrorList& errs, const Json& r, const Path& p, bool field) {
  std::string op(StringMember(r, "operator"));
  size_t n = MemberArray(r, "values").size();
  if (op == "In" || op == "NotIn") {
    if (n == 0) {
      errs.push_back(Required(p.Child("values"), "must be specified when `operator` is 'In' or "
                                                 "'NotIn'"));
    }
  } else if (op == "Exists" || op == "DoesNotExist") {
    if (n > 0) {
      errs.push_back(Forbidden(p.Child("values"), "may not be specified when `operator` is "
                                                  "'Exists' or 'DoesNotExist'"));
    }
  } else if (op == "Gt" || op == "Lt") {
    if (n != 1) {
      errs.push_back(Required(p.Child("values"), "must be specified single value when "
                                                 "`operator` is 'Lt' or 'Gt'"));
    }
  } else {
    errs.push_back(Invalid(p.Child("operator"), op, "not a valid selector operator"));
  }
  std::string key(StringMember(r, "key"));
  if (field) {
    if (key != "metadata.name") {
      errs.push_back(Invalid(p.Child("key"), key, "not a valid field selector key"));
    }
  } else {
    AddEach(errs, p.Child("key"), key, validation::IsQualifiedName(key));
  }
}

void ValidateNodeSelectorTerm(ErrorList& errs, const Json& term, const Path& p) {
  const Json& exprs = MemberArray(term, "matchExpressions");
  for (size_t j = 0; j < exprs.size(); ++j) {
    ValidateNodeSelectorRequirement(errs, exprs[j], p.Child("matchExpressions").Index(j), false);
  }
  const Json& fields = MemberArray(term, "matchFields");
  for (size_t j = 0; j < fields.size(); ++j) {
    ValidateNodeSelectorRequirement(errs, fields[j], p.Child("matchFields").Index(j), true);
  }
}

void ValidateWeight(ErrorList& errs, const Json& obj, const Path& p) {
  int64_t w = IntMember(obj, "weight");
  if (w < 1 || w > 100) errs.push_back(Invalid(p.Child("weight"), w, "must be in the range 1-100"));
}

void ValidatePodAffinityTerms(ErrorList& errs, const Json& aff, const Path& path) {
  const char* kRequired = "requiredDuringSchedulingIgnoredDuringExecution";
  const char* kPreferred = "preferredDuringSchedulingIgnoredDuringExecution";
  auto check_term = [&](const Json& term, const Path& p) {
    if (StringMember(term, "topologyKey").empty()) {
      errs.push_back(Required(p.Child("topologyKey"), "can not be empty"));
    } else {
      AddEach(errs, p.Child("topologyKey"), std::string(StringMember(term, "topologyKey")),
              validation::IsQualifiedName(std::string(StringMember(term, "topologyKey"))));
    }
  };
  const Json& req = MemberArray(aff, kRequired);
  for (size_t i = 0; i < req.size(); ++i) check_term(req[i], path.Child(kRequired).Index(i));
  const Json& pref = MemberArray(aff, kPreferred);
  for (size_t i = 0; i < pref.size(); ++i) {
    Path p = path.Child(kPreferred).Index(i);
    ValidateWeight(errs, pref[i], p);
    check_term(MemberObject(pref[i], "podAffinityTerm"), p.Child("podAffinityTerm"));
  }
}

void ValidateAffinity(ErrorList& errs, const Json& affinity, const Path& path) {
  const Json& na = MemberObject(affinity, "nodeAffinity");
  Path nap = path.Child("nodeAffinity");
  if (const Json* req = FindMember(na, "requiredDuringSchedulingIgnoredDuringExecution")) {
    Path rp = nap.Child("requiredDuringSchedulingIgnoredDuringExecution").Child("nodeSelectorTerms");
    const Json& terms = MemberArray(*req, "nodeSelectorTerms");
    if (terms.empty()) errs.push_back(Required(rp, "must have at least one node selector term"));
    for (size_t i = 0; i < terms.size(); ++i) ValidateNodeSelectorTerm(errs, terms[i], rp.Index(i));
  }
  const Json& pref = MemberArray(na, "preferredDuringSchedulingIgnoredDuringExecution");
  for (size_t i = 0; i < pref.size(); ++i) {
    Path p = nap.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i);
    ValidateWeight(errs, pref[i], p);
    ValidateNodeSelectorTerm(errs, MemberObject(pref[i], "preference"), p.Child("preference"));
  }
  ValidatePodAffinityTerms(errs, MemberObject(affinity, "podAffinity"), path.Child("podAffinity"));
  ValidatePodAffinityTerms(errs, MemberObject(affinity, "podAntiAffinity"),
                           path.Child("podAntiAffinity"));
}

void ValidateSchedulingGates(ErrorList& errs, const Json& gates, const Path& path) {
  std::set<std::string> seen;
  for (size_t i = 0; i < gates.size(); ++i) {
    std::string name(StringMember(gates[i], "name"));
    AddEach(errs, path.Index(i), name, validation::IsQualifiedName(name));
    if (!seen.insert(name).second) errs.push_back(Duplicate(path.Index(i), name));
  }
}

void ValidatePolicies(ErrorList& errs, const Json& spec, const Path& path) {
  std::string rp(StringMember(spec, "restartPolicy"));
  if (rp.empty()) {
    errs.push_back(Required(path.Child("restartPolicy"), ""));
  } else if (rp != "Always" && rp != "OnFailure" && rp != "Never") {
    errs.push_back(NotSupported(path.Child("restartPolicy"), rp, {"Always", "OnFailure", "Never"}));
  }
  std::string dns(StringMember(spec, "dnsPolicy"));
  if (dns.empty()) {
    errs.push_back(Required(path.Child("dnsPolicy"), ""));
  } else if (dns != "ClusterFirst" && dns != "ClusterFirstWithHostNet" && dns != "Default" &&
             dns != "None") {
    errs.push_back(NotSupported(path.Child("dnsPolicy"), dns,
                                {"ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"}));
  } else if (dns == "None" && FindMember(spec, "dnsConfig") == nullptr) {
    errs.push_back(Required(path.Child("dnsConfig"), "must provide `dnsConfig` when `dnsPolicy` "
                                                     "is None"));
  }
  if (const Json* ads = FindMember(spec, "activeDeadlineSeconds"); ads && ads->is_number_integer()) {
    int64_t v = ads->get<int64_t>();
    if (v < 1 || v > 2147483647) {
      errs.push_back(Invalid(path.Child("activeDeadlineSeconds"), v,
                             "must be between 1 and 2147483647, inclusive"));
    }
  }
  if (int64_t g = IntMember(spec, "terminationGracePeriodSeconds", 0); g < 0) {
    errs.push_back(Invalid(path.Child("terminationGracePeriodSeconds"), g,
                           "must be greater than or equal to 0"));
  }
}

void ValidateNames(ErrorList& errs, const Json& spec, const Path& path) {
  for (const char* f : {"hostname", "subdomain"}) {
    std::string v(StringMember(spec, f));
    if (!v.empty()) AddEach(errs, path.Child(f), v, validation::IsDNS1123Label(v));
  }
  for (const char* f : {"serviceAccountName", "priorityClassName"}) {
    std::string v(StringMember(spec, f));
    if (!v.empty()) AddEach(errs, path.Child(f), v, validation::IsDNS1123Subdomain(v));
  }
}

// spec.schedulingGroup (1.36) and spec.workloadRef (1.35): the names must be
// valid object names; a pod names its group one way only.
void ValidateSchedulingGroup(ErrorList& errs, const Json& spec, const Path& path) {
  const Json* group = FindMember(spec, "schedulingGroup");
  const Json* ref = FindMember(spec, "workloadRef");
  bool has_group = group != nullptr && group->is_object();
  bool has_ref = ref != nullptr && ref->is_object();
  if (has_group) {
    Path p = path.Child("schedulingGroup").Child("podGroupName");
    std::string name(StringMember(*group, "podGroupName"));
    if (name.empty()) {
      errs.push_back(Required(p));
    } else {
      AddEach(errs, p, name, validation::IsDNS1123Subdomain(name));
    }
  }
  if (has_ref) {
    Path p = path.Child("workloadRef");
    std::string name(StringMember(*ref, "name"));
    std::string group_name(StringMember(*ref, "podGroup"));
    std::string key(StringMember(*ref, "podGroupReplicaKey"));
    if (name.empty()) {
      errs.push_back(Required(p.Child("name")));
    } else {
      AddEach(errs, p.Child("name"), name, validation::IsDNS1123Subdomain(name));
    }
    if (group_name.empty()) {
      errs.push_back(Required(p.Child("podGroup")));
    } else {
      AddEach(errs, p.Child("podGroup"), group_name, validation::IsDNS1123Label(group_name));
    }
    if (!key.empty()) {
      AddEach(errs, p.Child("podGroupReplicaKey"), key, validation::IsDNS1123Label(key));
    }
  }
  if (has_group && has_ref) {
    errs.push_back(Forbidden(path.Child("workloadRef"),
                             "may not be set together with spec.schedulingGroup"));
  }
}

}  // namespace

ErrorList ValidatePodSpec(const Json& spec, const Path& path) {
  ErrorList errs;
  ContainerContext ctx;
  ctx.volumes = ValidateVolumes(errs, MemberArray(spec, "volumes"), path.Child("volumes"));
  ValidateContainers(errs, spec, path, ctx);
  ValidatePodSecurityContext(errs, MemberObject(spec, "securityContext"),
                             path.Child("securityContext"));
  ValidatePolicies(errs, spec, path);
  ValidateNames(errs, spec, path);
  AppendErrors(errs, validation::ValidateLabels(MemberObject(spec, "nodeSelector"),
                                          path.Child("nodeSelector")));
  ValidateTolerations(errs, MemberArray(spec, "tolerations"), path.Child("tolerations"));
  ValidateAffinity(errs, MemberObject(spec, "affinity"), path.Child("affinity"));
  ValidateSchedulingGates(errs, MemberArray(spec, "schedulingGates"), path.Child("schedulingGates"));
  ValidateSchedulingGroup(errs, spec, path);
  return errs;
}

ErrorList ValidatePodTemplateSpec(const Json& tmpl, const Path& path) {
  const Json& meta = MemberObject(tmpl, "metadata");
  ErrorList errs = validation::ValidateLabels(MemberObject(meta, "labels"), path.Child("labels"));
  AppendErrors(errs, validation::ValidateAnnotations(MemberObject(meta, "annotations"),
                                               path.Child("annotations")));
  AppendErrors(errs, ValidatePodSpec(MemberObject(tmpl, "spec"), path.Child("spec")));
  return errs;
}

}  // namespace batchd::api::core_v1
