#include "agent/internal/pod_status.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/core/v1/restart_generation.h"
#include "api/json_access.h"
#include "api/meta/time_util.h"

namespace batchd::agent::internal {

using api::Json;
using State = ContainerStatus::State;

namespace {

std::string Time(absl::Time t) { return api::meta::FormatRfc3339(t); }
bool Set(absl::Time t) { return t != absl::InfinitePast(); }

const ContainerStatus* Find(const std::vector<ContainerStatus>& v, const std::string& name) {
  for (const auto& c : v) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

Json Terminated(const std::string& cid, int exit_code, int signal, const std::string& reason,
                const std::string& message, absl::Time started, absl::Time finished) {
  Json t = {{"exitCode", exit_code}, {"reason", reason}};
  if (signal) t["signal"] = signal;
  if (!message.empty()) t["message"] = message;
  if (Set(started)) t["startedAt"] = Time(started);
  if (Set(finished)) t["finishedAt"] = Time(finished);
  if (!cid.empty()) t["containerID"] = cid;
  return t;
}

Json ContainerJson(const Json& cspec, const ContainerStatus* cs, const std::string& uid,
                   const std::string& waiting_reason, const StatusInput& in) {
  std::string name = cspec.value("name", "");
  std::string image = cspec.value("image", "");
  Json out = {{"name", name}, {"image", image}, {"imageID", image}, {"ready", false},
              {"restartCount", 0}, {"started", false}, {"lastState", Json::object()}};
  if (in.config_error || !cs) {
    Json w = {{"reason", in.config_error ? "CreateContainerConfigError" : waiting_reason}};
    if (in.config_error) w["message"] = *in.config_error;
    out["state"] = {{"waiting", w}};
    return out;
  }
  std::string cid = absl::StrCat("batchd://", uid, "/", name);
  bool ran = Set(cs->started_at) || cs->state != State::kWaiting;
  if (ran) out["containerID"] = cid;
  out["ready"] = cs->ready;
  out["restartCount"] = cs->restart_count;
  out["started"] = cs->started;
  if (cs->last_terminated) {
    const TerminatedState& t = *cs->last_terminated;
    out["lastState"] = {{"terminated", Terminated(cid, t.exit_code, t.signal, t.reason, t.message,
                                                  t.started_at, t.finished_at)}};
  }
  switch (cs->state) {
    case State::kWaiting: {
      Json w = {{"reason", cs->reason.empty() ? waiting_reason : cs->reason}};
      if (!cs->message.empty()) w["message"] = cs->message;
      out["state"] = {{"waiting", w}};
      break;
    }
    case State::kRunning:
      out["state"] = {{"running", {{"startedAt", Time(Set(cs->started_at) ? cs->started_at
                                                                          : in.now)}}}};
      break;
    case State::kTerminated:
      out["state"] = {{"terminated", Terminated(cid, cs->exit_code, cs->signal, cs->reason,
                                                cs->message, cs->started_at, cs->finished_at)}};
      break;
  }
  return out;
}

void SetCondition(Json& conds, const Json& old, const std::string& type, bool status,
                  const std::string& reason, const std::string& message, absl::Time now) {
  std::string s = status ? "True" : "False";
  std::string ltt = Time(now);
  if (old.is_array()) {
    for (const Json& c : old) {
      if (c.value("type", "") == type && c.value("status", "") == s &&
          c.contains("lastTransitionTime")) {
        ltt = c["lastTransitionTime"];
      }
    }
  }
  Json c = {{"type", type}, {"status", s}, {"lastTransitionTime", ltt}};
  if (!reason.empty()) c["reason"] = reason;
  if (!message.empty()) c["message"] = message;
  conds.push_back(std::move(c));
}

bool InitDone(const Json& cspec, const ContainerStatus* cs) {
  if (!cs) return false;
  if (cspec.value("restartPolicy", "") == "Always")
    return cs->started || cs->state == State::kRunning;
  return cs->state == State::kTerminated && cs->exit_code == 0;
}

// Controller-driven restarts: between two runs of the containers (a failed
// one waits for the controller, or they stop or are held for the next
// generation).
// A container has a run before the current one (a restart, in place or by policy).
bool RanBefore(const PodSandboxStatus& rt) {
  for (const auto* list : {&rt.init, &rt.app}) {
    for (const ContainerStatus& c : *list) {
      if (c.restart_count > 0) return true;
    }
  }
  return false;
}

bool BetweenRuns(const PodSandboxStatus& rt) {
  return rt.generation >= 0 && (rt.failed || rt.restarting || rt.held);
}

// Some container has run in this pod (a pod that ran does not go back to Pending).
bool Ran(const PodSandboxStatus& rt) {
  for (const auto* list : {&rt.init, &rt.app}) {
    for (const ContainerStatus& c : *list) {
      if (c.state != State::kWaiting || c.last_terminated || c.restart_count > 0) return true;
    }
  }
  return false;
}

// The batchd.io/RestartGeneration condition (api/core/v1/restart_generation.h).
void SetGenerationCondition(Json& conds, const Json& old, const PodSandboxStatus& rt,
                            absl::Time now) {
  namespace core = api::core_v1;
  std::string message = absl::StrCat(core::kGenerationMessagePrefix, rt.generation);
  const char* reason = core::kGenerationRunning;
  if (rt.failed) {
    reason = core::kGenerationContainerFailed;
    for (const auto* list : {&rt.init, &rt.app}) {
      for (const ContainerStatus& c : *list) {
        if (c.state == State::kTerminated && c.exit_code != 0) {
          absl::StrAppend(&message, ": container ", c.name, " exited with code ", c.exit_code);
          break;
        }
      }
    }
  } else if (rt.restarting) {
    reason = core::kGenerationRestarting;
  } else if (rt.held) {
    reason = core::kGenerationHeld;
  }
  SetCondition(conds, old, core::kRestartGenerationCondition, !BetweenRuns(rt), reason, message,
               now);
}

std::vector<std::string> Names(const Json& list) {
  std::vector<std::string> v;
  if (list.is_array()) {
    for (const Json& c : list) v.push_back(c.value("name", ""));
  }
  return v;
}

}  // namespace

std::string ComputePhase(const Json& spec, const PodSandboxStatus& rt, bool terminal) {
  std::string policy = spec.value("restartPolicy", "Always");
  const Json& inits = api::Member(spec, "initContainers");
  bool init_pending = false;
  if (inits.is_array()) {
    for (const Json& c : inits) {
      const ContainerStatus* cs = Find(rt.init, c.value("name", ""));
      bool sidecar = c.value("restartPolicy", "") == "Always";
      if (!sidecar && cs && cs->state == State::kTerminated && cs->exit_code != 0 &&
          (policy == "Never" || terminal) && (terminal || !BetweenRuns(rt))) {
        return "Failed";
      }
      if (!InitDone(c, cs)) init_pending = true;
    }
  }
  if (init_pending) {
    if (terminal) return "Failed";
    // Re-running its init containers in place, a pod stays Running.
    return rt.generation >= 0 && RanBefore(rt) ? "Running" : "Pending";
  }
  int running = 0, waiting = 0, stopped = 0, succeeded = 0;
  for (const std::string& name : Names(api::Member(spec, "containers"))) {
    const ContainerStatus* cs = Find(rt.app, name);
    if (!cs || cs->state == State::kWaiting) {
      if (cs && cs->last_terminated) {
        ++stopped;
        if (cs->last_terminated->exit_code == 0) ++succeeded;
      } else {
        ++waiting;
      }
    } else if (cs->state == State::kRunning) {
      ++running;
    } else {
      ++stopped;
      if (cs->exit_code == 0) ++succeeded;
    }
  }
  if (terminal) {
    if (running == 0 && waiting == 0 && stopped > 0 && stopped == succeeded) return "Succeeded";
    return "Failed";
  }
  if (!terminal && BetweenRuns(rt)) return Ran(rt) ? "Running" : "Pending";
  if (waiting > 0) return rt.generation >= 0 && RanBefore(rt) ? "Running" : "Pending";
  if (running > 0) return "Running";
  if (stopped == 0) return "Pending";
  if (policy == "Always") return "Running";
  if (stopped == succeeded) return "Succeeded";
  if (policy == "Never") return "Failed";
  return "Running";
}

Json ComputePodStatus(const Json& pod, const PodSandboxStatus& rt, const StatusInput& in) {
  const Json& spec = api::Member(pod, "spec");
  Json old = api::Member(pod, "status");
  Json st = old.is_object() ? old : Json::object();
  std::string uid = api::Member(pod, "metadata").value("uid", "");
  std::string old_phase = st.value("phase", "");
  std::string phase;
  if (old_phase == "Succeeded" || old_phase == "Failed") {
    phase = old_phase;
  } else if (in.failed_reason) {
    phase = "Failed";
    st["reason"] = in.failed_reason->first;
    st["message"] = in.failed_reason->second;
  } else if (in.config_error || !rt.found) {
    phase = "Pending";
  } else {
    phase = ComputePhase(spec, rt, rt.finished);
  }
  st["phase"] = phase;
  st["hostIP"] = in.host_ip;
  st["hostIPs"] = Json::array({{{"ip", in.host_ip}}});
  st["podIP"] = in.host_ip;
  st["podIPs"] = Json::array({{{"ip", in.host_ip}}});
  if (!st.contains("startTime")) st["startTime"] = Time(in.now);

  bool has_init = api::Member(spec, "initContainers").is_array() && !spec["initContainers"].empty();
  Json init_statuses = Json::array();
  std::vector<std::string> not_init;
  if (has_init) {
    for (const Json& c : spec["initContainers"]) {
      const ContainerStatus* cs = rt.found ? Find(rt.init, c.value("name", "")) : nullptr;
      init_statuses.push_back(ContainerJson(c, cs, uid, "PodInitializing", in));
      if (!InitDone(c, cs)) not_init.push_back(c.value("name", ""));
    }
  }
  Json app_statuses = Json::array();
  std::vector<std::string> unready;
  for (const Json& c : api::Member(spec, "containers")) {
    const ContainerStatus* cs = rt.found ? Find(rt.app, c.value("name", "")) : nullptr;
    std::string waiting = not_init.empty() ? "ContainerCreating" : "PodInitializing";
    app_statuses.push_back(ContainerJson(c, cs, uid, waiting, in));
    if (!cs || !cs->ready) unready.push_back(c.value("name", ""));
  }
  if (has_init) {
    st["initContainerStatuses"] = init_statuses;
  } else {
    st.erase("initContainerStatuses");
  }
  st["containerStatuses"] = app_statuses;

  const Json& old_conds = api::Member(old, "conditions");
  Json conds = Json::array();
  bool terminal = phase == "Succeeded" || phase == "Failed";
  SetCondition(conds, old_conds, "PodReadyToStartContainers", rt.found, "", "", in.now);
  SetCondition(conds, old_conds, "Initialized", not_init.empty(),
               not_init.empty() ? "" : "ContainersNotInitialized",
               not_init.empty() ? ""
                                : absl::StrCat("containers with incomplete status: [",
                                               absl::StrJoin(not_init, " "), "]"),
               in.now);
  std::string why = terminal ? "PodCompleted" : "ContainersNotReady";
  std::string msg = absl::StrCat("containers with unready status: [",
                                 absl::StrJoin(unready, " "), "]");
  bool ready = unready.empty() && !terminal;
  SetCondition(conds, old_conds, "Ready", ready, ready ? "" : why,
               ready || terminal ? "" : msg, in.now);
  SetCondition(conds, old_conds, "ContainersReady", ready, ready ? "" : why,
               ready || terminal ? "" : msg, in.now);
  SetCondition(conds, old_conds, "PodScheduled", true, "", "", in.now);
  if (rt.found && rt.generation >= 0) SetGenerationCondition(conds, old_conds, rt, in.now);
  // Limits the shim could not apply (a host without usable cgroups).
  const bool limits_warned = rt.found && !rt.limits_warning.empty();
  if (limits_warned) {
    SetCondition(conds, old_conds, kResourceLimitsCondition, false, "CgroupLimitsNotApplied",
                 rt.limits_warning, in.now);
  }
  // A pod the agent evicted (disk pressure, an emptyDir past its sizeLimit)
  // gets the kubelet's DisruptionTarget condition.
  const bool evicted = phase == "Failed" && in.failed_reason && in.failed_reason->first == "Evicted";
  if (evicted) {
    SetCondition(conds, old_conds, "DisruptionTarget", true, "TerminationByKubelet",
                 in.failed_reason->second, in.now);
  }
  // Keep conditions others own (DisruptionTarget, readiness gates...).
  if (old_conds.is_array()) {
    for (const Json& c : old_conds) {
      std::string t = c.value("type", "");
      if (evicted && t == "DisruptionTarget") continue;
      if (t != "PodReadyToStartContainers" && t != "Initialized" && t != "Ready" &&
          t != "ContainersReady" && t != "PodScheduled" &&
          !(t == kResourceLimitsCondition && limits_warned) &&
          !(t == api::core_v1::kRestartGenerationCondition && rt.found && rt.generation >= 0)) {
        conds.push_back(c);
      }
    }
  }
  st["conditions"] = conds;
  return st;
}

}  // namespace batchd::agent::internal
