#include "api/core/v1/pod_view.h"

#include <algorithm>

#include "api/json_access.h"
#include "api/meta/conditions.h"
#include "api/meta/time_util.h"

namespace batchd::api::core_v1 {

namespace {

std::vector<ContainerStatusView> ParseContainerStatuses(const Json& statuses) {
  std::vector<ContainerStatusView> out;
  if (!statuses.is_array()) return out;
  out.reserve(statuses.size());
  for (const Json& s : statuses) {
    ContainerStatusView v;
    v.name = StringMember(s, "name");
    v.ready = BoolMember(s, "ready");
    v.restart_count = static_cast<int32_t>(IntMember(s, "restartCount"));
    v.state = ContainerStateView::Parse(Member(s, "state"));
    v.last_state = ContainerStateView::Parse(Member(s, "lastState"));
    out.push_back(v);
  }
  return out;
}

}  // namespace

PodPhase ParsePodPhase(std::string_view phase) {
  if (phase == "Pending") return PodPhase::kPending;
  if (phase == "Running") return PodPhase::kRunning;
  if (phase == "Succeeded") return PodPhase::kSucceeded;
  if (phase == "Failed") return PodPhase::kFailed;
  return PodPhase::kUnknown;
}

RestartPolicy ParseRestartPolicy(std::string_view policy) {
  if (policy == "OnFailure") return RestartPolicy::kOnFailure;
  if (policy == "Never") return RestartPolicy::kNever;
  return RestartPolicy::kAlways;
}

ContainerStateView ContainerStateView::Parse(const Json& state) {
  ContainerStateView v;
  if (const Json& t = Member(state, "terminated"); t.is_object()) {
    v.kind = Kind::kTerminated;
    v.reason = StringMember(t, "reason");
    v.message = StringMember(t, "message");
    v.exit_code = static_cast<int32_t>(IntMember(t, "exitCode"));
    v.started_at = StringMember(t, "startedAt");
    v.finished_at = StringMember(t, "finishedAt");
  } else if (const Json& r = Member(state, "running"); r.is_object()) {
    v.kind = Kind::kRunning;
    v.started_at = StringMember(r, "startedAt");
  } else if (const Json& w = Member(state, "waiting"); w.is_object()) {
    v.kind = Kind::kWaiting;
    v.reason = StringMember(w, "reason");
    v.message = StringMember(w, "message");
  }
  return v;
}

PodView PodView::Parse(const Json& pod) {
  PodView v;
  v.meta = meta::ObjectMetaView::Parse(pod);
  const Json& spec = Member(pod, "spec");
  v.node_name = StringMember(spec, "nodeName");
  v.hostname = StringMember(spec, "hostname");
  v.subdomain = StringMember(spec, "subdomain");
  v.scheduler_name = StringMember(spec, "schedulerName");
  v.priority_class_name = StringMember(spec, "priorityClassName");
  v.priority = static_cast<int32_t>(IntMember(spec, "priority"));
  v.restart_policy = ParseRestartPolicy(StringMember(spec, "restartPolicy"));
  if (const Json& g = Member(spec, "terminationGracePeriodSeconds"); g.is_number()) {
    v.termination_grace_period_seconds = AsInt(g);
  }
  v.active_deadline_seconds = AsOptionalInt(Member(spec, "activeDeadlineSeconds"));
  v.scheduling_gated = !MemberArray(spec, "schedulingGates").empty();
  if (const Json* g = FindMember(spec, "schedulingGates"); g != nullptr && g->is_array()) {
    v.scheduling_gates = g;
  }
  const Json& status = Member(pod, "status");
  v.phase = ParsePodPhase(StringMember(status, "phase"));
  v.reason = StringMember(status, "reason");
  v.message = StringMember(status, "message");
  v.start_time = StringMember(status, "startTime");
  v.pod_ip = StringMember(status, "podIP");
  v.host_ip = StringMember(status, "hostIP");
  if (const Json& c = Member(status, "conditions"); c.is_array()) v.conditions = &c;
  v.container_statuses = ParseContainerStatuses(Member(status, "containerStatuses"));
  v.init_container_statuses = ParseContainerStatuses(Member(status, "initContainerStatuses"));
  if (const Json& c = Member(spec, "containers"); c.is_array()) v.containers = &c;
  if (const Json& c = Member(spec, "initContainers"); c.is_array()) v.init_containers = &c;
  if (const Json& s = Member(spec, "nodeSelector"); s.is_object()) v.node_selector = &s;
  if (const Json& t = Member(spec, "tolerations"); t.is_array()) v.tolerations = &t;
  if (const Json& a = MemberAt(spec, {"affinity", "nodeAffinity"}); a.is_object()) {
    v.node_affinity = &a;
  }
  return v;
}

const ContainerStatusView* PodView::ContainerStatus(std::string_view name) const {
  for (const ContainerStatusView& s : container_statuses) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

std::string_view PodView::ConditionStatus(std::string_view type) const {
  if (conditions == nullptr) return "";
  const Json* c = meta::FindConditionIn(*conditions, type);
  return c == nullptr ? std::string_view() : StringMember(*c, "status");
}

ContainerSpecView ContainerSpecView::Parse(const Json& container) {
  ContainerSpecView v;
  v.name = StringMember(container, "name");
  v.image = StringMember(container, "image");
  const Json& resources = Member(container, "resources");
  if (const Json& r = Member(resources, "requests"); r.is_object()) v.requests = &r;
  if (const Json& l = Member(resources, "limits"); l.is_object()) v.limits = &l;
  return v;
}

bool PodView::HasCondition(std::string_view type, std::string_view status) const {
  if (conditions == nullptr) return false;
  for (const Json& c : *conditions) {
    if (StringMember(c, "type") == type && StringMember(c, "status") == status) return true;
  }
  return false;
}

std::optional<absl::Time> PodView::ConditionTransitionTime(std::string_view type,
                                                           std::string_view status) const {
  if (conditions == nullptr) return std::nullopt;
  for (const Json& c : *conditions) {
    if (StringMember(c, "type") != type || StringMember(c, "status") != status) continue;
    if (auto t = meta::ParseOptionalRfc3339(StringMember(c, "lastTransitionTime"))) return t;
  }
  return std::nullopt;
}

bool PodView::HasSchedulingGate(std::string_view name) const {
  if (scheduling_gates == nullptr) return false;
  for (const Json& g : *scheduling_gates) {
    if (StringMember(g, "name") == name) return true;
  }
  return false;
}

Json UngatePatch(const PodView& pod, std::string_view gate, const Json& node_selector) {
  Json gates = Json::array();
  if (pod.scheduling_gates != nullptr) {
    for (const Json& g : *pod.scheduling_gates) {
      if (StringMember(g, "name") != gate) gates.push_back(g);
    }
  }
  Json spec = {{"schedulingGates", gates.empty() ? Json(nullptr) : std::move(gates)}};
  if (node_selector.is_object() && !node_selector.empty()) spec["nodeSelector"] = node_selector;
  return {{"spec", std::move(spec)}};
}

bool AddSchedulingGate(Json& pod, std::string_view name) {
  Json& gates = MutableArray(MutableObject(pod, "spec"), "schedulingGates");
  for (const Json& g : gates) {
    if (StringMember(g, "name") == name) return false;
  }
  gates.push_back({{"name", std::string(name)}});
  return true;
}

bool RemoveSchedulingGate(Json& pod, std::string_view name) {
  Json* spec = FindMutableMemberAt(pod, {"spec"});
  if (spec == nullptr || !spec->is_object()) return false;
  auto it = spec->find("schedulingGates");
  if (it == spec->end() || !it->is_array()) return false;
  bool removed = false;
  for (auto g = it->begin(); g != it->end();) {
    if (StringMember(*g, "name") == name) {
      g = it->erase(g);
      removed = true;
    } else {
      ++g;
    }
  }
  if (it->empty()) spec->erase(it);
  return removed;
}

void MergeNodeSelector(Json& pod, const Json& labels) {
  if (!labels.is_object() || labels.empty()) return;
  Json& selector = MutableObject(MutableObject(pod, "spec"), "nodeSelector");
  for (auto it = labels.begin(); it != labels.end(); ++it) selector[it.key()] = it.value();
}

void MergeTolerations(Json& pod, const Json& tolerations) {
  if (!tolerations.is_array() || tolerations.empty()) return;
  Json& list = MutableArray(MutableObject(pod, "spec"), "tolerations");
  for (const Json& t : tolerations) {
    if (std::find(list.begin(), list.end(), t) == list.end()) list.push_back(t);
  }
}

}  // namespace batchd::api::core_v1
