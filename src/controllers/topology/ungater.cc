#include "controllers/topology/ungater.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "api/core/v1/pod_view.h"
#include "api/json_access.h"
#include "api/kueue/queue_views.h"
#include "api/kueue/topology_assignment.h"
#include "api/meta/object_meta.h"
#include "common/logging.h"

namespace batchd::controllers::topology {
namespace {

using api::Json;
using api::core_v1::PodView;
using api::kueue::TopologyAssignmentValue;
using client::ObjectRef;
using reconcile::Controller;
using reconcile::ControllerContext;
using reconcile::Reconciler;
using reconcile::Result;

constexpr char kWorkloadsGroup[] = "kueue.x-k8s.io";

// "ns/<workload>" for a pod that names its Workload, else "".
std::string WorkloadKeyOf(const Json& pod) {
  auto wl = api::meta::GetAnnotation(pod, api::kueue::kWorkloadAnnotation);
  if (!wl || wl->empty()) return "";
  return absl::StrCat(api::meta::GetNamespace(pod), "/", *wl);
}

// How the pods of a pod set are ranked: by the index label, and with
// replicated jobs (JobSet's, Kueue's subGroupIndexLabel / subGroupCount) by
// the job's index first: rank = job index * pods per job + pod index.
struct RankLabels {
  std::string_view index_label;
  std::string_view sub_group_index_label;
  int64_t pods_per_sub_group = 0;  // > 0 when sub-groups are used
};

std::optional<int64_t> NumericLabel(const Json& pod, std::string_view key) {
  if (key.empty()) return std::nullopt;
  auto v = api::meta::GetLabel(pod, key);
  if (!v) return std::nullopt;
  int64_t n = 0;
  auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
  if (ec != std::errc() || end != v->data() + v->size() || n < 0) return std::nullopt;
  return n;
}

// The pod's rank in its pod set (missing or unparsable labels rank after
// every indexed pod), then its name.
std::pair<int64_t, std::string> Rank(const Json& pod, const RankLabels& labels) {
  int64_t rank = INT64_MAX;
  std::optional<int64_t> index = NumericLabel(pod, labels.index_label);
  if (labels.pods_per_sub_group > 0) {
    std::optional<int64_t> job = NumericLabel(pod, labels.sub_group_index_label);
    if (job && index && *job < INT64_MAX / labels.pods_per_sub_group - 1) {
      rank = *job * labels.pods_per_sub_group + *index;
    }
  } else if (index) {
    rank = *index;
  }
  return {rank, api::meta::GetName(pod)};
}

// Whether the Workload's admission (status.admission, an object) has a pod
// set assignment with a topologyAssignment object: what Reconcile reads.
bool HasTopologyAssignment(const Json& wl) {
  const Json* admission = api::FindMember(api::MemberObject(wl, "status"), "admission");
  if (admission == nullptr || !admission->is_object()) return false;
  for (const Json& a : api::MemberArray(*admission, "podSetAssignments")) {
    if (const Json* ta = api::FindMember(a, "topologyAssignment"); ta && ta->is_object()) {
      return true;
    }
  }
  return false;
}

// PodView's HasSchedulingGate(kTopologySchedulingGate), without parsing a
// view (the pod handler runs on every change of a Kueue-managed pod).
bool HasTopologyGate(const Json& pod) {
  for (const Json& g : api::MemberArray(api::MemberObject(pod, "spec"), "schedulingGates")) {
    if (api::StringMember(g, "name") == api::kueue::kTopologySchedulingGate) return true;
  }
  return false;
}

class Ungater : public Reconciler {
 public:
  explicit Ungater(ControllerContext& ctx)
      : ctx_(ctx),
        pod_kind_(ctx.client.Kind("", "v1", "pods")),
        pods_(ctx.informers.For(pod_kind_)),
        workloads_(ctx.informers.For(kWorkloadsGroup, "v1beta2", "workloads")) {}

  void Register(std::shared_ptr<Ungater> self);
  absl::StatusOr<Result> Reconcile(const std::string& key) override;

 private:
  void OnPod(const ObjectRef& pod, bool deleted);
  absl::Status UngatePodSet(const std::string& ns, const std::string& wl_name,
                            std::string_view pod_set, const RankLabels& rank,
                            const TopologyAssignmentValue& ta);

  ControllerContext& ctx_;
  const api::KindDef& pod_kind_;
  client::Informer& pods_;
  client::Informer& workloads_;
  Controller* controller_ = nullptr;

  absl::Mutex mu_;
  // Workload key -> keys of the pods that name it (bounded by the pods).
  absl::flat_hash_map<std::string, absl::flat_hash_set<std::string>> pods_by_workload_
      ABSL_GUARDED_BY(mu_);
};

void Ungater::Register(std::shared_ptr<Ungater> self) {
  controller_ = &ctx_.manager.AddController(
      std::make_unique<Controller>("topology-ungater", *this, ctx_.clock));
  pods_.AddHandlers({[self](const ObjectRef& o) { self->OnPod(o, false); },
                     [self](const ObjectRef&, const ObjectRef& n) { self->OnPod(n, false); },
                     [self](const ObjectRef& o) { self->OnPod(o, true); }});
  Controller* c = controller_;
  // Reconcile acts only on the pod-set assignments that carry a topology
  // assignment: a Workload admitted without one (no topology request) is
  // not even enqueued (the simulator's ~3 wake-ups a job with nothing to do).
  auto on_workload = [c](const ObjectRef& o) {
    if (HasTopologyAssignment(*o)) c->queue().Add(client::Informer::KeyOf(*o));
  };
  workloads_.AddHandlers(
      {on_workload, [on_workload](const ObjectRef&, const ObjectRef& n) { on_workload(n); }, {}});
}

void Ungater::OnPod(const ObjectRef& pod, bool deleted) {
  std::string wl = WorkloadKeyOf(*pod);
  if (wl.empty()) return;
  std::string key = client::Informer::KeyOf(*pod);
  {
    absl::MutexLock lock(&mu_);
    auto& set = pods_by_workload_[wl];
    if (deleted) {
      set.erase(key);
      if (set.empty()) pods_by_workload_.erase(wl);
    } else {
      set.insert(key);
    }
  }
  if (!deleted && HasTopologyGate(*pod)) controller_->queue().Add(wl);
}

absl::StatusOr<Result> Ungater::Reconcile(const std::string& key) {
  size_t slash = key.find('/');
  const std::string ns = key.substr(0, slash), name = key.substr(slash + 1);
  ObjectRef wl = workloads_.Get(ns, name);
  if (!wl) return Result::Done();
  const api::kueue::WorkloadView view = api::kueue::WorkloadView::Parse(*wl);
  if (!view.has_admission || view.IsConditionTrue("Evicted") || view.IsConditionTrue("Finished")) {
    return Result::Done();
  }
  const api::kueue::WorkloadPodSetsView sets = api::kueue::WorkloadPodSetsView::Parse(*wl);
  for (const api::kueue::PodSetAssignmentView& a : sets.assignments) {
    if (a.topology_assignment == nullptr) continue;
    std::optional<TopologyAssignmentValue> ta =
        api::kueue::DecodeTopologyAssignment(*a.topology_assignment);
    if (!ta) continue;
    RankLabels rank;
    for (const api::kueue::PodSetView& ps : sets.pod_sets) {
      if (ps.name != a.name || !ps.topology_request) continue;
      const api::kueue::PodSetTopologyRequestView& tr = *ps.topology_request;
      rank.index_label = tr.pod_index_label;
      if (!tr.sub_group_index_label.empty() && tr.sub_group_count.value_or(0) > 0) {
        rank.sub_group_index_label = tr.sub_group_index_label;
        rank.pods_per_sub_group = std::max<int64_t>(1, ps.count / *tr.sub_group_count);
      }
    }
    absl::Status st = UngatePodSet(ns, name, a.name, rank, *ta);
    if (!st.ok()) return st;
  }
  return Result::Done();
}

absl::Status Ungater::UngatePodSet(const std::string& ns, const std::string& wl_name,
                                   std::string_view pod_set, const RankLabels& rank,
                                   const TopologyAssignmentValue& ta) {
  std::vector<std::string> keys;
  {
    absl::MutexLock lock(&mu_);
    auto it = pods_by_workload_.find(absl::StrCat(ns, "/", wl_name));
    if (it == pods_by_workload_.end()) return absl::OkStatus();
    keys.assign(it->second.begin(), it->second.end());
  }
  // Pods already on a domain count against it; gated ones wait for a slot.
  std::vector<int32_t> left;
  left.reserve(ta.domains.size());
  for (const api::kueue::TopologyDomainValue& d : ta.domains) left.push_back(d.count);
  std::vector<std::pair<std::pair<int64_t, std::string>, ObjectRef>> gated;
  for (const std::string& key : keys) {
    size_t slash = key.find('/');
    ObjectRef pod = pods_.Get(key.substr(0, slash), key.substr(slash + 1));
    if (!pod) continue;
    if (api::meta::GetLabel(*pod, api::kueue::kPodSetLabel).value_or("") != pod_set) continue;
    const PodView v = PodView::Parse(*pod);
    if (v.terminal() || api::meta::IsBeingDeleted(*pod)) continue;
    if (v.HasSchedulingGate(api::kueue::kTopologySchedulingGate)) {
      gated.emplace_back(Rank(*pod, rank), pod);
      continue;
    }
    const Json& selector = v.node_selector != nullptr ? *v.node_selector : api::EmptyObject();
    for (size_t i = 0; i < ta.domains.size(); ++i) {
      bool match = true;
      for (size_t l = 0; l < ta.levels.size() && match; ++l) {
        const Json* value = api::FindMember(selector, ta.levels[l]);
        match = value != nullptr && value->is_string() &&
                l < ta.domains[i].values.size() &&
                value->get<std::string>() == ta.domains[i].values[l];
      }
      if (match) {
        --left[i];
        break;
      }
    }
  }
  std::sort(gated.begin(), gated.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  size_t domain = 0;
  absl::Status result = absl::OkStatus();
  for (auto& [rank, pod] : gated) {
    while (domain < left.size() && left[domain] <= 0) ++domain;
    if (domain == left.size()) break;  // more pods than the assignment: they stay gated
    Json selector = Json::object();
    for (size_t l = 0; l < ta.levels.size() && l < ta.domains[domain].values.size(); ++l) {
      selector[ta.levels[l]] = ta.domains[domain].values[l];
    }
    const PodView v = PodView::Parse(*pod);
    auto r = ctx_.client.MergePatch(
        pod_kind_, ns, api::meta::GetName(*pod),
        api::core_v1::UngatePatch(v, api::kueue::kTopologySchedulingGate, selector));
    if (!r.ok()) {
      BATCHD_LOG_DEBUG("topology ungater: pod {}/{}: {}", ns, api::meta::GetName(*pod),
                       r.status().ToString());
      result = r.status();
      continue;
    }
    --left[domain];
  }
  return result;
}

}  // namespace

void AddTopologyUngater(ControllerContext& ctx) {
  auto u = std::make_shared<Ungater>(ctx);
  u->Register(u);
}

}  // namespace batchd::controllers::topology
