// `kubectl get pods` rows, following Kubernetes' pod printer: READY counts,
// the STATUS reason (Init:..., waiting/terminated reasons, Terminating,
// Completed), RESTARTS with "(5m ago)", and the wide columns.
#include "absl/strings/str_cat.h"
#include "api/core/v1/internal/pods.h"
#include "api/core/v1/internal/schemas.h"

namespace batchd::api::core_v1::internal {
namespace {

struct RestartTally {
  int64_t count = 0;
  absl::Time last = absl::InfinitePast();
  void Add(const Json& status) {
    count += GetInt(status, "restartCount");
    const Json& term = GetObject(GetObject(status, "lastState"), "terminated");
    absl::Time t;
    if (const Json* f = Get(term, "finishedAt"); f && ParseTime(*f, &t) && t > last) last = t;
  }
};

bool IsRestartableInit(const Json& spec, const std::string& name) {
  for (const Json& c : GetArray(spec, "initContainers")) {
    if (GetString(c, "name") == name) return GetString(c, "restartPolicy") == "Always";
  }
  return false;
}

bool ConditionTrue(const Json& status, const char* type) {
  for (const Json& c : GetArray(status, "conditions")) {
    if (GetString(c, "type") == type) return GetString(c, "status") == "True";
  }
  return false;
}

std::string TerminatedReason(const Json& term, const char* prefix) {
  std::string reason = GetString(term, "reason");
  if (!reason.empty()) return prefix + reason;
  if (int64_t sig = GetInt(term, "signal"); sig != 0) return absl::StrCat(prefix, "Signal:", sig);
  return absl::StrCat(prefix, "ExitCode:", GetInt(term, "exitCode"));
}

// Walks init container statuses; returns true while the pod is initializing.
bool InitStatus(const Json& spec, const Json& status, std::string& reason, int64_t& ready,
                RestartTally& all, RestartTally& sidecars) {
  const Json& inits = GetArray(status, "initContainerStatuses");
  const size_t spec_inits = GetArray(spec, "initContainers").size();
  for (size_t i = 0; i < inits.size(); ++i) {
    const Json& c = inits[i];
    all.Add(c);
    const bool restartable = IsRestartableInit(spec, GetString(c, "name"));
    if (restartable) sidecars.Add(c);
    const Json& state = GetObject(c, "state");
    const Json* term = Get(state, "terminated");
    const Json* waiting = Get(state, "waiting");
    if (term && GetInt(*term, "exitCode") == 0) continue;
    if (restartable && GetBool(c, "started")) {
      if (GetBool(c, "ready")) ++ready;
      continue;
    }
    if (term) {
      reason = TerminatedReason(*term, "Init:");
    } else if (waiting && !GetString(*waiting, "reason").empty() &&
               GetString(*waiting, "reason") != "PodInitializing") {
      reason = "Init:" + GetString(*waiting, "reason");
    } else {
      reason = absl::StrCat("Init:", i, "/", spec_inits);
    }
    return true;
  }
  return false;
}

}  // namespace

std::vector<TableColumn> PodColumns() {
  return {
      {"Ready", "string", "", "The aggregate readiness state of this pod for accepting traffic.", 0},
      {"Status", "string", "", "The aggregate status of the containers in this pod.", 0},
      {"Restarts", "string", "", "The number of times the containers in this pod have been "
                                 "restarted and when the last container in this pod has "
                                 "restarted.", 0},
      {"Age", "string", "", "CreationTimestamp is a timestamp representing the server time when "
                            "this object was created.", 0},
      {"IP", "string", "", "IP address allocated to the pod. Routable at least within the "
                           "cluster.", 1},
      {"Node", "string", "", "NodeName is a request to schedule this pod onto a specific node.", 1},
      {"Nominated Node", "string", "", "nominatedNodeName is set only when this pod preempts "
                                       "other pods on the node.", 1},
      {"Readiness Gates", "string", "", "If specified, all readiness gates will be evaluated "
                                        "for pod readiness.", 1},
  };
}

std::vector<Json> PodRowCells(const Json& pod, absl::Time now) {
  const Json& spec = GetObject(pod, "spec");
  const Json& status = GetObject(pod, "status");
  const Json& meta = GetObject(pod, "metadata");
  int64_t total = static_cast<int64_t>(GetArray(spec, "containers").size());
  for (const Json& c : GetArray(spec, "initContainers")) {
    if (GetString(c, "restartPolicy") == "Always") ++total;
  }
  int64_t ready = 0;
  std::string phase = GetString(status, "phase");
  std::string reason = GetString(status, "reason").empty() ? phase : GetString(status, "reason");
  for (const Json& c : GetArray(status, "conditions")) {
    if (GetString(c, "type") == "PodScheduled" && GetString(c, "reason") == "SchedulingGated") {
      reason = "SchedulingGated";
    }
  }
  RestartTally all, sidecars;
  bool initializing = InitStatus(spec, status, reason, ready, all, sidecars);
  RestartTally restarts = all;
  if (!initializing || ConditionTrue(status, "Initialized")) {
    restarts = sidecars;
    bool has_running = false;
    const Json& cs = GetArray(status, "containerStatuses");
    for (size_t i = cs.size(); i-- > 0;) {
      const Json& c = cs[i];
      restarts.Add(c);
      const Json& state = GetObject(c, "state");
      const Json* waiting = Get(state, "waiting");
      const Json* term = Get(state, "terminated");
      if (waiting && !GetString(*waiting, "reason").empty()) {
        reason = GetString(*waiting, "reason");
      } else if (term) {
        reason = TerminatedReason(*term, "");
      } else if (GetBool(c, "ready") && Get(state, "running")) {
        has_running = true;
        ++ready;
      }
    }
    if (reason == "Completed" && has_running) {
      reason = ConditionTrue(status, "Ready") ? "Running" : "NotReady";
    }
  }
  const bool deleting = Get(meta, "deletionTimestamp") != nullptr;
  if (deleting && GetString(status, "reason") == "NodeLost") {
    reason = "Unknown";
  } else if (deleting && phase != "Succeeded" && phase != "Failed") {
    reason = "Terminating";
  }
  std::string restarts_str = absl::StrCat(restarts.count);
  if (restarts.count != 0 && restarts.last != absl::InfinitePast()) {
    restarts_str += " (" + HumanDuration(now - restarts.last) + " ago)";
  }
  std::vector<Json> cells = {absl::StrCat(ready, "/", total), reason, restarts_str,
                             HumanAge(meta.value("creationTimestamp", Json()), now)};
  std::string ip;
  if (const Json& ips = GetArray(status, "podIPs"); !ips.empty()) ip = GetString(ips[0], "ip");
  if (ip.empty()) ip = GetString(status, "podIP");
  auto or_none = [](std::string s) { return s.empty() ? std::string("<none>") : s; };
  std::string gates = "<none>";
  if (const Json& rg = GetArray(spec, "readinessGates"); !rg.empty()) {
    int64_t true_count = 0;
    for (const Json& g : rg) {
      if (ConditionTrue(status, GetString(g, "conditionType").c_str())) ++true_count;
    }
    gates = absl::StrCat(true_count, "/", rg.size());
  }
  cells.push_back(or_none(ip));
  cells.push_back(or_none(GetString(spec, "nodeName")));
  cells.push_back(or_none(GetString(status, "nominatedNodeName")));
  cells.push_back(gates);
  return cells;
}

}  // namespace batchd::api::core_v1::internal
