#include "controllers/nodelifecycle/nodelifecycle.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "api/coordination/v1/lease_view.h"
#include "api/core/v1/node_fence.h"
#include "api/core/v1/node_view.h"
#include "api/core/v1/pod_view.h"
#include "api/core/v1/taint.h"
#include "api/json_access.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "api/meta/time_util.h"
#include "common/logging.h"
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

using api::core_v1::NodeView;
using api::core_v1::PodView;
using api::core_v1::Taint;
using api::core_v1::TaintEffect;

// The taint a node whose Ready condition has status `ready` gets: unreachable
// for Unknown, not-ready for False, none ("") for True.
std::string_view HealthTaintKey(std::string_view ready) {
  return ready == api::meta::kConditionUnknown ? kUnreachableTaint
         : ready == api::meta::kConditionFalse ? kNotReadyTaint
                                               : "";
}

bool Unhealthy(std::string_view ready) {
  return ready == api::meta::kConditionUnknown || ready == api::meta::kConditionFalse;
}

// What may happen to the NoExecute taint the node's readiness calls for.
enum class NoExecute { kAdd, kKeep, kRemove };

// Makes the node's unreachable / not-ready taints those for `ready`: the
// NoSchedule one always, the NoExecute one as `no_execute` says (kKeep:
// neither added nor removed); the other key's taints go. Pressure
// conditions get their NoSchedule taints. False when nothing changed.
bool SetHealthTaints(Json& node, std::string_view ready, absl::Time now, NoExecute no_execute) {
  const std::string_view want = HealthTaintKey(ready);
  const std::string added = api::meta::FormatRfc3339(now);
  std::vector<Taint> stale;
  std::vector<Taint> wanted;
  for (const char* key : {kUnreachableTaint, kNotReadyTaint}) {
    for (TaintEffect effect : {TaintEffect::kNoSchedule, TaintEffect::kNoExecute}) {
      const Taint t{key, "", effect, added};
      if (key != want) {
        stale.push_back(t);
      } else if (effect == TaintEffect::kNoSchedule || no_execute == NoExecute::kAdd) {
        wanted.push_back(t);
      } else if (no_execute == NoExecute::kRemove) {
        stale.push_back(t);
      }
    }
  }
  const NodeView view = NodeView::Parse(node);
  for (const auto& [type, key] : {std::pair{"DiskPressure", kDiskPressureTaint},
                                  std::pair{"MemoryPressure", kMemoryPressureTaint},
                                  std::pair{"PIDPressure", kPidPressureTaint}}) {
    const api::core_v1::NodeConditionView* c = view.Condition(type);
    const Taint t{key, "", TaintEffect::kNoSchedule, added};
    (c != nullptr && c->status == api::meta::kConditionTrue ? wanted : stale).push_back(t);
  }
  bool changed = api::core_v1::RemoveNodeTaints(node, stale);
  if (api::core_v1::AddMissingNodeTaints(node, wanted)) changed = true;
  return changed;
}

bool HasHealthNoExecute(const NodeView& node) {
  for (const Taint& t : node.taints) {
    if (t.effect == TaintEffect::kNoExecute &&
        (t.key == kUnreachableTaint || t.key == kNotReadyTaint)) {
      return true;
    }
  }
  return false;
}

std::string ZoneOf(const NodeView& node) {
  if (auto z = node.meta.Label("topology.kubernetes.io/zone")) return std::string(*z);
  if (auto z = node.meta.Label("failure-domain.beta.kubernetes.io/zone")) return std::string(*z);
  return "";
}

enum class ZoneState { kNormal, kPartialDisruption, kFullDisruption };

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
  absl::Time Probe(const NodeView& node);
  absl::StatusOr<Json> SyncStatus(const Json& node, const std::string& name, bool expired);
  // Per zone (non-simulated nodes; `name` counted as `ready`): its state.
  std::map<std::string, ZoneState> ZoneStates(const std::string& name, bool ready);
  // Decides the node's NoExecute health taint; `retry` is when to look again.
  NoExecute DecideNoExecute(const NodeView& node, bool unhealthy, absl::Time* retry);
  // Evicts due pods; returns the next due time (InfiniteFuture when none).
  // `fence`: the period the node's agent fences its pods after (node_fence.h).
  absl::StatusOr<absl::Time> Evict(const NodeView& node, std::string_view ready,
                                   std::optional<absl::Duration> fence);
  absl::Status EvictPod(const Json& pod, const PodView& view);

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
  // Per zone: when the next NoExecute taint may be added (token bucket, burst 1).
  std::map<std::string, absl::Time> zone_next_taint_ ABSL_GUARDED_BY(mu_);
  bool all_disrupted_ ABSL_GUARDED_BY(mu_) = false;
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
  // spec.nodeName only (no view parsed: this runs on every pod change).
  const std::string node(api::StringMember(api::MemberObject(*pod, "spec"), "nodeName"));
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

absl::Time NodeLifecycle::Probe(const NodeView& node) {
  const std::string name(node.meta.name);
  std::string signal;
  if (ObjectRef lease = leases_.Get(opts_.lease_namespace, name)) {
    signal = std::string(api::coordination_v1::LeaseView::Parse(*lease).renew_time);
  }
  if (const api::core_v1::NodeConditionView* ready = node.Condition(api::core_v1::kNodeReady)) {
    signal += "|";
    signal += ready->last_heartbeat_time;
  }
  absl::MutexLock lock(&mu_);
  auto it = health_.find(name);
  if (it == health_.end() || it->second.signal != signal) {
    health_[name] = Health{signal, ctx_.clock.Now()};
    return ctx_.clock.Now();
  }
  return it->second.probe;
}

// Writes the node's conditions; returns the node as written.
absl::StatusOr<Json> NodeLifecycle::SyncStatus(const Json& node, const std::string& name,
                                               bool expired) {
  absl::Time now = ctx_.clock.Now();
  Json cur = node;
  Json status_copy = node;
  bool status_changed = expired ? api::core_v1::MarkNodeConditionsUnknown(status_copy, now)
                                : api::core_v1::RestoreNodeConditions(status_copy, now);
  if (status_changed) {
    BATCHD_ASSIGN_OR_RETURN(cur, ctx_.client.UpdateStatus(nodes_.kind(), std::move(status_copy)));
    if (expired) {
      ctx_.events.Event(cur, "Normal", "NodeNotReady",
                        absl::StrCat("Node ", name, " status is now: NodeNotReady"));
    }
  }
  return cur;
}

std::map<std::string, ZoneState> NodeLifecycle::ZoneStates(const std::string& name, bool ready) {
  // A node counts as Ready when its condition says so and its heartbeat has
  // not expired by this controller's clock (its condition may not have
  // been rewritten yet: nodes lost together count as lost together).
  const absl::Time now = ctx_.clock.Now();
  std::map<std::string, std::pair<int, int>> counts;  // zone -> (ready, not ready)
  for (const ObjectRef& n : nodes_.List()) {
    const NodeView v = NodeView::Parse(*n);
    if (v.meta.Annotation(kSimulatedAnnotation).value_or("") == "true") continue;
    bool r = ready;
    if (v.meta.name != name) {
      r = v.ReadyStatus() == api::meta::kConditionTrue;
      absl::MutexLock lock(&mu_);
      auto h = health_.find(std::string(v.meta.name));
      if (h != health_.end() && now >= h->second.probe + opts_.grace) r = false;
    }
    auto& c = counts[ZoneOf(v)];
    (r ? c.first : c.second)++;
  }
  std::map<std::string, ZoneState> out;
  for (const auto& [zone, c] : counts) {
    const auto [ready_nodes, not_ready] = c;
    if (ready_nodes == 0 && not_ready > 0) {
      out[zone] = ZoneState::kFullDisruption;
    } else if (not_ready > 2 && static_cast<double>(not_ready) / (not_ready + ready_nodes) >=
                                    opts_.unhealthy_zone_threshold) {
      out[zone] = ZoneState::kPartialDisruption;
    } else {
      out[zone] = ZoneState::kNormal;
    }
  }
  return out;
}

NoExecute NodeLifecycle::DecideNoExecute(const NodeView& node, bool unhealthy,
                                         absl::Time* retry) {
  const std::string name(node.meta.name);
  const absl::Time now = ctx_.clock.Now();
  const std::map<std::string, ZoneState> zones = ZoneStates(name, !unhealthy);
  bool all_full = !zones.empty();
  for (const auto& [z, st] : zones) all_full &= st == ZoneState::kFullDisruption;
  bool transition = false;
  {
    absl::MutexLock lock(&mu_);
    if (all_full != all_disrupted_) {
      transition = true;
      all_disrupted_ = all_full;
      if (!all_full) {
        // As Kubernetes: every node starts a fresh grace period, since none
        // could be heard while the server was cut off.
        for (auto& [n, h] : health_) h.probe = now;
      }
    }
  }
  if (transition) {
    BATCHD_LOG_WARN(all_full ? "nodelifecycle: no node is Ready: entering full-disruption mode, "
                               "no pod is evicted"
                             : "nodelifecycle: nodes are Ready again: leaving full-disruption mode");
    for (const ObjectRef& n : nodes_.List()) controller_->queue().Add(api::meta::GetName(*n));
  }
  if (!unhealthy) return NoExecute::kRemove;
  if (all_full) {
    *retry = now + opts_.monitor_period;
    return NoExecute::kRemove;
  }
  // Already tainted (perhaps with the other key): the taint stays or is
  // swapped at once, as Kubernetes swaps it without the rate limiter.
  if (HasHealthNoExecute(node)) return NoExecute::kAdd;
  const std::string zone = ZoneOf(node);
  auto it = zones.find(zone);
  const ZoneState state = it == zones.end() ? ZoneState::kNormal : it->second;
  int zone_size = 0;
  for (const ObjectRef& n : nodes_.List()) {
    const NodeView v = NodeView::Parse(*n);
    if (v.meta.Annotation(kSimulatedAnnotation).value_or("") != "true" && ZoneOf(v) == zone) {
      ++zone_size;
    }
  }
  double rate = opts_.eviction_rate;
  if (state == ZoneState::kPartialDisruption) {
    rate = zone_size > opts_.large_cluster_size_threshold ? opts_.secondary_eviction_rate : 0;
  }
  if (rate <= 0) {
    *retry = now + opts_.monitor_period;
    return NoExecute::kKeep;
  }
  absl::MutexLock lock(&mu_);
  absl::Time& next = zone_next_taint_[zone];
  if (now < next) {
    *retry = next;
    return NoExecute::kKeep;
  }
  next = now + absl::Seconds(1.0 / rate);
  return NoExecute::kAdd;
}

// `view` is parsed from `pod`, the informer's object.
absl::Status NodeLifecycle::EvictPod(const Json& pod, const PodView& view) {
  Json next = pod;
  api::core_v1::MarkPodEvictedByTaintManager(next, ctx_.clock.Now());
  auto written = ctx_.client.UpdateStatus(pods_.kind(), std::move(next));
  if (!written.ok()) return written.status();
  ctx_.events.Event(pod, "Normal", "TaintManagerEviction",
                    absl::StrCat("Marking for deletion Pod ", client::Informer::KeyOf(pod)));
  client::DeleteOptions opts;
  opts.precondition_uid = std::string(view.meta.uid);
  return ctx_.client.Delete(pods_.kind(), std::string(view.meta.namespace_),
                            std::string(view.meta.name), opts);
}

absl::StatusOr<absl::Time> NodeLifecycle::Evict(const NodeView& node, std::string_view ready,
                                                 std::optional<absl::Duration> fence) {
  const std::string key(HealthTaintKey(ready));
  Taint taint{key, "", TaintEffect::kNoExecute, ""};
  bool tainted = false;
  for (const Taint& t : node.taints) {
    if (t.key == key && t.effect == TaintEffect::kNoExecute) {
      taint = t;
      tainted = true;
    }
  }
  // Pods are evicted only from a node with the NoExecute taint (rate-limited
  // and withheld in full disruption: DecideNoExecute).
  if (!tainted) return absl::InfiniteFuture();
  absl::Time now = ctx_.clock.Now();
  auto parsed = api::meta::ParseRfc3339(taint.time_added);
  absl::Time added = parsed.ok() ? *parsed : now;
  std::vector<std::string> keys;
  // Since when the node's heartbeat is silent by this controller's clock
  // (now when unknown: the later, the safer).
  absl::Time silent_since = now;
  {
    absl::MutexLock lock(&mu_);
    if (auto h = health_.find(std::string(node.meta.name)); h != health_.end()) {
      silent_since = h->second.probe;
    }
    auto it = pods_by_node_.find(std::string(node.meta.name));
    if (it != pods_by_node_.end()) keys.assign(it->second.begin(), it->second.end());
  }
  std::sort(keys.begin(), keys.end());
  absl::Time next = absl::InfiniteFuture();
  absl::Status first_error;
  for (const auto& k : keys) {
    size_t slash = k.find('/');
    ObjectRef pod = pods_.Get(k.substr(0, slash), k.substr(slash + 1));
    if (!pod) continue;
    const PodView view = PodView::Parse(*pod);
    if (view.meta.being_deleted() || view.terminal()) continue;
    const std::vector<api::core_v1::Toleration> tols =
        view.tolerations == nullptr ? std::vector<api::core_v1::Toleration>()
                                    : api::core_v1::ParseTolerationList(*view.tolerations);
    const api::core_v1::Toleration* tol = api::core_v1::FindToleration(tols, taint);
    if (tol != nullptr && !tol->toleration_seconds) continue;
    if (tol != nullptr) {
      absl::Time due = added + absl::Seconds(std::max<int64_t>(0, *tol->toleration_seconds));
      if (due > now) {
        next = std::min(next, due);
        continue;
      }
    }
    // A fencing agent kills the pod FenceAfter its last renewal: its
    // replacement may come only once that has surely happened. (A node that
    // reports NotReady still renews: its agent sees the eviction itself.)
    if (fence && key == kUnreachableTaint) {
      if (std::optional<absl::Duration> after = api::core_v1::FenceAfter(*pod, *fence)) {
        const absl::Time fenced = silent_since + *after + api::core_v1::kFenceEvictionMargin;
        if (fenced > now) {
          next = std::min(next, fenced);
          continue;
        }
      }
    }
    absl::Status st = EvictPod(*pod, view);
    if (!st.ok() && registry::GetPayload(st).reason != "NotFound" && first_error.ok()) {
      first_error = st;
    }
  }
  if (!first_error.ok()) return first_error;
  return next;
}

absl::StatusOr<Result> NodeLifecycle::Reconcile(const std::string& name) {
  ObjectRef ref = nodes_.Get("", name);
  std::optional<NodeView> cached;
  if (ref) cached = NodeView::Parse(*ref);
  if (!cached || cached->meta.Annotation(kSimulatedAnnotation).value_or("") == "true") {
    absl::MutexLock lock(&mu_);
    unhealthy_.erase(name);
    return Result::Done();
  }
  absl::Time now = ctx_.clock.Now();
  absl::Time expires = Probe(*cached) + opts_.grace;
  bool expired = now >= expires;
  BATCHD_ASSIGN_OR_RETURN(Json node, SyncStatus(*ref, name, expired));
  absl::Time retry = absl::InfiniteFuture();
  {
    const NodeView before = NodeView::Parse(node);
    const std::string ready_now(before.ReadyStatus());
    const NoExecute ne = DecideNoExecute(before, Unhealthy(ready_now), &retry);
    Json spec_copy = node;
    if (SetHealthTaints(spec_copy, ready_now, now, ne)) {
      BATCHD_ASSIGN_OR_RETURN(node, ctx_.client.Update(nodes_.kind(), std::move(spec_copy)));
    }
  }
  const NodeView view = NodeView::Parse(node);  // `node` is not edited from here on.
  const std::string_view ready = view.ReadyStatus();
  bool unhealthy = Unhealthy(ready);
  {
    absl::MutexLock lock(&mu_);
    if (unhealthy) {
      unhealthy_.insert(name);
    } else {
      unhealthy_.erase(name);
    }
  }
  absl::Time next = std::min(expired ? absl::InfiniteFuture() : expires, retry);
  if (unhealthy) {
    BATCHD_ASSIGN_OR_RETURN(absl::Time due,
                            Evict(view, ready, api::core_v1::NodeFencePeriod(node)));
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
