// Validation of containers (ValidateContainers / validateInitContainers in
// Kubernetes): names, images, ports, env, resources, probes, volume mounts.
#include <set>

#include "absl/strings/str_cat.h"
#include "api/core/v1/internal/config.h"
#include "api/core/v1/internal/service.h"
#include "api/core/v1/internal/validation.h"
#include "api/json_access.h"
#include "api/resource/quantity.h"
#include "api/validation/names.h"

namespace batchd::api::core_v1::internal {
namespace {

void AddEach(ErrorList& errs, const Path& p, const Json& v, const validation::Messages& msgs) {
  for (const std::string& m : msgs) errs.push_back(Invalid(p, v, m));
}

void CheckEnum(ErrorList& errs, const Path& p, const std::string& v,
               const std::vector<std::string>& allowed, bool required) {
  if (v.empty()) {
    if (required) errs.push_back(Required(p, ""));
    return;
  }
  for (const std::string& a : allowed) {
    if (a == v) return;
  }
  errs.push_back(NotSupported(p, v, allowed));
}

void ValidatePortNumber(ErrorList& errs, const Path& p, int64_t port) {
  if (port < 1 || port > 65535) {
    errs.push_back(Invalid(p, port, "must be between 1 and 65535, inclusive"));
  }
}

void ValidatePorts(ErrorList& errs, const Json& ports, const Path& path,
                   std::set<std::string>& port_names) {
  for (size_t i = 0; i < ports.size(); ++i) {
    const Json& port = ports[i];
    Path p = path.Index(i);
    std::string name(StringMember(port, "name"));
    if (!name.empty()) {
      AddEach(errs, p.Child("name"), name, IsValidPortName(name));
      if (!port_names.insert(name).second) errs.push_back(Duplicate(p.Child("name"), name));
    }
    int64_t cp = IntMember(port, "containerPort");
    if (cp == 0) {
      errs.push_back(Required(p.Child("containerPort"), ""));
    } else {
      ValidatePortNumber(errs, p.Child("containerPort"), cp);
    }
    if (int64_t hp = IntMember(port, "hostPort"); hp != 0) ValidatePortNumber(errs, p.Child("hostPort"), hp);
    CheckEnum(errs, p.Child("protocol"), std::string(StringMember(port, "protocol")), {"SCTP", "TCP", "UDP"}, true);
  }
}

bool ValidEnvName(const std::string& name) {
  for (char c : name) {
    if (c < 32 || c > 126 || c == '=') return false;
  }
  return true;
}

const std::set<std::string>& FieldRefPaths() {
  static const std::set<std::string> kPaths = {
      "metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace",
      "metadata.uid", "spec.nodeName", "spec.serviceAccountName", "status.hostIP",
      "status.hostIPs", "status.podIP", "status.podIPs"};
  return kPaths;
}

void ValidateValueFrom(ErrorList& errs, const Json& env, const Path& p) {
  const Json* vf = FindMember(env, "valueFrom");
  if (vf == nullptr) return;
  int sources = 0;
  for (const char* s : {"fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef"}) {
    if (FindMember(*vf, s)) ++sources;
  }
  Path vp = p.Child("valueFrom");
  if (!StringMember(env, "value").empty()) {
    errs.push_back(Invalid(vp, "", "may not be specified when `value` is not empty"));
  }
  if (sources == 0) {
    errs.push_back(Invalid(vp, "", "must specify one of: `fieldRef`, `resourceFieldRef`, "
                                   "`configMapKeyRef` or `secretKeyRef`"));
  } else if (sources > 1) {
    errs.push_back(Invalid(vp, "", "may not have more than one field specified at a time"));
  }
  if (const Json* fr = FindMember(*vf, "fieldRef")) {
    std::string fp(StringMember(*fr, "fieldPath"));
    Path fpp = vp.Child("fieldRef").Child("fieldPath");
    bool subscript = fp.rfind("metadata.labels[", 0) == 0 || fp.rfind("metadata.annotations[", 0) == 0;
    if (fp.empty()) {
      errs.push_back(Required(fpp, ""));
    } else if (!subscript && !FieldRefPaths().count(fp)) {
      errs.push_back(NotSupported(fpp, fp, {FieldRefPaths().begin(), FieldRefPaths().end()}));
    }
  }
  if (const Json* rr = FindMember(*vf, "resourceFieldRef"); rr && StringMember(*rr, "resource").empty()) {
    errs.push_back(Required(vp.Child("resourceFieldRef").Child("resource"), ""));
  }
}

// configMapKeyRef / secretKeyRef: a name and a valid key.
void ValidateKeyRefs(ErrorList& errs, const Json& vf, const Path& vp) {
  for (const char* ref : {"configMapKeyRef", "secretKeyRef"}) {
    const Json* r = FindMember(vf, ref);
    if (r == nullptr) continue;
    const Path rp = vp.Child(ref);
    if (StringMember(*r, "name").empty()) errs.push_back(Required(rp.Child("name"), ""));
    const std::string key(StringMember(*r, "key"));
    if (key.empty()) {
      errs.push_back(Required(rp.Child("key"), ""));
    } else {
      for (const std::string& m : internal::IsConfigMapKey(key)) {
        errs.push_back(Invalid(rp.Child("key"), key, m));
      }
    }
  }
}

void ValidateEnvFrom(ErrorList& errs, const Json& list, const Path& path) {
  for (size_t i = 0; i < list.size(); ++i) {
    const Json& from = list[i];
    const Path p = path.Index(i);
    const std::string prefix(StringMember(from, "prefix"));
    if (!prefix.empty() && !ValidEnvName(prefix)) {
      errs.push_back(Invalid(p.Child("prefix"), prefix,
                             "a valid environment variable name must consist only of printable "
                             "ASCII characters other than '='"));
    }
    int sources = 0;
    for (const char* ref : {"configMapRef", "secretRef"}) {
      const Json* r = FindMember(from, ref);
      if (r == nullptr) continue;
      ++sources;
      if (StringMember(*r, "name").empty()) errs.push_back(Required(p.Child(ref).Child("name"), ""));
    }
    if (sources == 0) {
      errs.push_back(Invalid(p, "", "must specify one of: `configMapRef` or `secretRef`"));
    } else if (sources > 1) {
      errs.push_back(Invalid(p, "", "may not have more than one field specified at a time"));
    }
  }
}

void ValidateId(ErrorList& errs, const Json& sc, const char* field, const Path& p) {
  const Json* v = FindMember(sc, field);
  if (v == nullptr || !v->is_number_integer()) return;
  const int64_t id = v->get<int64_t>();
  if (id < 0 || id > 2147483647) {
    errs.push_back(Invalid(p.Child(field), id, "must be between 0 and 2147483647, inclusive"));
  }
}

// What batchd refuses of a container's securityContext (pod_security.h says
// what it honours and what it only warns about).
void ValidateContainerSecurityContext(ErrorList& errs, const Json& sc, const Path& p) {
  ValidateId(errs, sc, "runAsUser", p);
  ValidateId(errs, sc, "runAsGroup", p);
  const Json* priv = FindMember(sc, "privileged");
  if (priv != nullptr && priv->is_boolean() && priv->get<bool>()) {
    errs.push_back(Forbidden(p.Child("privileged"),
                             "batchd does not run privileged containers (a pod is a host "
                             "process: there is no container to be privileged in); to run as "
                             "root, set runAsUser: 0 in a namespace labelled "
                             "pod-security.kubernetes.io/enforce=privileged"));
  }
  if (!MemberArray(MemberObject(sc, "capabilities"), "add").empty()) {
    errs.push_back(Forbidden(p.Child("capabilities").Child("add"),
                             "batchd cannot add capabilities: a container keeps only those of "
                             "the user it runs as"));
  }
}

}  // namespace

void ValidatePodSecurityContext(ErrorList& errs, const Json& sc, const Path& p) {
  ValidateId(errs, sc, "runAsUser", p);
  ValidateId(errs, sc, "runAsGroup", p);
  ValidateId(errs, sc, "fsGroup", p);
  const Json& groups = MemberArray(sc, "supplementalGroups");
  for (size_t i = 0; i < groups.size(); ++i) {
    if (groups[i].is_number_integer() &&
        (groups[i].get<int64_t>() < 0 || groups[i].get<int64_t>() > 2147483647)) {
      errs.push_back(Invalid(p.Child("supplementalGroups").Index(i), groups[i],
                             "must be between 0 and 2147483647, inclusive"));
    }
  }
  const std::string policy(StringMember(sc, "supplementalGroupsPolicy"));
  if (!policy.empty() && policy != "Merge" && policy != "Strict") {
    errs.push_back(NotSupported(p.Child("supplementalGroupsPolicy"), policy, {"Merge", "Strict"}));
  }
}

namespace {

void ValidateEnv(ErrorList& errs, const Json& env_list, const Path& path) {
  for (size_t i = 0; i < env_list.size(); ++i) {
    const Json& env = env_list[i];
    Path p = path.Index(i);
    std::string name(StringMember(env, "name"));
    if (name.empty()) {
      errs.push_back(Required(p.Child("name"), ""));
    } else if (!ValidEnvName(name)) {
      errs.push_back(Invalid(p.Child("name"), name, "a valid environment variable name must "
                                                    "consist only of printable ASCII characters "
                                                    "other than '='"));
    }
    ValidateValueFrom(errs, env, p);
    if (const Json* vf = FindMember(env, "valueFrom")) ValidateKeyRefs(errs, *vf, p.Child("valueFrom"));
  }
}

}  // namespace

std::vector<std::string> IsValidPortName(const std::string& name) {
  std::vector<std::string> m;
  if (name.size() > 15) m.push_back("must be no more than 15 characters");
  bool letter = false, bad_char = false;
  for (char c : name) {
    if (c >= 'a' && c <= 'z') letter = true;
    else if (!(c >= '0' && c <= '9') && c != '-') bad_char = true;
  }
  if (bad_char) m.push_back("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
  if (name.find("--") != std::string::npos) m.push_back("must not contain consecutive hyphens");
  if (!name.empty() && (name.front() == '-' || name.back() == '-')) {
    m.push_back("must not begin or end with a hyphen");
  }
  if (!letter) m.push_back("must contain at least one letter (a-z)");
  return m;
}

void ValidateContainer(ErrorList& errs, const Json& c, const Path& p, ContainerContext& ctx) {
  std::string name(StringMember(c, "name"));
  if (name.empty()) {
    errs.push_back(Required(p.Child("name"), ""));
  } else {
    AddEach(errs, p.Child("name"), name, validation::IsDNS1123Label(name));
    if (!ctx.names.insert(name).second) errs.push_back(Duplicate(p.Child("name"), name));
  }
  if (StringMember(c, "image").empty() && ctx.require_image) {
    errs.push_back(Required(p.Child("image"), ""));
  }
  CheckEnum(errs, p.Child("imagePullPolicy"), std::string(StringMember(c, "imagePullPolicy")),
            {"Always", "IfNotPresent", "Never"}, true);
  CheckEnum(errs, p.Child("terminationMessagePolicy"), std::string(StringMember(c, "terminationMessagePolicy")),
            {"File", "FallbackToLogsOnError"}, true);
  ValidatePorts(errs, MemberArray(c, "ports"), p.Child("ports"), ctx.port_names);
  ValidateEnv(errs, MemberArray(c, "env"), p.Child("env"));
  ValidateEnvFrom(errs, MemberArray(c, "envFrom"), p.Child("envFrom"));
  ValidateContainerSecurityContext(errs, MemberObject(c, "securityContext"),
                                   p.Child("securityContext"));
  ValidateResources(errs, MemberObject(c, "resources"), p.Child("resources"));
  ValidateVolumeMounts(errs, MemberArray(c, "volumeMounts"), p.Child("volumeMounts"), ctx.volumes);
  if (!MemberArray(c, "volumeDevices").empty()) {
    errs.push_back(Forbidden(p.Child("volumeDevices"), "raw block volumes are not supported by "
                                                       "batchd"));
  }
  const bool sidecar = ctx.init && StringMember(c, "restartPolicy") == "Always";
  if (!ctx.init && FindMember(c, "restartPolicy")) {
    errs.push_back(Forbidden(p.Child("restartPolicy"), "may not be set for non-init containers"));
  } else if (ctx.init && FindMember(c, "restartPolicy") && !sidecar) {
    errs.push_back(NotSupported(p.Child("restartPolicy"), std::string(StringMember(c, "restartPolicy")), {"Always"}));
  }
  for (const char* probe : {"livenessProbe", "readinessProbe", "startupProbe"}) {
    const Json* pr = FindMember(c, probe);
    if (pr == nullptr) continue;
    if (ctx.init && !sidecar) {
      errs.push_back(Forbidden(p.Child(probe), "may not be set for init containers without "
                                               "restartPolicy=Always"));
      continue;
    }
    ValidateProbe(errs, *pr, p.Child(probe), std::string(probe) != "readinessProbe");
  }
}

void ValidateProbe(ErrorList& errs, const Json& probe, const Path& p, bool success_must_be_one) {
  int handlers = 0;
  for (const char* h : {"exec", "httpGet", "tcpSocket", "grpc"}) {
    if (FindMember(probe, h)) ++handlers;
  }
  if (handlers == 0) errs.push_back(Required(p, "must specify a handler type"));
  if (handlers > 1) {
    errs.push_back(Forbidden(p, "may not specify more than 1 handler type"));
  }
  for (const char* f : {"initialDelaySeconds", "timeoutSeconds", "periodSeconds",
                        "successThreshold", "failureThreshold"}) {
    int64_t v = IntMember(probe, f, 0);
    if (v < 0) errs.push_back(Invalid(p.Child(f), v, "must be greater than or equal to 0"));
  }
  if (int64_t v = IntMember(probe, "terminationGracePeriodSeconds", 1); v <= 0) {
    errs.push_back(Invalid(p.Child("terminationGracePeriodSeconds"), v, "must be greater than 0"));
  }
  if (success_must_be_one && IntMember(probe, "successThreshold", 1) != 1) {
    errs.push_back(Invalid(p.Child("successThreshold"), IntMember(probe, "successThreshold"),
                           "must be 1"));
  }
}

void ValidateVolumeMounts(ErrorList& errs, const Json& mounts, const Path& path,
                          const std::set<std::string>& volumes) {
  std::set<std::string> paths;
  for (size_t i = 0; i < mounts.size(); ++i) {
    Path p = path.Index(i);
    std::string name(StringMember(mounts[i], "name"));
    std::string mount_path(StringMember(mounts[i], "mountPath"));
    if (name.empty()) {
      errs.push_back(Required(p.Child("name"), ""));
    } else if (!volumes.count(name)) {
      errs.push_back({FieldError::Type::kNotFound, p.Child("name").String(), name, "", {}});
    }
    if (mount_path.empty()) {
      errs.push_back(Required(p.Child("mountPath"), ""));
    } else if (!paths.insert(mount_path).second) {
      errs.push_back(Invalid(p.Child("mountPath"), mount_path, "must be unique"));
    } else if (mount_path.front() != '/') {
      // Pods run on the host's file system: a relative path has no root.
      errs.push_back(Invalid(p.Child("mountPath"), mount_path, "must be an absolute path"));
    }
    std::string sub_path(StringMember(mounts[i], "subPath"));
    if (!sub_path.empty()) {
      if (sub_path.front() == '/') {
        errs.push_back(Invalid(p.Child("subPath"), sub_path, "must be a relative path"));
      }
      bool backsteps = false;
      size_t start = 0;
      while (start <= sub_path.size()) {
        size_t slash = sub_path.find('/', start);
        if (sub_path.substr(start, slash == std::string::npos ? slash : slash - start) == "..") {
          backsteps = true;
        }
        if (slash == std::string::npos) break;
        start = slash + 1;
      }
      if (backsteps) errs.push_back(Invalid(p.Child("subPath"), sub_path, "must not contain '..'"));
    }
    if (!StringMember(mounts[i], "subPathExpr").empty()) {
      errs.push_back(Forbidden(p.Child("subPathExpr"), "subPathExpr is not supported by batchd; "
                                                       "use subPath"));
    }
    std::string propagation(StringMember(mounts[i], "mountPropagation"));
    if (!propagation.empty() && propagation != "None") {
      errs.push_back(Forbidden(p.Child("mountPropagation"),
                               "only None is supported by batchd (mounts are private to the "
                               "container)"));
    }
    std::string rro(StringMember(mounts[i], "recursiveReadOnly"));
    if (!rro.empty() && rro != "Disabled") {
      errs.push_back(Forbidden(p.Child("recursiveReadOnly"),
                               "only Disabled is supported by batchd"));
    }
  }
}

}  // namespace batchd::api::core_v1::internal
