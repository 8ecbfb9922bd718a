// SetDefaults_PodSpec / SetDefaults_Container and friends, as Kubernetes'
// pkg/apis/core/v1/defaults.go applies them to pods and pod templates.
#include <string>

#include "api/core/v1/core_v1.h"
#include "api/core/v1/internal/schemas.h"
#include "api/json_access.h"

namespace batchd::api::core_v1 {
namespace {


void DefaultString(Json& obj, const char* key, const char* value) {
  if (StringMember(obj, key).empty()) obj[key] = value;
}

void DefaultValue(Json& obj, const char* key, Json value) {
  if (FindMember(obj, key) == nullptr) obj[key] = std::move(value);
}

// True when the image names no tag or the tag "latest" (digests count as a tag).
bool IsLatestOrUntagged(const std::string& image) {
  if (image.find('@') != std::string::npos) return false;
  size_t slash = image.rfind('/');
  size_t colon = image.rfind(':');
  if (colon == std::string::npos || (slash != std::string::npos && colon < slash)) return true;
  return image.substr(colon + 1) == "latest";
}

void SetDefaultsProbe(Json& probe) {
  if (!probe.is_object()) return;
  DefaultValue(probe, "timeoutSeconds", 1);
  DefaultValue(probe, "periodSeconds", 10);
  DefaultValue(probe, "successThreshold", 1);
  DefaultValue(probe, "failureThreshold", 3);
  if (Json* http = probe.contains("httpGet") ? &probe["httpGet"] : nullptr; http && http->is_object()) {
    DefaultString(*http, "path", "/");
    DefaultString(*http, "scheme", "HTTP");
  }
}

void SetDefaultsContainer(Json& c, bool host_network) {
  if (!c.is_object()) return;
  DefaultString(c, "terminationMessagePath", "/dev/termination-log");
  DefaultString(c, "terminationMessagePolicy", "File");
  if (StringMember(c, "imagePullPolicy").empty()) {
    c["imagePullPolicy"] = IsLatestOrUntagged(std::string(StringMember(c, "image"))) ? "Always" : "IfNotPresent";
  }
  if (auto it = c.find("ports"); it != c.end() && it->is_array()) {
    for (Json& p : *it) {
      if (!p.is_object()) continue;
      DefaultString(p, "protocol", "TCP");
      if (host_network && FindMember(p, "hostPort") == nullptr && FindMember(p, "containerPort")) {
        p["hostPort"] = p["containerPort"];
      }
    }
  }
  if (auto it = c.find("env"); it != c.end() && it->is_array()) {
    for (Json& e : *it) {
      if (!e.is_object() || !e.contains("valueFrom") || !e["valueFrom"].is_object()) continue;
      Json& vf = e["valueFrom"];
      if (vf.contains("fieldRef") && vf["fieldRef"].is_object()) {
        DefaultString(vf["fieldRef"], "apiVersion", "v1");
      }
    }
  }
  for (const char* probe : {"livenessProbe", "readinessProbe", "startupProbe"}) {
    if (c.contains(probe)) SetDefaultsProbe(c[probe]);
  }
}

}  // namespace

void SetDefaultsPodSpec(Json& spec) {
  if (!spec.is_object()) return;
  DefaultString(spec, "dnsPolicy", "ClusterFirst");
  DefaultString(spec, "restartPolicy", "Always");
  DefaultString(spec, "schedulerName", "default-scheduler");
  DefaultValue(spec, "securityContext", Json::object());
  DefaultValue(spec, "terminationGracePeriodSeconds", 30);
  if (auto it = spec.find("volumes"); it != spec.end() && it->is_array()) {
    for (Json& v : *it) {
      // SetDefaults_Volume: a volume with no source is an emptyDir.
      if (v.is_object() && v.size() == 1 && v.contains("name")) v["emptyDir"] = Json::object();
    }
  }
  bool host_network = BoolMember(spec, "hostNetwork");
  for (const char* list : {"initContainers", "containers"}) {
    auto it = spec.find(list);
    if (it == spec.end() || !it->is_array()) continue;
    for (Json& c : *it) SetDefaultsContainer(c, host_network);
  }
}

void SetDefaultsPod(Json& pod) {
  if (!pod.is_object() || !pod.contains("spec") || !pod["spec"].is_object()) return;
  Json& spec = pod["spec"];
  SetDefaultsPodSpec(spec);
  DefaultValue(spec, "enableServiceLinks", true);
  // Requests default to limits for pods (not templates), per SetDefaults_Pod.
  for (const char* list : {"initContainers", "containers"}) {
    auto it = spec.find(list);
    if (it == spec.end() || !it->is_array()) continue;
    for (Json& c : *it) {
      if (!c.is_object() || !c.contains("resources") || !c["resources"].is_object()) continue;
      Json& res = c["resources"];
      const Json* limits = FindMember(res, "limits");
      if (limits == nullptr || !limits->is_object() || limits->empty()) continue;
      Json requests = FindMember(res, "requests") && res["requests"].is_object() ? res["requests"]
                                                                          : Json::object();
      for (auto& [name, q] : limits->items()) {
        if (!requests.contains(name)) requests[name] = q;
      }
      res["requests"] = std::move(requests);
    }
  }
}

}  // namespace batchd::api::core_v1
