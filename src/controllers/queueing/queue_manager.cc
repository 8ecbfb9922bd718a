#include "controllers/queueing/queue_manager.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "api/core/v1/pod_view.h"
#include "api/kueue/kueue.h"
#include "api/kueue/queue_views.h"
#include "api/meta/object_meta.h"
#include "common/logging.h"
#include "common/string_view.h"
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
  if (cfg.admission_fair_sharing) {
    o.admission_fair_sharing = q::AdmissionFairSharing{cfg.admission_fair_sharing->usage_half_life,
                                                       cfg.admission_fair_sharing->usage_sampling_interval,
                                                       cfg.admission_fair_sharing->resource_weights};
  }
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

void QueueManagerImpl::MarkDirty(std::set<std::string> Dirty::*set, const std::string& key) {
  {
    absl::MutexLock lock(&dirty_mu_);
    (dirty_.*set).insert(key);
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
  // Queue objects: spec changes. A ClusterQueue or LocalQueue change
  // re-resolves only the Workloads that name it (AddAffectedWorkloads).
  auto queue_handlers = [this](std::set<std::string> Dirty::*set) {
    client::EventHandlers h;
    h.on_add = [this, set](const ObjectRef& o) { MarkDirty(set, client::Informer::KeyOf(*o)); };
    h.on_update = [this, set](const ObjectRef& a, const ObjectRef& b) {
      if (SpecChanged(a, b)) MarkDirty(set, client::Informer::KeyOf(*b));
    };
    h.on_delete = [this, set](const ObjectRef& o) {
      MarkDirty(set, client::Informer::KeyOf(*o));
    };
    return h;
  };
  flavors_.AddHandlers(queue_handlers(&Dirty::flavors));
  topologies_.AddHandlers(queue_handlers(&Dirty::topologies));
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
  cohorts_.AddHandlers(queue_handlers(&Dirty::cohorts));
  cqs_.AddHandlers(queue_handlers(&Dirty::cqs));
  // An AdmissionCheck appearing, going or turning (in)active re-syncs the
  // ClusterQueues (admissioncheck::CheckReferencesUsable decides Hold).
  auto check_changed = [this](const ObjectRef&) {
    for (const ObjectRef& cq : cqs_.List()) MarkDirty(&Dirty::cqs, api::meta::GetName(*cq));
  };
  checks_.AddHandlers({check_changed, [check_changed](const ObjectRef&, const ObjectRef& b) {
                         check_changed(b);
                       },
                       check_changed});
  lqs_.AddHandlers(queue_handlers(&Dirty::lqs));
  // Namespaces: only label changes (namespaceSelector), and only that
  // namespace's workloads.
  client::EventHandlers ns;
  ns.on_add = [this](const ObjectRef& o) {
    MarkDirty(&Dirty::namespaces, api::meta::GetName(*o));
  };
  ns.on_update = [this](const ObjectRef& a, const ObjectRef& b) {
    if (api::meta::Labels(*a) != api::meta::Labels(*b)) {
      MarkDirty(&Dirty::namespaces, api::meta::GetName(*b));
    }
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
      c.admission_fair_sharing = AdmissionScopeOn(*cq);
      if (c.admission_fair_sharing && !cfg_.admission_fair_sharing) {
        ctx_.events.Event(*cq, "Warning", "AdmissionFairSharingDisabled",
                          "admissionScope.admissionMode UsageBasedAdmissionFairSharing has no "
                          "effect: the queueing configuration has no admissionFairSharing");
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
      q::LocalQueue l = internal::ToLocalQueue(api::kueue::LocalQueueView::Parse(*lq));
      l.fair_weight = LocalQueueWeight(*lq);
      core_.UpsertLocalQueue(std::move(l));
      RestoreLocalQueueConsumed(*lq);
    } else {
      core_.DeleteLocalQueue(ns, name);
    }
  }
}

void QueueManagerImpl::AddAffectedWorkloads(const Dirty& d, std::set<std::string>* keys) const {
  auto add = [keys](const std::map<std::string, std::set<std::string>, std::less<>>& index,
                    const std::string& bucket) {
    auto it = index.find(bucket);
    if (it != index.end()) keys->insert(it->second.begin(), it->second.end());
  };
  for (const std::string& ns : d.namespaces) add(by_ns_, ns);
  for (const std::string& lq : d.lqs) add(by_lq_, lq);
  if (d.cqs.empty()) return;
  for (const std::string& cq : d.cqs) add(by_cq_, cq);
  // Workloads waiting on a LocalQueue whose ClusterQueue (re)appeared or changed.
  for (const ObjectRef& lq : lqs_.List()) {
    const api::kueue::LocalQueueView view = api::kueue::LocalQueueView::Parse(*lq);
    if (d.cqs.contains(std::string(view.cluster_queue))) {
      add(by_lq_, absl::StrCat(Sv(view.meta.namespace_), "/", Sv(view.meta.name)));
    }
  }
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
  AddAffectedWorkloads(d, &keys);
  const bool config_changed =
      !d.flavors.empty() || !d.cohorts.empty() || !d.cqs.empty() || !d.lqs.empty();
  for (const WorkloadToSync& wl : SyncOrder(keys)) SyncWorkload(wl, now);
  if (nodes_changed || repair_retry_) RepairTopology(now);
  ProcessDeadlines(now);
  ProcessExecutionDeadlines(now);
  SampleFairSharing(now);
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
  if (defer_statuses_) {
    statuses_owed_ = true;
    owed_config_changed_ = owed_config_changed_ || config_changed;
  } else {
    retry = !WriteQueueStatuses(now, config_changed) || retry;
  }
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

QueueManager::Stats QueueManagerImpl::stats() const {
  absl::MutexLock lock(&mu_);
  return {cycles_, conversions_, queue_statuses_, status_batches_};
}

void QueueManagerImpl::DeferQueueStatuses() {
  absl::MutexLock lock(&mu_);
  defer_statuses_ = true;
}

bool QueueManagerImpl::FlushQueueStatuses() {
  absl::MutexLock lock(&mu_);
  if (!statuses_owed_) return true;
  const bool ok = WriteQueueStatuses(ctx_.clock.Now(), owed_config_changed_);
  owed_config_changed_ = false;  // Recounted; failed writes stay in the status sets.
  statuses_owed_ = !ok;
  return ok;
}

bool QueueManagerImpl::QueueStatusesOwed() const {
  absl::MutexLock lock(&mu_);
  return statuses_owed_;
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
QueueManager::Stats QueueManager::stats() const { return impl_->stats(); }
void QueueManager::DeferQueueStatuses() { impl_->DeferQueueStatuses(); }
bool QueueManager::FlushQueueStatuses() { return impl_->FlushQueueStatuses(); }
bool QueueManager::QueueStatusesOwed() const { return impl_->QueueStatusesOwed(); }
absl::StatusOr<api::Json> QueueManager::PendingWorkloadsSummary(const std::string& api_version,
                                                                const std::string& ns,
                                                                const std::string& name,
                                                                int64_t offset,
                                                                int64_t limit) const {
  return impl_->PendingWorkloadsSummary(api_version, ns, name, offset, limit);
}

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
