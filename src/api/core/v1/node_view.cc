#include "api/core/v1/node_view.h"

#include <string>

#include "api/json_access.h"
#include "api/meta/conditions.h"
#include "api/meta/time_util.h"
#include "api/resource/quantity.h"

namespace batchd::api::core_v1 {

namespace {

// The condition reasons and messages Kubernetes' node lifecycle controller
// and kubelet write (pkg/controller/nodelifecycle, pkg/kubelet/nodestatus).
constexpr char kNodeStatusUnknown[] = "NodeStatusUnknown";
constexpr char kNodeStatusNeverUpdated[] = "NodeStatusNeverUpdated";

// The array at `path` in `obj`, or nullptr (without creating it).
Json* MutableArrayOrNull(Json& obj, std::initializer_list<std::string_view> path) {
  Json* v = FindMutableMemberAt(obj, path);
  return v != nullptr && v->is_array() ? v : nullptr;
}

bool SameKeyAndEffect(const Json& entry, const Taint& taint) {
  return StringMember(entry, "key") == taint.key &&
         StringMember(entry, "effect") == TaintEffectName(taint.effect);
}

// A Taint object; value and timeAdded only when set.
Json TaintJson(const Taint& t) {
  Json j = {{"key", t.key}, {"effect", TaintEffectName(t.effect)}};
  if (!t.value.empty()) j["value"] = t.value;
  if (!t.time_added.empty()) j["timeAdded"] = t.time_added;
  return j;
}

}  // namespace

NodeView NodeView::Parse(const Json& node) {
  NodeView v;
  v.meta = meta::ObjectMetaView::Parse(node);
  const Json& spec = Member(node, "spec");
  v.unschedulable = BoolMember(spec, "unschedulable");
  v.taints = ParseTaintList(Member(spec, "taints"));
  const Json& status = Member(node, "status");
  const Json& conditions = MemberArray(status, "conditions");
  v.conditions.reserve(conditions.size());
  for (const Json& c : conditions) {
    if (!c.is_object()) continue;
    v.conditions.push_back(NodeConditionView{
        StringMember(c, "type"), StringMember(c, "status"), StringMember(c, "reason"),
        StringMember(c, "message"), StringMember(c, "lastHeartbeatTime"),
        StringMember(c, "lastTransitionTime")});
  }
  if (const Json& a = Member(status, "allocatable"); a.is_object()) v.allocatable = &a;
  if (const Json& c = Member(status, "capacity"); c.is_object()) v.capacity = &c;
  return v;
}

const NodeConditionView* NodeView::Condition(std::string_view type) const {
  for (const NodeConditionView& c : conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

std::string_view NodeView::ReadyStatus() const {
  const NodeConditionView* ready = Condition(kNodeReady);
  return ready == nullptr ? std::string_view() : ready->status;
}

std::vector<ResourceAmountView> NodeView::Allocatable() const {
  std::vector<ResourceAmountView> out;
  const Json* list = allocatable != nullptr ? allocatable : capacity;
  if (list == nullptr) return out;
  out.reserve(list->size());
  for (auto it = list->begin(); it != list->end(); ++it) {
    absl::StatusOr<Quantity> q = Quantity::FromJson(*it);
    if (!q.ok()) continue;
    out.push_back(ResourceAmountView{it.key(), Amount::FromQuantity(*q)});
  }
  return out;
}

bool MarkNodeConditionsUnknown(Json& node, absl::Time now) {
  bool changed = false;
  if (meta::FindCondition(node, kNodeReady) == nullptr) {
    changed = meta::SetCondition(node, meta::ConditionShape::kNode,
                                 {kNodeReady, meta::kConditionUnknown, kNodeStatusNeverUpdated,
                                  "Kubelet never posted node status."},
                                 now);
  }
  Json* conditions = MutableArrayOrNull(node, {"status", "conditions"});
  if (conditions == nullptr) return changed;
  const std::string ts = meta::FormatRfc3339(now);
  for (Json& c : *conditions) {
    if (!c.is_object() || StringMember(c, "status") == meta::kConditionUnknown) continue;
    c["status"] = meta::kConditionUnknown;
    c["reason"] = kNodeStatusUnknown;
    c["message"] = "Kubelet stopped posting node status.";
    c["lastTransitionTime"] = ts;
    changed = true;
  }
  return changed;
}

bool RestoreNodeConditions(Json& node, absl::Time now) {
  Json* conditions = MutableArrayOrNull(node, {"status", "conditions"});
  if (conditions == nullptr) return false;
  const std::string ts = meta::FormatRfc3339(now);
  bool changed = false;
  for (Json& c : *conditions) {
    if (!c.is_object() || StringMember(c, "status") != meta::kConditionUnknown) continue;
    const std::string_view reason = StringMember(c, "reason");
    if (reason != kNodeStatusUnknown && reason != kNodeStatusNeverUpdated) continue;
    const bool ready = StringMember(c, "type") == kNodeReady;
    c["status"] = ready ? meta::kConditionTrue : meta::kConditionFalse;
    c["reason"] = ready ? "KubeletReady" : "KubeletRecovered";
    c["message"] = ready ? "kubelet is posting ready status" : "node lease renewed";
    c["lastTransitionTime"] = ts;
    c["lastHeartbeatTime"] = ts;
    changed = true;
  }
  return changed;
}

bool RemoveNodeTaints(Json& node, const std::vector<Taint>& taints) {
  Json* current = MutableArrayOrNull(node, {"spec", "taints"});
  if (current == nullptr) return false;
  Json kept = Json::array();
  for (const Json& entry : *current) {
    bool drop = false;
    for (const Taint& t : taints) drop = drop || SameKeyAndEffect(entry, t);
    if (!drop) kept.push_back(entry);
  }
  if (kept.size() == current->size()) return false;
  if (kept.empty()) {
    node["spec"].erase("taints");
  } else {
    *current = std::move(kept);
  }
  return true;
}

bool AddMissingNodeTaints(Json& node, const std::vector<Taint>& taints) {
  bool changed = false;
  for (const Taint& t : taints) {
    const Json* current = MutableArrayOrNull(node, {"spec", "taints"});
    bool have = false;
    if (current != nullptr) {
      for (const Json& entry : *current) have = have || SameKeyAndEffect(entry, t);
    }
    if (have) continue;
    MutableArray(MutableObject(node, "spec"), "taints").push_back(TaintJson(t));
    changed = true;
  }
  return changed;
}

void MarkPodEvictedByTaintManager(Json& pod, absl::Time now) {
  Json& status = MutableObject(pod, "status");
  status["phase"] = "Failed";
  // Not SetCondition's kPod rule: the taint manager stamps the transition
  // time of every eviction, even over an earlier DisruptionTarget=True.
  const Json cond = {{"type", "DisruptionTarget"},
                     {"status", meta::kConditionTrue},
                     {"reason", "DeletionByTaintManager"},
                     {"message", "Taint manager: deleting pod"},
                     {"lastTransitionTime", meta::FormatRfc3339(now)},
                     {"lastProbeTime", nullptr}};
  Json& conditions = MutableArray(status, "conditions");
  bool replaced = false;
  for (Json& c : conditions) {
    if (StringMember(c, "type") != "DisruptionTarget") continue;
    c = cond;
    replaced = true;
  }
  if (!replaced) conditions.push_back(cond);
}

}  // namespace batchd::api::core_v1
