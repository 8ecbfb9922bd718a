#include "controllers/nodelifecycle/nodelifecycle.h"

#include <algorithm>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "api/core/v1/pod_view.h"
#include "api/core/v1/taint.h"
#include "api/json_access.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "api/meta/time_util.h"
#include "common/status_macros.h"
#include "registry/errors.h"

namespace batchd::controllers {

using reconcile::Controller;
using reconcile::ControllerContext;
using reconcile::Reconciler;
using reconcile::Result;

using api::Json;
using client::ObjectRef;

namespace {

constexpr char kSimulatedAnnotation[] = "batchd.io/simulated";

std::string ReadyStatus(const Json& node) {
  return std::string(api::meta::ConditionStatus(node, "Ready"));
}

bool IsManagedTaint(const Json& t) {
  const std::string_view key = api::StringMember(t, "key");
  const std::string_view effect = api::StringMember(t, "effect");
  return (key == kUnreachableTaint || key == kNotReadyTaint) &&
         (effect == "NoSchedule" || effect == "NoExecute");
}

// Marks every condition Unknown (or adds Ready=Unknown); false when nothing changed.
bool MarkUnknown(Json& node, absl::Time now) {
  std::string ts = api::meta::FormatRfc3339(now);
  bool changed = false;
  if (api::meta::FindCondition(node, "Ready") == nullptr) {
    changed = api::meta::SetCondition(node, api::meta::ConditionShape::kNode,
                                      {"Ready", api::meta::kConditionUnknown,
                                       "NodeStatusNeverUpdated", "Kubelet never posted node status."},
                                      now);
  }
  for (Json& c : node["status"]["conditions"]) {
    if (c.value("status", "") == "Unknown") continue;
    c["status"] = "Unknown";
    c["reason"] = "NodeStatusUnknown";
    c["message"] = "Kubelet stopped posting node status.";
    c["lastTransitionTime"] = ts;
    changed = true;
  }
  return changed;
}

// Undoes MarkUnknown once the node heartbeats again; false when nothing changed.
bool MarkRecovered(Json& node, absl::Time now) {
  std::string ts = api::meta::FormatRfc3339(now);
  bool changed = false;
  for (Json& c : node["status"]["conditions"]) {
    std::string reason = c.value("reason", "");
    if (c.value("status", "") != "Unknown" ||
        (reason != "NodeStatusUnknown" && reason != "NodeStatusNeverUpdated")) {
      continue;
    }
    bool ready = c.value("type", "") == "Ready";
    c["status"] = ready ? "True" : "False";
    c["reason"] = ready ? "KubeletReady" : "KubeletRecovered";
    c["message"] = ready ? "kubelet is posting ready status" : "node lease renewed";
    c["lastTransitionTime"] = ts;
    c["lastHeartbeatTime"] = ts;
    changed = true;
  }
  return changed;
}

// Makes the node's managed taints those for `ready`; false when nothing changed.
bool SetTaints(Json& node, const std::string& ready, absl::Time now) {
  std::string want_key = ready == "Unknown" ? kUnreachableTaint
                         : ready == "False" ? kNotReadyTaint
                                            : "";
  Json& spec = node["spec"];
  if (!spec.is_object()) spec = Json::object();
  Json taints = spec.value("taints", Json::array());
  Json out = Json::array();
  std::set<std::string> have;
  for (const Json& t : taints) {
    if (IsManagedTaint(t) && api::StringMember(t, "key") != want_key) continue;
    if (IsManagedTaint(t)) have.insert(std::string(api::StringMember(t, "effect")));
    out.push_back(t);
  }
  if (!want_key.empty()) {
    for (const char* effect : {"NoSchedule", "NoExecute"}) {
      if (have.count(effect)) continue;
      out.push_back({{"key", want_key}, {"effect", effect},
                     {"timeAdded", api::meta::FormatRfc3339(now)}});
    }
  }
  if (out == taints) return false;
  if (out.empty()) {
    spec.erase("taints");
  } else {
    spec["taints"] = out;
  }
  return true;
}

class NodeLifecycle : public Reconciler {
 public:
  NodeLifecycle(ControllerContext& ctx, NodeLifecycleOptions opts)
      : ctx_(ctx),
        opts_(std::move(opts)),
        nodes_(ctx.informers.For("", "v1", "nodes")),
        leases_(ctx.informers.For("coordination.k8s.io", "v1", "leases")),
        pods_(ctx.informers.For("", "v1", "pods")) {}

  void Register(std::shared_ptr<NodeLifecycle> self);
  absl::StatusOr<Result> Reconcile(const std::string& name) override;

 private:
  struct Health {
    std::string signal;
    absl::Time probe;
  };
  void OnPod(const ObjectRef& pod, bool deleted);
  // Observes the node's heartbeat signal; returns when it was last seen changing.
  absl::Time Probe(const Json& node);
  absl::StatusOr<Json> Sync(const Json& node, bool expired);
  // Evicts due pods; returns the next due time (InfiniteFuture when none).
  absl::StatusOr<absl::Time> Evict(const Json& node, const std::string& ready);
  absl::Status EvictPod(const Json& pod);

  ControllerContext& ctx_;
  const NodeLifecycleOptions opts_;
  client::Informer& nodes_;
  client::Informer& leases_;
  client::Informer& pods_;
  Controller* controller_ = nullptr;

  absl::Mutex mu_;
  absl::flat_hash_map<std::string, Health> health_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> unhealthy_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, absl::flat_hash_set<std::string>> pods_by_node_ ABSL_GUARDED_BY(mu_);
};

void NodeLifecycle::Register(std::shared_ptr<NodeLifecycle> self) {
  controller_ = &ctx_.manager.AddController(
      std::make_unique<Controller>("nodelifecycle", *this, ctx_.clock));
  Controller* c = controller_;
  auto enqueue = [c](const ObjectRef& o) { c->queue().Add(api::meta::GetName(*o)); };
  nodes_.AddHandlers({enqueue, [enqueue](const ObjectRef&, const ObjectRef& n) { enqueue(n); },
                      [self](const ObjectRef& o) {
                        absl::MutexLock lock(&self->mu_);
                        self->health_.erase(api::meta::GetName(*o));
                      }});
  std::string lease_ns = opts_.lease_namespace;
  auto lease = [c, lease_ns](const ObjectRef& o) {
    if (api::meta::GetNamespace(*o) == lease_ns) c->queue().Add(api::meta::GetName(*o));
  };
  leases_.AddHandlers({lease, [lease](const ObjectRef&, const ObjectRef& n) { lease(n); }, {}});
  pods_.AddHandlers({[self](const ObjectRef& o) { self->OnPod(o, false); },
                     [self](const ObjectRef&, const ObjectRef& n) { self->OnPod(n, false); },
                     [self](const ObjectRef& o) { self->OnPod(o, true); }});
}

void NodeLifecycle::OnPod(const ObjectRef& pod, bool deleted) {
  const std::string node(api::core_v1::PodView::Parse(*pod).node_name);
  if (node.empty()) return;
  std::string key = client::Informer::KeyOf(*pod);
  bool enqueue = false;
  {
    absl::MutexLock lock(&mu_);
    auto& set = pods_by_node_[node];
    if (deleted) {
      set.erase(key);
      if (set.empty()) pods_by_node_.erase(node);
    } else {
      set.insert(key);
      enqueue = unhealthy_.contains(node);
    }
  }
  if (enqueue) controller_->queue().Add(node);
}

absl::Time NodeLifecycle::Probe(const Json& node) {
  std::string name = api::meta::GetName(node);
  std::string signal;
  if (ObjectRef lease = leases_.Get(opts_.lease_namespace, name)) {
    signal = std::string(api::AsString(api::MemberAt(*lease, {"spec", "renewTime"})));
  }
  if (const Json* ready = api::meta::FindCondition(node, "Ready")) {
    signal += "|";
    signal += api::StringMember(*ready, "lastHeartbeatTime");
  }
  absl::MutexLock lock(&mu_);
  auto it = health_.find(name);
  if (it == health_.end() || it->second.signal != signal) {
    health_[name] = Health{signal, ctx_.clock.Now()};
    return ctx_.clock.Now();
  }
  return it->second.probe;
}

// Writes the node's conditions and taints; returns the node as written.
absl::StatusOr<Json> NodeLifecycle::Sync(const Json& node, bool expired) {
  absl::Time now = ctx_.clock.Now();
  Json cur = node;
  Json status_copy = node;
  bool status_changed = expired ? MarkUnknown(status_copy, now) : MarkRecovered(status_copy, now);
  if (status_changed) {
    BATCHD_ASSIGN_OR_RETURN(cur, ctx_.client.UpdateStatus(nodes_.kind(), status_copy));
    if (expired) {
      ctx_.events.Event(cur, "Normal", "NodeNotReady",
                        absl::StrCat("Node ", api::meta::GetName(cur),
                                     " status is now: NodeNotReady"));
    }
  }
  Json spec_copy = cur;
  if (SetTaints(spec_copy, ReadyStatus(cur), now)) {
    BATCHD_ASSIGN_OR_RETURN(cur, ctx_.client.Update(nodes_.kind(), spec_copy));
  }
  return cur;
}

absl::Status NodeLifecycle::EvictPod(const Json& pod) {
  Json next = pod;
  std::string ts = api::meta::FormatRfc3339(ctx_.clock.Now());
  next["status"]["phase"] = "Failed";
  Json& conds = next["status"]["conditions"];
  if (!conds.is_array()) conds = Json::array();
  Json cond = {{"type", "DisruptionTarget"}, {"status", "True"},
               {"reason", "DeletionByTaintManager"}, {"message", "Taint manager: deleting pod"},
               {"lastTransitionTime", ts}, {"lastProbeTime", nullptr}};
  bool replaced = false;
  for (Json& c : conds) {
    if (c.value("type", "") == "DisruptionTarget") c = cond, replaced = true;
  }
  if (!replaced) conds.push_back(cond);
  auto written = ctx_.client.UpdateStatus(pods_.kind(), next);
  if (!written.ok()) return written.status();
  ctx_.events.Event(pod, "Normal", "TaintManagerEviction",
                    absl::StrCat("Marking for deletion Pod ", client::Informer::KeyOf(pod)));
  client::DeleteOptions opts;
  opts.precondition_uid = api::meta::GetUid(pod);
  return ctx_.client.Delete(pods_.kind(), api::meta::GetNamespace(pod), api::meta::GetName(pod),
                            opts);
}

absl::StatusOr<absl::Time> NodeLifecycle::Evict(const Json& node, const std::string& ready) {
  std::string key = ready == "Unknown" ? kUnreachableTaint : kNotReadyTaint;
  api::core_v1::Taint taint{key, "", api::core_v1::TaintEffect::kNoExecute, ""};
  for (const auto& t : api::core_v1::ParseTaints(node)) {
    if (t.key == key && t.effect == api::core_v1::TaintEffect::kNoExecute) taint = t;
  }
  absl::Time now = ctx_.clock.Now();
  auto parsed = api::meta::ParseRfc3339(taint.time_added);
  absl::Time added = parsed.ok() ? *parsed : now;
  std::vector<std::string> keys;
  {
    absl::MutexLock lock(&mu_);
    auto it = pods_by_node_.find(api::meta::GetName(node));
    if (it != pods_by_node_.end()) keys.assign(it->second.begin(), it->second.end());
  }
  std::sort(keys.begin(), keys.end());
  absl::Time next = absl::InfiniteFuture();
  absl::Status first_error;
  for (const auto& k : keys) {
    size_t slash = k.find('/');
    ObjectRef pod = pods_.Get(k.substr(0, slash), k.substr(slash + 1));
    if (!pod || api::meta::IsBeingDeleted(*pod)) continue;
    if (api::core_v1::PodView::Parse(*pod).terminal()) continue;
    auto tols = api::core_v1::ParseTolerations(api::MemberObject(*pod, "spec"));
    const api::core_v1::Toleration* tol = api::core_v1::FindToleration(tols, taint);
    if (tol != nullptr && !tol->toleration_seconds) continue;
    if (tol != nullptr) {
      absl::Time due = added + absl::Seconds(std::max<int64_t>(0, *tol->toleration_seconds));
      if (due > now) {
        next = std::min(next, due);
        continue;
      }
    }
    absl::Status st = EvictPod(*pod);
    if (!st.ok() && registry::GetPayload(st).reason != "NotFound" && first_error.ok()) {
      first_error = st;
    }
  }
  if (!first_error.ok()) return first_error;
  return next;
}

absl::StatusOr<Result> NodeLifecycle::Reconcile(const std::string& name) {
  ObjectRef ref = nodes_.Get("", name);
  if (!ref || api::meta::GetAnnotation(*ref, kSimulatedAnnotation).value_or("") == "true") {
    absl::MutexLock lock(&mu_);
    unhealthy_.erase(name);
    return Result::Done();
  }
  absl::Time now = ctx_.clock.Now();
  absl::Time expires = Probe(*ref) + opts_.grace;
  bool expired = now >= expires;
  BATCHD_ASSIGN_OR_RETURN(Json node, Sync(*ref, expired));
  std::string ready = ReadyStatus(node);
  bool unhealthy = ready == "Unknown" || ready == "False";
  {
    absl::MutexLock lock(&mu_);
    if (unhealthy) {
      unhealthy_.insert(name);
    } else {
      unhealthy_.erase(name);
    }
  }
  absl::Time next = expired ? absl::InfiniteFuture() : expires;
  if (unhealthy) {
    BATCHD_ASSIGN_OR_RETURN(absl::Time due, Evict(node, ready));
    next = std::min(next, due);
  }
  if (next == absl::InfiniteFuture()) return Result::Done();
  return Result::After(next - now);
}

}  // namespace

void AddNodeLifecycleController(ControllerContext& ctx, NodeLifecycleOptions opts) {
  auto c = std::make_shared<NodeLifecycle>(ctx, std::move(opts));
  c->Register(c);
}

}  // namespace batchd::controllers
