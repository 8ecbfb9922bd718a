// `kubectl get pods` rows, following Kubernetes' pod printer: READY counts,
// the STATUS reason (Init:..., waiting/terminated reasons, Terminating,
// Completed), RESTARTS with "(5m ago)", and the wide columns.
#include "absl/strings/str_cat.h"
#include "api/core/v1/internal/pods.h"
#include "api/core/v1/internal/schemas.h"
#include "api/json_access.h"
#include "api/meta/conditions.h"

namespace batchd::api::core_v1::internal {
namespace {

struct RestartTally {
  int64_t count = 0;
  absl::Time last = absl::InfinitePast();
  void Add(const Json& status) {
    count += IntMember(status, "restartCount");
    const Json& term = MemberObject(MemberObject(status, "lastState"), "terminated");
    absl::Time t;
    if (const Json* f = FindMember(term, "finishedAt"); f && ParseTime(*f, &t) && t > last) last = t;
  }
};

bool IsRestartableInit(const Json& spec, const std::string& name) {
  for (const Json& c : MemberArray(spec, "initContainers")) {
    if (StringMember(c, "name") == name) return StringMember(c, "restartPolicy") == "Always";
  }
  return false;
}

bool ConditionTrue(const Json& status, const char* type) {
  const Json* c = meta::FindConditionIn(Member(status, "conditions"), type);
  return c != nullptr && StringMember(*c, "status") == meta::kConditionTrue;
}

std::string TerminatedReason(const Json& term, const char* prefix) {
  std::string reason(StringMember(term, "reason"));
  if (!reason.empty()) return prefix + reason;
  if (int64_t sig = IntMember(term, "signal"); sig != 0) return absl::StrCat(prefix, "Signal:", sig);
  return absl::StrCat(prefix, "ExitCode:", IntMember(term, "exitCode"));
}

// Walks init container statuses; returns true while the pod is initializing.
bool InitStatus(const Json& spec, const Json& status, std::string& reason, int64_t& ready,
                RestartTally& all, RestartTally& sidecars) {
  const Json& inits = MemberArray(status, "initContainerStatuses");
  const size_t spec_inits = MemberArray(spec, "initContainers").size();
  for (size_t i = 0; i < inits.size(); ++i) {
    const Json& c = inits[i];
    all.Add(c);
    const bool restartable = IsRestartableInit(spec, std::string(StringMember(c, "name")));
    if (restartable) sidecars.Add(c);
    const Json& state = MemberObject(c, "state");
    const Json* term = FindMember(state, "terminated");
    const Json* waiting = FindMember(state, "waiting");
    if (term && IntMember(*term, "exitCode") == 0) continue;
    if (restartable && BoolMember(c, "started")) {
      if (BoolMember(c, "ready")) ++ready;
      continue;
    }
    if (term) {
      reason = TerminatedReason(*term, "Init:");
    } else if (waiting && !StringMember(*waiting, "reason").empty() &&
               StringMember(*waiting, "reason") != "PodInitializing") {
      reason = "Init:" + std::string(StringMember(*waiting, "reason"));
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
  const Json& spec = MemberObject(pod, "spec");
  const Json& status = MemberObject(pod, "status");
  const Json& meta = MemberObject(pod, "metadata");
  int64_t total = static_cast<int64_t>(MemberArray(spec, "containers").size());
  for (const Json& c : MemberArray(spec, "initContainers")) {
    if (StringMember(c, "restartPolicy") == "Always") ++total;
  }
  int64_t ready = 0;
  std::string phase(StringMember(status, "phase"));
  std::string reason = StringMember(status, "reason").empty() ? phase : std::string(StringMember(status, "reason"));
  for (const Json& c : MemberArray(status, "conditions")) {
    if (StringMember(c, "type") == "PodScheduled" && StringMember(c, "reason") == "SchedulingGated") {
      reason = "SchedulingGated";
    }
  }
  RestartTally all, sidecars;
  bool initializing = InitStatus(spec, status, reason, ready, all, sidecars);
  RestartTally restarts = all;
  if (!initializing || ConditionTrue(status, "Initialized")) {
    restarts = sidecars;
    bool has_running = false;
    const Json& cs = MemberArray(status, "containerStatuses");
    for (size_t i = cs.size(); i-- > 0;) {
      const Json& c = cs[i];
      restarts.Add(c);
      const Json& state = MemberObject(c, "state");
      const Json* waiting = FindMember(state, "waiting");
      const Json* term = FindMember(state, "terminated");
      if (waiting && !StringMember(*waiting, "reason").empty()) {
        reason = std::string(StringMember(*waiting, "reason"));
      } else if (term) {
        reason = TerminatedReason(*term, "");
      } else if (BoolMember(c, "ready") && FindMember(state, "running")) {
        has_running = true;
        ++ready;
      }
    }
    if (reason == "Completed" && has_running) {
      reason = ConditionTrue(status, "Ready") ? "Running" : "NotReady";
    }
  }
  const bool deleting = FindMember(meta, "deletionTimestamp") != nullptr;
  if (deleting && StringMember(status, "reason") == "NodeLost") {
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
  if (const Json& ips = MemberArray(status, "podIPs"); !ips.empty()) ip = std::string(StringMember(ips[0], "ip"));
  if (ip.empty()) ip = std::string(StringMember(status, "podIP"));
  auto or_none = [](std::string s) { return s.empty() ? std::string("<none>") : s; };
  std::string gates = "<none>";
  if (const Json& rg = MemberArray(spec, "readinessGates"); !rg.empty()) {
    int64_t true_count = 0;
    for (const Json& g : rg) {
      if (ConditionTrue(status, std::string(StringMember(g, "conditionType")).c_str())) ++true_count;
    }
    gates = absl::StrCat(true_count, "/", rg.size());
  }
  cells.push_back(or_none(ip));
  cells.push_back(or_none(std::string(StringMember(spec, "nodeName"))));
  cells.push_back(or_none(std::string(StringMember(status, "nominatedNodeName"))));
  cells.push_back(gates);
  return cells;
}

}  // namespace batchd::api::core_v1::internal
