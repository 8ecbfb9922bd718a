#include "controllers/queueing/queue_manager.h"

#include <utility>

#include "absl/synchronization/mutex.h"
#include "api/core/v1/pod_view.h"
#include "api/kueue/kueue.h"
#include "api/kueue/queue_views.h"
#include "api/meta/object_meta.h"
#include "common/logging.h"
#include "controllers/admissioncheck/admission_checks.h"
#include "controllers/queueing/internal/queue_manager_impl.h"

namespace batchd::controllers::queueing {

using reconcile::Controller;
using reconcile::ControllerContext;
using reconcile::Result;

namespace {

namespace q = batchd::queueing;
using client::ObjectRef;

q::Options CoreOptions(const QueueingConfig& cfg) {
  q::Options o;
#ifndef NDEBUG
  // Debug builds abort on a quota invariant violation after every cycle;
  // release builds check and log (see Cycle).
  o.check_invariants = true;
#endif
  o.fair_sharing = cfg.fair_sharing.enable;
  // Kueue's TAS profile gates: TASProfileLeastFreeCapacity, TASProfileMixed
  // (on by default; off = BestFit everywhere), TASBalancedPlacement.
  auto gate = [&cfg](const char* name, bool def) {
    auto it = cfg.feature_gates.find(name);
    return it == cfg.feature_gates.end() ? def : it->second;
  };
  if (gate("TASProfileLeastFreeCapacity", false)) {
    o.topology_profile = q::TopologyProfile::kLeastFreeCapacity;
  } else if (gate("TASBalancedPlacement", false)) {
    o.topology_profile = q::TopologyProfile::kBalanced;
  } else if (gate("TASProfileMixed", true)) {
    o.topology_profile = q::TopologyProfile::kMixed;
  } else {
    o.topology_profile = q::TopologyProfile::kBestFit;
  }
  o.fair_sharing_strategies.clear();
  for (FairSharingStrategy s : cfg.fair_sharing.preemption_strategies) {
    o.fair_sharing_strategies.push_back(
        s == FairSharingStrategy::kLessThanInitialShare
            ? q::FairSharingStrategy::kLessThanInitialShare
            : q::FairSharingStrategy::kLessThanOrEqualToFinalShare);
  }
  return o;
}

// Spec changes (generation) and deletion marks matter for queue objects;
// their own status writes do not.
bool SpecChanged(const ObjectRef& a, const ObjectRef& b) {
  return api::meta::GetGeneration(*a) != api::meta::GetGeneration(*b) ||
         api::meta::IsBeingDeleted(*a) != api::meta::IsBeingDeleted(*b) ||
         api::kueue::SpecOf(*a) != api::kueue::SpecOf(*b);  // Compared in place, no copies.
}

}  // namespace

QueueManagerImpl::QueueManagerImpl(ControllerContext& ctx, QueueingConfig cfg)
    : ctx_(ctx),
      cfg_(std::move(cfg)),
      rf_kind_(ctx.client.Kind(api::kueue::kGroup, api::kueue::kStorageVersion,
                               api::kueue::kResourceFlavors)),
      cq_kind_(ctx.client.Kind(api::kueue::kGroup, api::kueue::kStorageVersion,
                               api::kueue::kClusterQueues)),
      lq_kind_(ctx.client.Kind(api::kueue::kGroup, api::kueue::kStorageVersion,
                               api::kueue::kLocalQueues)),
      cohort_kind_(ctx.client.Kind(api::kueue::kGroup, api::kueue::kStorageVersion,
                                   api::kueue::kCohorts)),
      wl_kind_(ctx.client.Kind(api::kueue::kGroup, api::kueue::kStorageVersion,
                               api::kueue::kWorkloads)),
      ns_kind_(ctx.client.Kind("", "v1", "namespaces")),
      topology_kind_(ctx.client.Kind(api::kueue::kGroup, api::kueue::kStorageVersion,
                                     api::kueue::kTopologies)),
      flavors_(ctx.informers.For(rf_kind_)),
      cqs_(ctx.informers.For(cq_kind_)),
      lqs_(ctx.informers.For(lq_kind_)),
      cohorts_(ctx.informers.For(cohort_kind_)),
      workloads_(ctx.informers.For(wl_kind_)),
      namespaces_(ctx.informers.For(ns_kind_)),
      topologies_(ctx.informers.For(topology_kind_)),
      nodes_(ctx.informers.For("", "v1", "nodes")),
      pods_(ctx.informers.For("", "v1", "pods")),
      checks_(ctx.informers.For(api::kueue::kGroup, api::kueue::kStorageVersion,
                                api::kueue::kAdmissionChecks)),
      core_(CoreOptions(cfg_)) {}

void QueueManagerImpl::MarkDirty(std::set<std::string> Dirty::*set, const std::string& key,
                                 bool all_workloads) {
  {
    absl::MutexLock lock(&dirty_mu_);
    if (set != nullptr) (dirty_.*set).insert(key);
    if (all_workloads) dirty_.all_workloads = true;
  }
  if (controller_ != nullptr) controller_->queue().Add(kCycleKey);
}

QueueManagerImpl::Dirty QueueManagerImpl::TakeDirty() {
  absl::MutexLock lock(&dirty_mu_);
  Dirty d = std::move(dirty_);
  dirty_ = Dirty{};
  return d;
}

void QueueManagerImpl::Wire(Controller* controller) {
  controller_ = controller;
  // Queue objects: spec changes; `all` re-resolves every Workload against them.
  auto queue_handlers = [this](std::set<std::string> Dirty::*set, bool all) {
    client::EventHandlers h;
    h.on_add = [this, set, all](const ObjectRef& o) {
      MarkDirty(set, client::Informer::KeyOf(*o), all);
    };
    h.on_update = [this, set, all](const ObjectRef& a, const ObjectRef& b) {
      if (SpecChanged(a, b)) MarkDirty(set, client::Informer::KeyOf(*b), all);
    };
    h.on_delete = [this, set, all](const ObjectRef& o) {
      MarkDirty(set, client::Informer::KeyOf(*o), all);
    };
    return h;
  };
  flavors_.AddHandlers(queue_handlers(&Dirty::flavors, false));
  topologies_.AddHandlers(queue_handlers(&Dirty::topologies, false));
  // Nodes and pods matter only to topology-aware flavors (tas_watch_), and
  // only their capacity-moving changes: heartbeats and pod status churn
  // don't wake the cycle.
  client::EventHandlers node;
  node.on_add = [this](const ObjectRef& o) {
    if (tas_watch_.load()) MarkDirty(&Dirty::nodes, api::meta::GetName(*o));
  };
  node.on_update = [this](const ObjectRef& a, const ObjectRef& b) {
    if (tas_watch_.load() && TopologyRelevantNodeChange(*a, *b)) {
      MarkDirty(&Dirty::nodes, api::meta::GetName(*b));
    }
  };
  node.on_delete = [this](const ObjectRef& o) {
    if (tas_watch_.load()) MarkDirty(&Dirty::nodes, api::meta::GetName(*o));
  };
  nodes_.AddHandlers(node);
  client::EventHandlers pod;
  pod.on_add = [this](const ObjectRef& o) {
    if (tas_watch_.load() && !api::core_v1::PodView::Parse(*o).node_name.empty()) {
      MarkDirty(&Dirty::pods, client::Informer::KeyOf(*o));
    }
  };
  pod.on_update = [this](const ObjectRef& a, const ObjectRef& b) {
    if (tas_watch_.load() && TopologyRelevantPodChange(*a, *b)) {
      MarkDirty(&Dirty::pods, client::Informer::KeyOf(*b));
    }
  };
  pod.on_delete = [this](const ObjectRef& o) {
    if (tas_watch_.load()) MarkDirty(&Dirty::pods, client::Informer::KeyOf(*o));
  };
  pods_.AddHandlers(pod);
  cohorts_.AddHandlers(queue_handlers(&Dirty::cohorts, false));
  cqs_.AddHandlers(queue_handlers(&Dirty::cqs, true));
  // An AdmissionCheck appearing, going or turning (in)active re-syncs the
  // ClusterQueues (admissioncheck::CheckReferencesUsable decides Hold).
  auto check_changed = [this](const ObjectRef&) {
    for (const ObjectRef& cq : cqs_.List()) MarkDirty(&Dirty::cqs, api::meta::GetName(*cq));
  };
  checks_.AddHandlers({check_changed, [check_changed](const ObjectRef&, const ObjectRef& b) {
                         check_changed(b);
                       },
                       check_changed});
  lqs_.AddHandlers(queue_handlers(&Dirty::lqs, true));
  client::EventHandlers ns;
  ns.on_add = [this](const ObjectRef&) { MarkDirty(nullptr, "", true); };
  ns.on_update = [this](const ObjectRef& a, const ObjectRef& b) {
    if (api::meta::Labels(*a) != api::meta::Labels(*b)) MarkDirty(nullptr, "", true);
  };
  namespaces_.AddHandlers(ns);
  client::EventHandlers wl;
  wl.on_add = [this](const ObjectRef& o) {
    MarkDirty(&Dirty::workloads, internal::WorkloadKey(*o));
  };
  wl.on_update = [this](const ObjectRef&, const ObjectRef& o) {
    MarkDirty(&Dirty::workloads, internal::WorkloadKey(*o));
  };
  wl.on_delete = [this](const ObjectRef& o) {
    MarkDirty(&Dirty::workloads, internal::WorkloadKey(*o));
  };
  workloads_.AddHandlers(wl);
}

void QueueManagerImpl::SyncConfig(const Dirty& d) {
  for (const std::string& name : d.flavors) {
    ObjectRef rf = flavors_.Get("", name);
    if (rf) {
      core_.UpsertResourceFlavor(
          internal::ToResourceFlavor(api::kueue::ResourceFlavorView::Parse(*rf)));
    } else {
      core_.DeleteResourceFlavor(name);
    }
  }
  for (const std::string& name : d.cohorts) {
    ObjectRef c = cohorts_.Get("", name);
    if (c) {
      core_.UpsertCohort(internal::ToCohort(api::kueue::CohortView::Parse(*c),
                                            api::kueue::ResourceGroupsView::Parse(*c)));
    } else {
      core_.DeleteCohort(name);
    }
  }
  for (const std::string& name : d.cqs) {
    ObjectRef cq = cqs_.Get("", name);
    if (cq) {
      q::ClusterQueue c = internal::ToClusterQueue(api::kueue::ClusterQueueView::Parse(*cq),
                                                   api::kueue::ResourceGroupsView::Parse(*cq));
      // Being deleted (its resource-in-use finalizer holds it while workloads
      // run) or naming a missing/inactive AdmissionCheck: no new admissions,
      // but its usage stays counted in the cohort.
      std::vector<std::string> unused;
      auto lookup = [this](const std::string& n) { return checks_.Get("", n); };
      if (c.stop_policy == q::StopPolicy::kNone &&
          (api::meta::IsBeingDeleted(*cq) ||
           !admissioncheck::CheckReferencesUsable(*cq, lookup, &unused, &unused))) {
        c.stop_policy = q::StopPolicy::kHold;
      }
      // A ClusterQueue on its way out lends nothing new: once it goes its
      // quota leaves the cohort, and what others borrowed from it would
      // over-commit what remains. Its own usage stays counted.
      if (api::meta::IsBeingDeleted(*cq) && !c.cohort.empty()) {
        for (q::ResourceGroup& g : c.resource_groups) {
          for (q::FlavorQuotas& f : g.flavors) {
            for (auto& [name, quota] : f.resources) quota.lending_limit = 0;
          }
        }
      }
      core_.UpsertClusterQueue(std::move(c));
    } else {
      core_.DeleteClusterQueue(name);
    }
  }
  for (const std::string& key : d.lqs) {
    size_t slash = key.find('/');
    std::string ns = key.substr(0, slash), name = key.substr(slash + 1);
    ObjectRef lq = lqs_.Get(ns, name);
    if (lq) {
      core_.UpsertLocalQueue(internal::ToLocalQueue(api::kueue::LocalQueueView::Parse(*lq)));
    } else {
      core_.DeleteLocalQueue(ns, name);
    }
  }
}

void QueueManagerImpl::SyncAllWorkloads() {
  synced_sig_.clear();
}

absl::StatusOr<Result> QueueManagerImpl::Reconcile(const std::string& key) {
  if (key != kCycleKey) return Result::Done();
  absl::MutexLock lock(&mu_);
  ++cycles_;
  absl::Time now = ctx_.clock.Now();
  Dirty d = TakeDirty();
  SyncConfig(d);
  const bool nodes_changed = SyncTopology(d);
  std::set<std::string> keys = std::move(d.workloads);
  if (d.all_workloads) {
    SyncAllWorkloads();
    for (const auto& w : workloads_.List()) keys.insert(internal::WorkloadKey(*w));
    for (const auto& [k, sig] : wl_cq_) keys.insert(k);
  }
  for (const WorkloadToSync& wl : SyncOrder(keys)) SyncWorkload(wl, now);
  if (nodes_changed || repair_retry_) RepairTopology(now);
  ProcessDeadlines(now);
  ProcessExecutionDeadlines(now);
  bool retry = !FlushWrites(now);
  if (!AdmissionBlocked()) {
    absl::Time start = ctx_.clock.Now();
    std::vector<q::Decision> decisions = core_.RunCycle(now);
    absl::Duration took = ctx_.clock.Now() - start;
#ifdef NDEBUG
    // The quota invariant (DESIGN.md): admitted usage within nominal plus
    // what borrowing allows, no cohort lending more than it has. Debug
    // builds have the core check it (and abort) inside RunCycle already.
    if (absl::Status inv = core_.CheckInvariants(); !inv.ok()) {
      BATCHD_LOG_ERROR("queueing: quota invariant violated after a cycle: {}",
                       std::string(inv.message()));
    }
#endif
    ApplyDecisions(decisions, now);
    for (const auto& dec : decisions) {
      if (dec.kind != q::Decision::Kind::kPreempt) {
        metrics_.AdmissionAttempt(dec.kind == q::Decision::Kind::kAdmit, took);
      }
    }
    retry = !FlushWrites(now) || retry;
  }
  WriteQueueStatuses(now);
  std::optional<absl::Time> wake = NextWake(now);
  if (retry && (!wake || *wake > now + absl::Seconds(1))) wake = now + absl::Seconds(1);
  if (!wake) return Result::Done();
  return Result::After(std::max(*wake - now, absl::Milliseconds(1)));
}

q::ClusterQueueStatus QueueManagerImpl::ClusterQueueStatusOf(const std::string& name) const {
  absl::MutexLock lock(&mu_);
  return core_.ClusterQueueStatusOf(name);
}

std::vector<std::string> QueueManagerImpl::PendingWorkloads(const std::string& cq,
                                                            size_t limit) const {
  absl::MutexLock lock(&mu_);
  return core_.PendingWorkloads(cq, limit);
}

int64_t QueueManagerImpl::cycles() const {
  absl::MutexLock lock(&mu_);
  return cycles_;
}

QueueManager::QueueManager(std::unique_ptr<QueueManagerImpl> impl) : impl_(std::move(impl)) {}
QueueManager::~QueueManager() = default;

void QueueManager::AppendPrometheus(std::string* out) const {
  impl_->metrics().AppendPrometheus(out);
}

q::ClusterQueueStatus QueueManager::ClusterQueueStatus(const std::string& name) const {
  return impl_->ClusterQueueStatusOf(name);
}

std::vector<std::string> QueueManager::PendingWorkloads(const std::string& cluster_queue,
                                                        size_t limit) const {
  return impl_->PendingWorkloads(cluster_queue, limit);
}

int64_t QueueManager::cycles() const { return impl_->cycles(); }

std::shared_ptr<QueueManager> AddQueueManager(ControllerContext& ctx,
                                              const QueueingConfig& config) {
  auto impl = std::make_unique<QueueManagerImpl>(ctx, config);
  QueueManagerImpl* raw = impl.get();
  auto manager = std::make_shared<QueueManager>(std::move(impl));
  Controller& c = ctx.manager.AddController(
      std::make_unique<Controller>("queue-manager", *raw, ctx.clock));
  raw->Wire(&c);
  return manager;
}

}  // namespace batchd::controllers::queueing
