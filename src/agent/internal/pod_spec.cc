#include "agent/internal/pod_spec.h"

#include <map>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "api/core/v1/restart_generation.h"
#include "api/json_access.h"
#include "common/status_macros.h"
#include "common/string_view.h"
#include "api/resource/quantity.h"

namespace batchd::agent::internal {

using api::Json;

namespace {

// "metadata.labels['k']" -> ("metadata.labels", "k").
bool SplitSubscript(std::string_view path, std::string_view* base, std::string* key) {
  size_t open = path.find("['");
  if (open == std::string_view::npos || path.size() < 2 || path.substr(path.size() - 2) != "']") {
    return false;
  }
  *base = path.substr(0, open);
  *key = std::string(path.substr(open + 2, path.size() - open - 4));
  return true;
}

std::optional<api::Quantity> QuantityAt(const Json& res, const char* section,
                                        const std::string& name) {
  const Json& v = api::Member(api::Member(res, section), name.c_str());
  if (v.is_null()) return std::nullopt;
  auto q = api::Quantity::FromJson(v);
  if (!q.ok()) return std::nullopt;
  return *q;
}

int64_t CeilDiv(int64_t a, int64_t b) {
  if (b <= 0) return a;
  return a / b + (a % b != 0 && a > 0 ? 1 : 0);
}

const Json* FindContainer(const Json& pod, const std::string& name) {
  for (const char* list : {"containers", "initContainers"}) {
    const Json& cs = api::Member(api::Member(pod, "spec"), list);
    if (!cs.is_array()) continue;
    for (const Json& c : cs) {
      if (api::CopyStringMember(c, "name") == name) return &c;
    }
  }
  return nullptr;
}

// A Secret's or ConfigMap's string data: Secret `data` decoded from base64,
// ConfigMap `data` as is (the kubelet reads neither binaryData nor stringData).
std::map<std::string, std::string> DataOf(const Json& obj, bool secret) {
  std::map<std::string, std::string> out;
  const Json& data = api::MemberObject(obj, "data");
  for (auto it = data.begin(); it != data.end(); ++it) {
    if (!it.value().is_string()) continue;
    std::string v = it.value().get<std::string>();
    if (secret) {
      std::string decoded;
      if (!absl::Base64Unescape(v, &decoded)) continue;
      v = std::move(decoded);
    }
    out[it.key()] = std::move(v);
  }
  return out;
}

// The object `ref` names (`name`, `optional`) for env: nullopt when it is
// missing and optional; FailedPrecondition "secret \"db\" not found" otherwise.
absl::StatusOr<std::optional<Json>> Referenced(const Json& pod, const Json& ref, bool secret,
                                               const ObjectLookup& lookup) {
  const std::string name = api::CopyStringMember(ref, "name");
  const std::string ns = api::CopyStringMember(api::MemberObject(pod, "metadata"), "namespace");
  std::optional<Json> obj;
  if (lookup) {
    absl::StatusOr<std::optional<Json>> got = lookup(secret ? "secrets" : "configmaps", ns, name);
    if (!got.ok()) {
      return absl::FailedPreconditionError(absl::StrCat("failed to get ", secret ? "secret" : "configmap",
                                                        " \"", name, "\": ", got.status().message()));
    }
    obj = *std::move(got);
  }
  if (!obj && !ref.value("optional", false)) {
    return absl::FailedPreconditionError(
        absl::StrCat(secret ? "secret" : "configmap", " \"", name, "\" not found"));
  }
  return obj;
}

absl::StatusOr<std::optional<std::string>> ResolveValueFrom(const Json& pod, const Json& container,
                                                           const Json& from,
                                                           const Json& allocatable,
                                                           const ObjectLookup& lookup) {
  if (from.contains("fieldRef")) {
    auto v = ResolveFieldRef(pod, api::CopyStringMember(from["fieldRef"], "fieldPath"));
    if (!v.ok()) return v.status();
    return std::optional<std::string>(*v);
  }
  if (from.contains("resourceFieldRef")) {
    auto v = ResolveResourceFieldRef(pod, container, from["resourceFieldRef"], allocatable);
    if (!v.ok()) return v.status();
    return std::optional<std::string>(*v);
  }
  for (const char* kind : {"configMapKeyRef", "secretKeyRef"}) {
    if (!from.contains(kind)) continue;
    const bool secret = kind == std::string("secretKeyRef");
    const Json& ref = from[kind];
    BATCHD_ASSIGN_OR_RETURN(std::optional<Json> obj, Referenced(pod, ref, secret, lookup));
    if (!obj) return std::optional<std::string>();
    const std::string key = api::CopyStringMember(ref, "key");
    std::map<std::string, std::string> data = DataOf(*obj, secret);
    auto it = data.find(key);
    if (it != data.end()) return std::optional<std::string>(std::move(it->second));
    if (ref.value("optional", false)) return std::optional<std::string>();
    return absl::FailedPreconditionError(absl::StrCat(
        "couldn't find key ", key, " in ", secret ? "Secret " : "ConfigMap ",
        api::CopyStringMember(api::MemberObject(*obj, "metadata"), "namespace"), "/",
        api::CopyStringMember(ref, "name")));
  }
  return std::optional<std::string>();
}

// The kubelet's (relaxed) rule for envFrom keys: printable ASCII, no '='.
bool ValidEnvName(const std::string& name) {
  if (name.empty()) return false;
  for (char ch : name) {
    if (ch < 32 || ch > 126 || ch == '=') return false;
  }
  return true;
}

ContainerSpec BaseContainer(const Json& c) {
  ContainerSpec out;
  out.name = api::CopyStringMember(c, "name");
  out.image = api::CopyStringMember(c, "image");
  out.working_dir = api::CopyStringMember(c, "workingDir");
  const Json& res = api::Member(c, "resources");
  if (auto cpu = QuantityAt(res, "limits", "cpu")) out.cpu_limit_millis = cpu->MilliValue();
  if (auto mem = QuantityAt(res, "limits", "memory")) out.memory_limit_bytes = mem->Value();
  const Json& probe = api::Member(c, "readinessProbe");
  const Json& exec = api::Member(api::Member(probe, "exec"), "command");
  if (exec.is_array()) {
    for (const Json& a : exec) {
      if (a.is_string()) out.readiness_exec.push_back(a.get<std::string>());
    }
    out.readiness_period_seconds = probe.value("periodSeconds", 10);
    out.readiness_initial_delay_seconds = probe.value("initialDelaySeconds", 0);
    out.readiness_timeout_seconds = probe.value("timeoutSeconds", 1);
    out.readiness_failure_threshold = probe.value("failureThreshold", 3);
    out.readiness_success_threshold = probe.value("successThreshold", 1);
  }
  out.restartable_init = api::CopyStringMember(c, "restartPolicy") == "Always";
  return out;
}

absl::StatusOr<ContainerSpec> BuildContainer(const Json& pod, const Json& c,
                                             const SandboxInputs& in,
                                             std::vector<std::string>* warnings) {
  ContainerSpec out = BaseContainer(c);
  BATCHD_ASSIGN_OR_RETURN(ContainerIdentity id, ResolveContainerIdentity(pod, c, in.identity));
  out.uid = id.uid;
  out.gid = id.gid;
  out.groups = id.groups;
  out.no_new_privs = id.no_new_privs;
  out.drop_all_capabilities = id.drop_all_capabilities;
  auto env = ResolveEnv(pod, c, in.allocatable, in.lookup, warnings);
  if (!env.ok()) return env.status();
  std::map<std::string, std::string, std::less<>> vars(env->begin(), env->end());
  auto lookup = [&](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
  for (const char* list : {"command", "args"}) {
    const Json& v = api::Member(c, list);
    if (!v.is_array()) continue;
    for (const Json& a : v) {
      if (a.is_string()) out.argv.push_back(ExpandVars(a.get<std::string>(), lookup));
    }
  }
  if (out.argv.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "container ", out.name, " has no command: images are not run, set command"));
  }
  out.env = std::move(*env);
  return out;
}

}  // namespace

std::string ExpandVars(std::string_view in,
                       const std::function<std::optional<std::string>(std::string_view)>& lookup) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '$' || i + 1 >= in.size()) {
      out.push_back(in[i]);
      continue;
    }
    char next = in[i + 1];
    if (next == '$') {
      out.push_back('$');
      ++i;
    } else if (next == '(') {
      size_t close = in.find(')', i + 2);
      if (close == std::string_view::npos) {
        out.append(in.substr(i));
        return out;
      }
      std::string_view name = in.substr(i + 2, close - i - 2);
      std::optional<std::string> v = name.empty() ? std::nullopt : lookup(name);
      if (v) {
        out.append(*v);
      } else {
        out.append(in.substr(i, close - i + 1));
      }
      i = close;
    } else {
      out.push_back('$');
    }
  }
  return out;
}

absl::StatusOr<std::string> ResolveFieldRef(const Json& pod, std::string_view path) {
  const Json& meta = api::Member(pod, "metadata");
  std::string_view base;
  std::string key;
  if (SplitSubscript(path, &base, &key)) {
    const char* map = base == "metadata.labels"        ? "labels"
                      : base == "metadata.annotations" ? "annotations"
                                                       : nullptr;
    if (map) return api::CopyStringMember(api::Member(meta, map), key.c_str());
  }
  static const std::map<std::string, std::pair<const char*, const char*>, std::less<>> kPaths = {
      {"metadata.name", {"metadata", "name"}},
      {"metadata.namespace", {"metadata", "namespace"}},
      {"metadata.uid", {"metadata", "uid"}},
      {"spec.nodeName", {"spec", "nodeName"}},
      {"spec.serviceAccountName", {"spec", "serviceAccountName"}},
      {"status.hostIP", {"status", "hostIP"}},
      {"status.podIP", {"status", "podIP"}},
      {"status.hostIPs", {"status", "hostIP"}},
      {"status.podIPs", {"status", "podIP"}},
  };
  auto it = kPaths.find(path);
  if (it == kPaths.end()) {
    return absl::InvalidArgumentError(absl::StrCat("unsupported fieldPath: ", std::string(path)));
  }
  return api::CopyStringMember(api::Member(pod, it->second.first), it->second.second);
}

absl::StatusOr<std::string> ResolveResourceFieldRef(const Json& pod, const Json& container,
                                                    const Json& ref, const Json& allocatable) {
  const Json* c = &container;
  std::string cname = api::CopyStringMember(ref, "containerName");
  if (!cname.empty()) {
    c = FindContainer(pod, cname);
    if (!c) return absl::InvalidArgumentError("resourceFieldRef: no container " + cname);
  }
  std::string resource = api::CopyStringMember(ref, "resource");
  size_t dot = resource.find('.');
  if (dot == std::string::npos) {
    return absl::InvalidArgumentError("unsupported resource: " + resource);
  }
  std::string section = resource.substr(0, dot), name = resource.substr(dot + 1);
  if (section != "limits" && section != "requests") {
    return absl::InvalidArgumentError("unsupported resource: " + resource);
  }
  const Json& res = api::Member(*c, "resources");
  std::optional<api::Quantity> q = QuantityAt(res, section.c_str(), name);
  if (!q && section == "requests") q = QuantityAt(res, "limits", name);  // Defaulted from limits.
  if (!q && section == "limits" && allocatable.is_object() && allocatable.contains(name)) {
    auto a = api::Quantity::FromJson(allocatable[name]);
    if (a.ok()) q = *a;
  }
  if (!q) q = api::Quantity();
  api::Quantity divisor = api::Quantity::FromInt(1);
  if (ref.contains("divisor")) {
    auto d = api::Quantity::FromJson(ref["divisor"]);
    if (!d.ok() || d->IsZero()) return absl::InvalidArgumentError("invalid divisor");
    divisor = *d;
  }
  if (name == "cpu") return std::to_string(CeilDiv(q->MilliValue(), divisor.MilliValue()));
  return std::to_string(CeilDiv(q->Value(), divisor.Value()));
}

absl::StatusOr<EnvList> ResolveEnv(const Json& pod, const Json& container,
                                   const Json& allocatable, const ObjectLookup& objects,
                                   std::vector<std::string>* warnings) {
  EnvList out;
  std::map<std::string, std::string, std::less<>> vars;
  auto set = [&](const std::string& k, std::string v) {
    auto it = vars.find(k);
    if (it != vars.end()) {
      for (auto& [name, value] : out) {
        if (name == k) value = v;
      }
      it->second = std::move(v);
      return;
    }
    vars[k] = v;
    out.emplace_back(k, std::move(v));
  };
  std::string hostname = api::CopyStringMember(api::Member(pod, "spec"), "hostname");
  set("HOSTNAME",
      hostname.empty() ? api::CopyStringMember(api::Member(pod, "metadata"), "name") : hostname);
  auto lookup = [&](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
  for (const Json& from : api::MemberArray(container, "envFrom")) {
    const bool secret = from.contains("secretRef");
    const Json& ref = api::MemberObject(from, secret ? "secretRef" : "configMapRef");
    if (ref.empty()) continue;
    BATCHD_ASSIGN_OR_RETURN(std::optional<Json> obj, Referenced(pod, ref, secret, objects));
    if (!obj) continue;
    const std::string prefix = api::CopyStringMember(from, "prefix");
    std::vector<std::string> invalid;
    for (auto& [key, value] : DataOf(*obj, secret)) {
      const std::string name = prefix + key;
      if (!ValidEnvName(name)) {
        invalid.push_back(name);
        continue;
      }
      set(name, std::move(value));
    }
    if (!invalid.empty() && warnings != nullptr) {
      warnings->push_back(absl::StrCat(
          "Keys [", absl::StrJoin(invalid, ", "), "] from the EnvFrom ",
          secret ? "secret " : "configMap ",
          api::CopyStringMember(api::MemberObject(*obj, "metadata"), "namespace"), "/",
          api::CopyStringMember(ref, "name"),
          " were skipped since they are considered invalid environment variable names."));
    }
  }
  const Json& env = api::Member(container, "env");
  if (!env.is_array()) return out;
  for (const Json& e : env) {
    std::string name = api::CopyStringMember(e, "name");
    if (name.empty()) continue;
    if (e.contains("valueFrom")) {
      auto v = ResolveValueFrom(pod, container, e["valueFrom"], allocatable, objects);
      if (!v.ok()) return v.status();
      if (*v) set(name, **v);
      continue;
    }
    set(name, ExpandVars(api::CopyStringMember(e, "value"), lookup));
  }
  return out;
}

absl::StatusOr<PodSandboxSpec> BuildSandboxSpec(const Json& pod, const Json& allocatable) {
  SandboxInputs in;
  in.allocatable = allocatable;
  return BuildSandboxSpec(pod, in);
}

absl::StatusOr<PodSandboxSpec> BuildSandboxSpec(const Json& pod, const SandboxInputs& in,
                                                std::vector<std::string>* warnings) {
  PodSandboxSpec s;
  const Json& meta = api::Member(pod, "metadata");
  const Json& spec = api::Member(pod, "spec");
  s.uid = api::CopyStringMember(meta, "uid");
  s.ns = api::CopyStringMember(meta, "namespace");
  s.name = api::CopyStringMember(meta, "name");
  std::string rp = api::CopyStringMember(spec, "restartPolicy");
  s.restart_policy = rp.empty() ? "Always" : rp;
  s.termination_grace_seconds = spec.value("terminationGracePeriodSeconds", int64_t{30});
  s.active_deadline_seconds = spec.value("activeDeadlineSeconds", int64_t{0});
  for (auto [list, dst] : {std::pair{"initContainers", &s.init_containers},
                           std::pair{"containers", &s.containers}}) {
    const Json& cs = api::Member(spec, list);
    if (!cs.is_array()) continue;
    for (const Json& c : cs) {
      auto built = BuildContainer(pod, c, in, warnings);
      if (!built.ok()) return built.status();
      dst->push_back(std::move(*built));
    }
  }
  const RestartRequest restart = RestartRequestOf(pod);
  s.restart_generation = restart.generation;
  s.restart_hold = restart.generation >= 0 && restart.hold;
  std::tie(s.owner_uid, s.owner_gid) = PodOwner(pod, in.identity);
  s.pids_limit = in.pids_limit;
  return s;
}

RestartRequest RestartRequestOf(const Json& pod) {
  RestartRequest r;
  const Json& annotations = api::MemberAt(pod, {"metadata", "annotations"});
  int64_t g = -1;
  if (absl::SimpleAtoi(
          Sv(api::StringMember(annotations, api::core_v1::kRestartGenerationAnnotation)), &g) &&
      g >= 0) {
    r.generation = g;
  }
  r.hold = api::StringMember(annotations, api::core_v1::kRestartHoldAnnotation) == "true";
  return r;
}

}  // namespace batchd::agent::internal
