#include "agent/sim/internal/sim_status.h"

#include <algorithm>
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/json_access.h"
#include "api/meta/time_util.h"
#include "common/string_view.h"

namespace batchd::agent::sim::internal {

using api::Json;
using api::meta::FormatRfc3339;

namespace {

uint64_t Hash(const std::string& s) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a: stable across runs and builds.
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Read in place: the spec is not copied.
const Json& Containers(const Json& pod) {
  return api::MemberArray(api::MemberObject(pod, "spec"), "containers");
}

std::string ContainerId(const Json& pod, const std::string& name, int restarts) {
  return absl::StrCat("sim://", Sv(api::StringMember(api::MemberObject(pod, "metadata"), "uid")), "-",
                      name, "-", restarts);
}

Json Terminated(int exit_code, absl::Time started, absl::Time now, const std::string& id) {
  return {{"terminated",
           {{"exitCode", exit_code},
            {"reason", exit_code == 0 ? "Completed" : "Error"},
            {"startedAt", FormatRfc3339(started)},
            {"finishedAt", FormatRfc3339(now)},
            {"containerID", id}}}};
}

// Common pod-level status of a pod on a simulated node.
void SetCommon(const Json& pod, Json& st, absl::Time now) {
  const Json& spec = api::MemberObject(pod, "spec");
  // Pods share their node's network (as with hostNetwork: true): the pod IP
  // is the node's address.
  std::string host = NodeIp(api::CopyStringMember(spec, "nodeName"));
  st["hostIP"] = host;
  st["hostIPs"] = Json::array({{{"ip", host}}});
  st["podIP"] = host;
  st["podIPs"] = Json::array({{{"ip", host}}});
  if (!st.contains("startTime")) st["startTime"] = FormatRfc3339(now);
  if (!st.contains("conditions") || !st["conditions"].is_array()) st["conditions"] = Json::array();
  SetCondition(st["conditions"], "PodReadyToStartContainers", "True", "", "", now);
  SetCondition(st["conditions"], "Initialized", "True", "", "", now);
  Json inits = Json::array();
  for (const Json& c : api::MemberArray(spec, "initContainers")) {
    std::string name = c.value("name", "");
    inits.push_back({{"name", name}, {"image", c.value("image", "")}, {"imageID", ""},
                     {"ready", true}, {"restartCount", 0}, {"started", false},
                     {"containerID", ContainerId(pod, name, 0)},
                     {"state", Terminated(0, now, now, ContainerId(pod, name, 0))}});
  }
  if (!inits.empty() && !st.contains("initContainerStatuses")) st["initContainerStatuses"] = inits;
}

}  // namespace

std::string NodeIp(const std::string& node_name) {
  uint64_t h = Hash(node_name);
  return absl::StrCat("172.", 16 + h % 16, ".", (h >> 8) % 256, ".", (h >> 16) % 254 + 1);
}

void SetCondition(Json& conds, const std::string& type, const std::string& status,
                  const std::string& reason, const std::string& message, absl::Time now) {
  Json c = {{"type", type}, {"status", status}, {"lastProbeTime", nullptr},
            {"lastTransitionTime", FormatRfc3339(now)}};
  if (!reason.empty()) c["reason"] = reason;
  if (!message.empty()) c["message"] = message;
  for (Json& old : conds) {
    if (old.value("type", "") != type) continue;
    if (old.value("status", "") == status && old.contains("lastTransitionTime")) {
      c["lastTransitionTime"] = old["lastTransitionTime"];
    }
    old = c;
    return;
  }
  conds.push_back(c);
}

absl::Duration CrashLoopBackOff(int restarts) {
  absl::Duration d = absl::Seconds(10);
  for (int i = 1; i < restarts && d < absl::Minutes(5); ++i) d *= 2;
  return std::min(d, absl::Minutes(5));
}

void SetRunning(const Json& pod, Json& st, absl::Time started, int restarts, absl::Time now) {
  st["phase"] = "Running";
  SetCommon(pod, st, now);
  Json old = st.value("containerStatuses", Json::array());
  Json statuses = Json::array();
  for (const Json& c : Containers(pod)) {
    std::string name = c.value("name", "");
    Json cs = {{"name", name}, {"image", c.value("image", "")}, {"imageID", ""},
               {"containerID", ContainerId(pod, name, restarts)}, {"ready", true},
               {"started", true}, {"restartCount", restarts},
               {"state", {{"running", {{"startedAt", FormatRfc3339(started)}}}}}};
    for (const Json& o : old) {
      if (o.value("name", "") == name && o.contains("lastState")) cs["lastState"] = o["lastState"];
    }
    statuses.push_back(cs);
  }
  st["containerStatuses"] = statuses;
  SetCondition(st["conditions"], "ContainersReady", "True", "", "", now);
  SetCondition(st["conditions"], "Ready", "True", "", "", now);
}

void SetBackOff(const Json& pod, Json& st, int exit_code, absl::Time started, int restarts,
                absl::Duration backoff, absl::Time now) {
  SetCommon(pod, st, now);
  st["phase"] = "Running";
  const Json& meta = api::MemberObject(pod, "metadata");
  Json statuses = Json::array();
  std::vector<std::string> names;
  for (const Json& c : Containers(pod)) {
    std::string name = c.value("name", "");
    names.push_back(name);
    std::string msg = absl::StrCat("back-off ", absl::FormatDuration(backoff),
                                   " restarting failed container=", name, " pod=",
                                   Sv(api::StringMember(meta, "name")), "_",
                                   Sv(api::StringMember(meta, "namespace")), "(",
                                   Sv(api::StringMember(meta, "uid")), ")");
    statuses.push_back(
        {{"name", name}, {"image", c.value("image", "")}, {"imageID", ""},
         {"containerID", ContainerId(pod, name, restarts - 1)}, {"ready", false},
         {"started", false}, {"restartCount", restarts},
         {"state", {{"waiting", {{"reason", "CrashLoopBackOff"}, {"message", msg}}}}},
         {"lastState", Terminated(exit_code, started, now, ContainerId(pod, name, restarts - 1))}});
  }
  st["containerStatuses"] = statuses;
  std::string unready = absl::StrCat("containers with unready status: [",
                                     absl::StrJoin(names, " "), "]");
  SetCondition(st["conditions"], "ContainersReady", "False", "ContainersNotReady", unready, now);
  SetCondition(st["conditions"], "Ready", "False", "ContainersNotReady", unready, now);
}

void SetTerminated(const Json& pod, Json& st, int exit_code, absl::Time started, absl::Time now) {
  SetCommon(pod, st, now);
  st["phase"] = exit_code == 0 ? "Succeeded" : "Failed";
  Json statuses = Json::array();
  for (const Json& c : Containers(pod)) {
    std::string name = c.value("name", "");
    int restarts = 0;
    for (const Json& o : api::MemberArray(st, "containerStatuses")) {
      if (o.value("name", "") == name) restarts = o.value("restartCount", 0);
    }
    std::string id = ContainerId(pod, name, restarts);
    statuses.push_back({{"name", name}, {"image", c.value("image", "")}, {"imageID", ""},
                        {"containerID", id}, {"ready", false}, {"started", false},
                        {"restartCount", restarts},
                        {"state", Terminated(exit_code, started, now, id)}});
  }
  st["containerStatuses"] = statuses;
  SetCondition(st["conditions"], "PodReadyToStartContainers", "False", "", "", now);
  SetCondition(st["conditions"], "ContainersReady", "False", "PodCompleted", "", now);
  SetCondition(st["conditions"], "Ready", "False", "PodCompleted", "", now);
}

bool SetNodeReady(Json& node, absl::Time now) {
  Json before = node.value("status", Json::object());
  Json& st = node["status"];
  if (!st.contains("capacity") || !st["capacity"].is_object()) st["capacity"] = Json::object();
  if (!st["capacity"].contains("pods")) st["capacity"]["pods"] = "110";
  if (!st.contains("allocatable") || !st["allocatable"].is_object()) {
    st["allocatable"] = st["capacity"];
  }
  if (!st["allocatable"].contains("pods")) st["allocatable"]["pods"] = st["capacity"]["pods"];
  if (!st.contains("conditions") || !st["conditions"].is_array()) st["conditions"] = Json::array();
  struct Want {
    const char *type, *status, *reason, *message;
  };
  for (const Want& w : {Want{"MemoryPressure", "False", "KubeletHasSufficientMemory",
                             "kubelet has sufficient memory available"},
                        Want{"DiskPressure", "False", "KubeletHasNoDiskPressure",
                             "kubelet has no disk pressure"},
                        Want{"PIDPressure", "False", "KubeletHasSufficientPID",
                             "kubelet has sufficient PID available"},
                        Want{"Ready", "True", "KubeletReady", "kubelet is posting ready status"}}) {
    bool ok = false;
    for (const Json& c : st["conditions"]) {
      ok |= c.value("type", "") == w.type && c.value("status", "") == w.status &&
            c.value("reason", "") == w.reason;
    }
    if (ok) continue;
    SetCondition(st["conditions"], w.type, w.status, w.reason, w.message, now);
    for (Json& c : st["conditions"]) {
      if (c.value("type", "") != w.type) continue;
      c.erase("lastProbeTime");
      c["lastHeartbeatTime"] = FormatRfc3339(now);
    }
  }
  std::string name = node["metadata"].value("name", "");
  if (!st.contains("addresses") || !st["addresses"].is_array() || st["addresses"].empty()) {
    st["addresses"] = Json::array({{{"type", "InternalIP"}, {"address", NodeIp(name)}},
                                   {{"type", "Hostname"}, {"address", name}}});
  }
  Json& info = st["nodeInfo"];
  if (!info.is_object()) info = Json::object();
  const std::pair<const char*, const char*> kInfo[] = {
      {"architecture", "amd64"}, {"operatingSystem", "linux"},
      {"osImage", "batchd simulated node"}, {"kernelVersion", "simulated"},
      {"kubeletVersion", "v1.32.0-batchd-sim"},
      {"containerRuntimeVersion", "batchd-sim://1.0"}};
  for (const auto& [k, v] : kInfo) {
    if (!info.contains(k)) info[k] = v;
  }
  return st != before;
}

}  // namespace batchd::agent::sim::internal
