// Exclusive placement: the JobSet pod webhook and the placement controller
// (exclusive_placement.h; internal/placement.h has the pure pieces).
#include "controllers/jobset/exclusive_placement.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/core/v1/pod_view.h"
#include "api/jobset/v1alpha2/constants.h"
#include "api/json_access.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "api/meta/time_util.h"
#include "controllers/jobset/internal/placement.h"
#include "registry/errors.h"

namespace batchd::controllers {
namespace {

namespace js = api::jobset_v1alpha2;
using api::Json;
using jobset::internal::IsLeaderPod;
using jobset::internal::LeaderSelector;

// The follower's leader: the one live pod of completion index 0 with the
// same job-key and controlling Job. Errors are the webhook's refusals.
absl::StatusOr<registry::ObjectPtr> FindLeader(registry::Registry& reg, const api::KindDef& pods,
                                               const Json& follower) {
  const std::string ns = api::meta::GetNamespace(follower);
  const std::optional<std::string> selector = LeaderSelector(follower);
  if (!selector) return absl::FailedPreconditionError("pod missing label: jobset.sigs.k8s.io/job-key");
  const auto owner = api::meta::GetControllerRef(follower);
  registry::ListOptions opts;
  opts.label_selector = *selector;
  auto list = reg.List(pods, ns, opts);
  if (!list.ok()) return list.status();
  std::vector<registry::ObjectPtr> live;
  for (const registry::ObjectPtr& o : list->items) {
    std::shared_ptr<const Json> pod = o->Shared();
    const api::core_v1::PodView v = api::core_v1::PodView::Parse(*pod);
    if (v.meta.being_deleted() || v.terminal()) continue;
    if (owner && !api::meta::IsControlledBy(*pod, owner->uid)) continue;
    live.push_back(o);
  }
  if (live.size() != 1) {
    return absl::FailedPreconditionError(
        absl::StrCat("expected 1 leader pod (", *selector, "), but got ", live.size(),
                     ". this is an expected, transient error"));
  }
  return live.front();
}

// The webhook on one pod create.
absl::Status AdmitPod(registry::Registry& reg, const api::KindDef& pods, const api::KindDef& nodes,
                      Json& pod) {
  const auto annotation = [&pod](const char* key) { return api::meta::GetAnnotation(pod, key); };
  if (!annotation(js::kJobSetNameKey) || annotation(js::kNodeSelectorStrategyKey)) {
    return absl::OkStatus();
  }
  const Json& priority = api::MemberAt(pod, {"spec", "priority"});
  if (priority.is_number_integer()) {
    api::meta::SetLabel(pod, js::kPriorityKey, std::to_string(priority.get<int64_t>()));
  }
  const std::optional<std::string> topology = annotation(js::kExclusiveKey);
  if (!topology) return absl::OkStatus();
  if (IsLeaderPod(pod)) {
    jobset::internal::SetExclusiveAffinities(pod, *topology);
    return absl::OkStatus();
  }
  // A follower goes where its leader went, once it has gone somewhere.
  const std::string name = api::meta::GetName(pod);
  auto leader = FindLeader(reg, pods, pod);
  if (!leader.ok()) return registry::Forbidden(pods, name, std::string(leader.status().message()));
  const std::shared_ptr<const Json> leader_pod = (*leader)->Shared();
  const std::string node_name(api::core_v1::PodView::Parse(*leader_pod).node_name);
  if (node_name.empty()) {
    return registry::Forbidden(pods, name,
                               "leader pod not yet scheduled, not creating follower pod. this is "
                               "an expected, transient error");
  }
  auto node = reg.Get(nodes, "", node_name);
  if (!node.ok()) {
    return registry::Forbidden(pods, name, absl::StrCat("getting node ", node_name, ": ",
                                                        node.status().message()));
  }
  const std::shared_ptr<const Json> node_obj = (*node)->Shared();
  const Json& labels = api::MemberAt(*node_obj, {"metadata", "labels"});
  if (!labels.is_object() || !labels.contains(*topology) || !labels[*topology].is_string()) {
    return registry::Forbidden(pods, name,
                               absl::StrCat("node does not have topology label: ", *topology));
  }
  api::MutableObject(api::MutableObject(pod, "spec"), "nodeSelector")[*topology] =
      labels[*topology];
  return absl::OkStatus();
}

// The placement controller: keyed by leader pod.
class PlacementReconciler : public reconcile::Reconciler {
 public:
  explicit PlacementReconciler(reconcile::ControllerContext& ctx)
      : ctx_(ctx),
        pod_kind_(ctx.client.Kind("", "v1", "pods")),
        pods_(ctx.informers.For(pod_kind_)),
        nodes_(ctx.informers.For("", "v1", "nodes")) {}

  absl::StatusOr<reconcile::Result> Reconcile(const std::string& key) override {
    const size_t slash = key.find('/');
    if (slash == std::string::npos) return reconcile::Result::Done();
    const std::string ns = key.substr(0, slash);
    client::ObjectRef leader = pods_.Get(ns, key.substr(slash + 1));
    if (!leader || !jobset::internal::ScheduledExclusiveLeader(*leader)) {
      return reconcile::Result::Done();
    }
    // ScheduledExclusiveLeader: it has the annotation, a job-key and an owner.
    const auto owner = api::meta::GetControllerRef(*leader);
    const std::string topology = *api::meta::GetAnnotation(*leader, js::kExclusiveKey);
    client::ObjectRef node =
        nodes_.Get("", std::string(api::core_v1::PodView::Parse(*leader).node_name));
    const Json& labels = node ? api::MemberAt(*node, {"metadata", "labels"}) : Json();
    if (!labels.is_object() || !labels.contains(topology)) {
      return absl::FailedPreconditionError(
          absl::StrCat("leader topology is unknown: node without label ", topology));
    }
    const std::string domain = labels[topology].get<std::string>();
    std::vector<client::ObjectRef> misplaced;
    for (const client::ObjectRef& p : pods_.ListMatching(
             ns, absl::StrCat(js::kJobKey, "=", *api::meta::GetLabel(*leader, js::kJobKey)))) {
      if (IsLeaderPod(*p) || !api::meta::IsControlledBy(*p, owner->uid)) continue;
      const Json& selected = api::MemberAt(*p, {"spec", "nodeSelector", topology});
      if (!selected.is_string() || selected.get<std::string>() != domain) misplaced.push_back(p);
    }
    if (misplaced.empty()) return reconcile::Result::Done();
    // One follower in the wrong domain: all of the Job's followers go (as
    // upstream), to be recreated behind the leader.
    absl::Status first;
    for (const client::ObjectRef& p : ListFollowers(ns, *leader, owner->uid)) {
      absl::Status st = EvictFollower(*p);
      if (!st.ok() && first.ok()) first = st;
    }
    if (!first.ok()) return first;
    return reconcile::Result::Done();
  }

 private:
  std::vector<client::ObjectRef> ListFollowers(const std::string& ns, const Json& leader,
                                               const std::string& owner_uid) {
    std::vector<client::ObjectRef> out;
    for (const client::ObjectRef& p : pods_.ListMatching(
             ns, absl::StrCat(js::kJobKey, "=", *api::meta::GetLabel(leader, js::kJobKey)))) {
      if (!IsLeaderPod(*p) && api::meta::IsControlledBy(*p, owner_uid) &&
          !api::meta::IsBeingDeleted(*p)) {
        out.push_back(p);
      }
    }
    return out;
  }

  absl::Status EvictFollower(const Json& pod) {
    const std::string ns = api::meta::GetNamespace(pod), name = api::meta::GetName(pod);
    const Json cond = {{"type", "DisruptionTarget"},
                       {"status", "True"},
                       {"reason", js::kExclusivePlacementViolationReason},
                       {"message", js::kExclusivePlacementViolationMessage},
                       {"lastTransitionTime", api::meta::FormatRfc3339(ctx_.clock.Now())}};
    Json conds = api::MemberArray(api::Member(pod, "status"), "conditions");
    bool present = false;
    for (Json& c : conds) {
      if (api::StringMember(c, "type") != "DisruptionTarget") continue;
      present = true;
      if (api::StringMember(c, "status") != "True") c = cond;
    }
    if (!present) conds.push_back(cond);
    auto patched = ctx_.client.MergePatch(pod_kind_, ns, name, {{"status", {{"conditions", conds}}}},
                                          /*status=*/true);
    if (!patched.ok() && registry::GetPayload(patched.status()).reason != "NotFound") {
      return patched.status();
    }
    client::DeleteOptions opts;
    opts.propagation_policy = "Background";
    opts.precondition_uid = api::meta::GetUid(pod);
    absl::Status st = ctx_.client.Delete(pod_kind_, ns, name, opts);
    return st.ok() || registry::GetPayload(st).reason == "NotFound" ? absl::OkStatus() : st;
  }

  reconcile::ControllerContext& ctx_;
  const api::KindDef& pod_kind_;
  client::Informer& pods_;
  client::Informer& nodes_;
};

}  // namespace

absl::Status AddJobSetPodWebhook(registry::Registry& registry) {
  const api::KindDef* pods = registry.scheme().ByResource("", "v1", "pods");
  const api::KindDef* nodes = registry.scheme().ByResource("", "v1", "nodes");
  if (pods == nullptr || nodes == nullptr) {
    return absl::FailedPreconditionError("pods and nodes are not served");
  }
  registry::Registry* reg = &registry;
  registry.AddMutator(pods->GroupResource(), [reg, pods, nodes](Json& pod, const Json* old) {
    if (old != nullptr) return absl::OkStatus();  // Create only, as upstream's webhook.
    return AdmitPod(*reg, *pods, *nodes, pod);
  });
  return absl::OkStatus();
}

void AddExclusivePlacementController(reconcile::ControllerContext& ctx) {
  auto r = std::make_shared<PlacementReconciler>(ctx);
  reconcile::Controller& c = ctx.manager.AddController(
      std::make_unique<reconcile::Controller>("jobset-exclusive-placement", *r, ctx.clock));
  // The handlers own the reconciler: it lives as long as the informers.
  client::WorkQueue* q = &c.queue();
  auto enqueue = [r, q](const client::ObjectRef& p) {
    (void)r;
    if (jobset::internal::ScheduledExclusiveLeader(*p)) q->Add(client::Informer::KeyOf(*p));
  };
  ctx.informers.For("", "v1", "pods")
      .AddHandlers({.on_add = enqueue,
                    .on_update = [enqueue](const client::ObjectRef&,
                                           const client::ObjectRef& p) { enqueue(p); },
                    .on_delete = nullptr});
}

}  // namespace batchd::controllers
