#include "queueing/admission.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "queueing/internal/core_state.h"

namespace batchd::queueing {
namespace internal {

// ---- Configuration --------------------------------------------------------

void CoreState::UpsertFlavor(ResourceFlavor f) {
  std::string name = f.name;
  flavors_[name] = std::move(f);
  MarkDirty();
  tas_.MarkDirty();
}
void CoreState::DeleteFlavor(const std::string& name) {
  flavors_.erase(name);
  MarkDirty();
  tas_.MarkDirty();
}
void CoreState::UpsertTopology(Topology t) {
  tas_.UpsertTopology(std::move(t));
  RequeueAll();
}
void CoreState::DeleteTopology(const std::string& name) {
  tas_.DeleteTopology(name);
  RequeueAll();
}
// Node capacity changes as pods outside TAS come and go: the snapshots are
// rebuilt at the next cycle, and only then are inadmissible workloads
// requeued (batched), and only when some flavor is topology-aware.
void CoreState::UpsertTopologyNode(TopologyNode n) {
  tas_.UpsertNode(std::move(n));
  if (tas_.any_tas_flavor()) RequeueAll();
}
void CoreState::DeleteTopologyNode(const std::string& name) {
  tas_.DeleteNode(name);
  if (tas_.any_tas_flavor()) RequeueAll();
}

std::vector<TopologyRepair> CoreState::RepairTopology() {
  EnsureBuilt();
  TasState& tas = Tas();
  std::vector<TopologyRepair> out;
  std::vector<AdmittedEntry*> entries;
  for (auto& [key, a] : admitted_) {
    if (a->cq != nullptr && !a->evicting) entries.push_back(a.get());
  }
  std::sort(entries.begin(), entries.end(),
            [](const AdmittedEntry* x, const AdmittedEntry* y) { return x->wl.key < y->wl.key; });
  for (AdmittedEntry* a : entries) {
    bool placed = false;
    for (const PodSetAssignment& psa : a->admission.pod_sets) {
      placed = placed || psa.topology.has_value();
    }
    if (!placed) continue;
    TopologyRepair r;
    r.key = a->wl.key;
    r.replacement = RepairPlacement(tas, *a->cq, a->wl, a->admission, &r.unhealthy_nodes);
    if (r.unhealthy_nodes.empty()) continue;
    if (r.replacement) {
      a->admission = *r.replacement;  // same pods and quota; TAS usage already moved
      ++version_;
    } else {
      a->cq->admitted.SetEvicting(a);  // the caller evicts it; not reported again
    }
    out.push_back(std::move(r));
  }
  return out;
}
void CoreState::UpsertCq(ClusterQueue cq) {
  CqInfo& info = CqFor(cq.name);
  info.spec = std::move(cq);
  MarkDirty();
}
void CoreState::DeleteCq(const std::string& name) {
  if (auto it = cqs_.find(name); it != cqs_.end()) it->second->spec.reset();
  MarkDirty();
}
void CoreState::UpsertCohort(Cohort c) {
  std::string name = c.name;
  cohorts_[name] = std::move(c);
  MarkDirty();
}
void CoreState::DeleteCohort(const std::string& name) {
  cohorts_.erase(name);
  MarkDirty();
}
void CoreState::UpsertLq(LocalQueue lq) {
  auto& slot = lqs_[{lq.namespace_, lq.name}];
  const bool weight_changed = slot.fair_weight != lq.fair_weight;
  slot = lq;
  RequeueAll();
  if (weight_changed && opts_.admission_fair_sharing) {
    const std::string key = lq.namespace_ + "/" + lq.name;
    for (auto& [name, cq] : cqs_) {
      if (cq->spec && cq->spec->admission_fair_sharing) AfsRekey(*cq, &key);
    }
  }
}
void CoreState::DeleteLq(const std::string& ns, const std::string& name) {
  lqs_.erase({ns, name});
  RequeueAll();
}

CqInfo& CoreState::CqFor(const std::string& name) {
  auto& slot = cqs_[name];
  if (!slot) {
    slot = std::make_unique<CqInfo>();
    slot->name = name;
    MarkDirty();
  }
  return *slot;
}

void CoreState::EnsureBuilt() {
  if (dirty_) Rebuild();
}

void CoreState::CompileCq(CqInfo& cq) {
  cq.groups.clear();
  cq.group_of.clear();
  if (!cq.spec) return;
  for (const ResourceGroup& rg : cq.spec->resource_groups) {
    CompiledGroup g;
    g.covered = rg.covered_resources;
    int gi = static_cast<int>(cq.groups.size());
    for (const std::string& r : rg.covered_resources) cq.group_of.emplace(r, gi);
    for (const FlavorQuotas& fq : rg.flavors) {
      CompiledFlavor cf;
      cf.name = fq.flavor;
      for (const std::string& r : rg.covered_resources) {
        FlavorResourceId id = flavor_resources_.Intern(fq.flavor, r);
        cf.resources.emplace_back(r, id);
        auto q = fq.resources.find(r);
        tree_->SetQuota(cq.node, id, q == fq.resources.end() ? ResourceQuota{} : q->second);
      }
      g.flavors.push_back(std::move(cf));
    }
    cq.groups.push_back(std::move(g));
  }
}

namespace {

// Cohorts on or leading into a parent cycle.
std::set<std::string> CyclicCohorts(const std::map<std::string, Cohort>& cohorts) {
  std::set<std::string> bad;
  for (const auto& [name, _] : cohorts) {
    std::vector<std::string> path;
    std::set<std::string> seen;
    std::string cur = name;
    while (!cur.empty() && !seen.contains(cur)) {
      if (bad.contains(cur)) break;
      seen.insert(cur);
      path.push_back(cur);
      auto it = cohorts.find(cur);
      cur = it == cohorts.end() ? "" : it->second.parent;
    }
    if (!cur.empty()) bad.insert(path.begin(), path.end());
  }
  return bad;
}

}  // namespace

void CoreState::Rebuild() {
  dirty_ = false;
  tree_ = std::make_unique<QuotaTree>(&flavor_resources_);
  cohort_nodes_.clear();
  std::set<std::string> cyclic = CyclicCohorts(cohorts_);
  auto cohort_node = [&](const std::string& name) {
    auto [it, inserted] = cohort_nodes_.try_emplace(name, kNoNode);
    if (inserted) {
      auto spec = cohorts_.find(name);
      it->second = tree_->AddNode(name, false, spec == cohorts_.end() ? 1 : spec->second.fair_weight);
    }
    return it->second;
  };
  for (const auto& [name, c] : cohorts_) {
    NodeId n = cohort_node(name);
    for (const ResourceGroup& rg : c.resource_groups) {
      for (const FlavorQuotas& fq : rg.flavors) {
        for (const auto& [r, q] : fq.resources) {
          tree_->SetQuota(n, flavor_resources_.Intern(fq.flavor, r), q);
        }
      }
    }
  }
  for (const auto& [name, c] : cohorts_) {
    if (!c.parent.empty() && !cyclic.contains(name)) {
      tree_->SetParent(cohort_node(name), cohort_node(c.parent));
    }
  }
  for (auto& [name, cq] : cqs_) {
    cq->node = kNoNode;
    if (!cq->spec) continue;
    cq->node = tree_->AddNode(name, true, cq->spec->fair_weight);
    CompileCq(*cq);
    if (!cq->spec->cohort.empty() && !cyclic.contains(cq->spec->cohort)) {
      tree_->SetParent(cq->node, cohort_node(cq->spec->cohort));
    }
  }
  tree_->Finalize();
  ActivateCqs(cyclic);
  for (auto& [key, a] : admitted_) {
    a->usage = UsageOf(a->admission);
    if (a->cq) {
      a->cq->admitted.Erase(a.get());
      a->cq->admitted.Insert(a.get());
    }
    if (a->cq && a->cq->node != kNoNode) tree_->AddUsage(a->cq->node, a->usage);
  }
  ++version_;
  RequeueAll();
}

// Which CQs can admit: defined, not stopped, not under a cohort cycle, and
// every flavor they name exists.
void CoreState::ActivateCqs(const std::set<std::string>& cyclic) {
  cq_of_node_.assign(tree_->size(), nullptr);
  for (auto& [name, cq] : cqs_) {
    if (cq->node != kNoNode) cq_of_node_[cq->node] = cq.get();
    cq->active = false;
    cq->tas_only = false;
    if (!cq->spec) {
      cq->inactive_message = absl::StrCat("ClusterQueue ", name, " doesn't exist");
    } else if (cq->spec->stop_policy != StopPolicy::kNone) {
      cq->inactive_message = absl::StrCat("ClusterQueue ", name, " is stopped");
    } else if (cyclic.contains(cq->spec->cohort)) {
      cq->inactive_message = absl::StrCat("ClusterQueue ", name, " is inactive: cohort ",
                                          cq->spec->cohort, " is part of a cycle");
    } else {
      cq->active = true;
      cq->inactive_message.clear();
      cq->tas_only = !cq->groups.empty();
      for (const CompiledGroup& g : cq->groups) {
        for (const CompiledFlavor& f : g.flavors) {
          auto rf = flavors_.find(f.name);
          if (rf == flavors_.end() || rf->second.topology_name.empty()) cq->tas_only = false;
          if (!flavors_.contains(f.name) && cq->active) {
            cq->active = false;
            cq->inactive_message = absl::StrCat("ClusterQueue ", name,
                                                " is inactive: flavor ", f.name, " not found");
          }
        }
      }
    }
  }
}

// ---- Workloads --------------------------------------------------------------

FlavorResourceAmounts CoreState::UsageOf(const Admission& a) {
  absl::flat_hash_map<FlavorResourceId, Amount> sum;
  for (const PodSetAssignment& ps : a.pod_sets) {
    for (const auto& [res, total] : ps.resource_usage) {
      auto f = ps.flavors.find(res);
      if (f == ps.flavors.end()) continue;
      FlavorResourceId id = flavor_resources_.Intern(f->second, res);
      sum[id] = api::SaturatingAdd(sum[id], total);
    }
  }
  FlavorResourceAmounts out(sum.begin(), sum.end());
  std::sort(out.begin(), out.end());
  return out;
}

void CoreState::Enqueue(PendingEntry* e) {
  e->queued_in.clear();
  if (!e->wl.active || e->wl.cluster_queue.empty()) return;
  CqInfo& cq = CqFor(e->wl.cluster_queue);
  e->queued_in = cq.name;
  e->afs_key = AfsKey(e->wl);
  if (e->wl.requeue_at) {
    backoff_.emplace(*e->wl.requeue_at, e->wl.key);
    ++backoff_per_cq_[cq.name];
    e->where = PendingEntry::Where::kBackoff;
    return;
  }
  cq.queue.PushHeap(e);
}

void CoreState::Dequeue(PendingEntry* e) {
  if (e->queued_in.empty()) return;
  CqInfo& cq = *cqs_[e->queued_in];
  if (e->where == PendingEntry::Where::kBackoff) {
    backoff_.erase({*e->wl.requeue_at, e->wl.key});
    --backoff_per_cq_[cq.name];
    e->where = PendingEntry::Where::kNone;
  } else {
    bool was_heap = e->where == PendingEntry::Where::kHeap;
    cq.queue.Erase(e);
    if (was_heap) cq.queue.ReleaseAfter(e);  // it represented its group
  }
  if (cq.sticky_preemptor == e->wl.key) cq.sticky_preemptor.clear();
  e->queued_in.clear();
}

// Events only mark what to requeue; the move happens once at the start of
// the next cycle (Kueue batches it per second), so a burst of finishing
// workloads costs one bulk move, not one per event.
void CoreState::RequeueTree(NodeId n) {
  if (dirty_ || n == kNoNode) return;  // a rebuild requeues everything
  requeue_roots_.insert(tree_->Root(n));
}

void CoreState::RequeueAll() { requeue_all_ = true; }

void CoreState::FlushRequeues() {
  if (requeue_all_) {
    for (auto& [_, cq] : cqs_) cq->queue.RequeueInadmissible();
  } else {
    for (NodeId root : requeue_roots_) {
      std::vector<NodeId> stack = {root};
      while (!stack.empty()) {
        NodeId x = stack.back();
        stack.pop_back();
        if (CqInfo* cq = cq_of_node_[x]) cq->queue.RequeueInadmissible();
        for (NodeId c : tree_->node(x).children) stack.push_back(c);
      }
    }
  }
  requeue_all_ = false;
  requeue_roots_.clear();
}

void CoreState::CountLqUsage(const AdmittedEntry& a, int sign) {
  LqCounters& c = LqOf(a.wl);
  c.admitted += sign;
  for (const PodSetAssignment& ps : a.admission.pod_sets) {
    for (const auto& [res, total] : ps.resource_usage) {
      auto f = ps.flavors.find(res);
      if (f == ps.flavors.end()) continue;
      Amount& u = c.usage[{f->second, res}];
      u = sign > 0 ? api::SaturatingAdd(u, total) : api::SaturatingSub(u, total);
    }
  }
}

void CoreState::ReleaseAdmitted(const std::string& key) {
  auto it = admitted_.find(key);
  if (it == admitted_.end()) return;
  AdmittedEntry* a = it->second.get();
  NodeId node = kNoNode;
  if (a->cq) {
    a->cq->admitted.Erase(a);
    node = a->cq->node;
    if (node != kNoNode && !dirty_) tree_->RemoveUsage(node, a->usage);
  }
  tas_.CountUsage(a->wl, a->admission, -1);
  CountLqUsage(*a, -1);
  admitted_.erase(it);
  ++version_;
  RequeueTree(node);
}

void CoreState::UpsertPending(Workload wl) {
  EnsureBuilt();
  ReleaseAdmitted(wl.key);
  auto& slot = pending_[wl.key];
  if (!slot) {
    slot = std::make_unique<PendingEntry>();
  } else {
    Dequeue(slot.get());
    --LqOf(slot->wl).pending;
  }
  slot->wl = std::move(wl);
  slot->signature = SchedulingSignature(slot->wl);
  slot->coarse_signature = SchedulingSignature(slot->wl, /*with_priority=*/false);
  ++LqOf(slot->wl).pending;
  Enqueue(slot.get());
}

namespace {

bool SameAdmission(const Admission& a, const Admission& b) {
  if (a.cluster_queue != b.cluster_queue || a.pod_sets.size() != b.pod_sets.size()) return false;
  for (size_t i = 0; i < a.pod_sets.size(); ++i) {
    const PodSetAssignment& x = a.pod_sets[i];
    const PodSetAssignment& y = b.pod_sets[i];
    if (x.name != y.name || x.count != y.count || x.flavors != y.flavors ||
        x.resource_usage != y.resource_usage || x.topology != y.topology) {
      return false;
    }
  }
  return true;
}

}  // namespace

void CoreState::SetAdmitted(Workload wl, Admission admission) {
  EnsureBuilt();
  std::string key = wl.key;
  // The same admission again (the caller applying our own decision, or a
  // status update): refresh the workload, keep usage, and trigger no requeue.
  if (auto it = admitted_.find(key); it != admitted_.end() &&
                                     SameAdmission(it->second->admission, admission)) {
    AdmittedEntry* a = it->second.get();
    bool moved_lq = a->wl.namespace_ != wl.namespace_ || a->wl.local_queue != wl.local_queue;
    if (moved_lq) CountLqUsage(*a, -1);
    a->evicting = a->evicting || wl.evicted;
    a->wl = std::move(wl);
    if (moved_lq) CountLqUsage(*a, +1);
    if (a->cq) {
      a->cq->admitted.Erase(a);
      a->cq->admitted.Insert(a);  // priority may have changed
    }
    return;
  }
  if (auto it = pending_.find(key); it != pending_.end()) {
    Dequeue(it->second.get());
    --LqOf(it->second->wl).pending;
    pending_.erase(it);
  }
  // An admission that changed in place (reclaimable pods, an elastic slice)
  // keeps its admission order for preemption.
  uint64_t seq = 0;
  if (auto it = admitted_.find(key); it != admitted_.end()) seq = it->second->admit_seq;
  ReleaseAdmitted(key);
  auto a = std::make_unique<AdmittedEntry>();
  a->wl = std::move(wl);
  a->admission = std::move(admission);
  a->usage = UsageOf(a->admission);
  a->admit_seq = seq != 0 ? seq : ++admit_seq_;
  a->evicting = a->wl.evicted;  // e.g. an eviction in flight across a restart
  a->cq = &CqFor(a->admission.cluster_queue);
  a->cq->admitted.Insert(a.get());
  EnsureBuilt();  // CqFor may have added a CQ
  if (a->cq->node != kNoNode) tree_->AddUsage(a->cq->node, a->usage);
  tas_.CountUsage(a->wl, a->admission, +1);
  CountLqUsage(*a, +1);
  ++version_;
  admitted_[key] = std::move(a);
}

void CoreState::Remove(const std::string& key) {
  EnsureBuilt();
  if (auto it = pending_.find(key); it != pending_.end()) {
    Dequeue(it->second.get());
    --LqOf(it->second->wl).pending;
    pending_.erase(it);
  }
  ReleaseAdmitted(key);
}

// ---- Read side --------------------------------------------------------------

namespace {

int64_t ShareToInt(double s) {
  if (std::isinf(s) || s >= 9.2e18) return std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(std::ceil(s));
}

}  // namespace

ClusterQueueStatus CoreState::CqStatus(const std::string& name) {
  EnsureBuilt();
  ClusterQueueStatus s;
  auto it = cqs_.find(name);
  if (it == cqs_.end()) return s;
  const CqInfo& cq = *it->second;
  s.exists = cq.spec.has_value();
  s.active = cq.active;
  s.inactive_message = cq.inactive_message;
  auto b = backoff_per_cq_.find(name);
  s.pending = static_cast<int64_t>(cq.queue.heap_size() + cq.queue.inadmissible_size()) +
              (b == backoff_per_cq_.end() ? 0 : b->second);
  s.admitted = static_cast<int64_t>(cq.admitted.size());
  if (cq.node == kNoNode) return s;
  for (const CompiledGroup& g : cq.groups) {
    for (const CompiledFlavor& f : g.flavors) {
      for (const auto& [res, id] : f.resources) {
        Amount u = tree_->Usage(cq.node, id), nom = tree_->Nominal(cq.node, id);
        s.usage.push_back({f.name, res, u, std::max<Amount>(0, api::SaturatingSub(u, nom)), nom});
      }
    }
  }
  s.weighted_share = ShareToInt(tree_->WeightedShare(cq.node, {}));
  return s;
}

CohortStatus CoreState::CohortStatusOf(const std::string& name) {
  EnsureBuilt();
  CohortStatus s;
  auto it = cohort_nodes_.find(name);
  if (it == cohort_nodes_.end()) return s;
  s.exists = cohorts_.contains(name);
  for (FlavorResourceId id = 0; id < flavor_resources_.size(); ++id) {
    Amount u = tree_->Usage(it->second, id), q = tree_->SubtreeQuota(it->second, id);
    if (u == 0 && q == 0) continue;
    s.usage.push_back({flavor_resources_.Flavor(id), flavor_resources_.Resource(id), u,
                       std::max<Amount>(0, api::SaturatingSub(u, q)), q});
  }
  s.weighted_share = ShareToInt(tree_->WeightedShare(it->second, {}));
  return s;
}

LocalQueueStatus CoreState::LqStatus(const std::string& ns, const std::string& name) const {
  LocalQueueStatus s;
  auto it = lq_counters_.find(ns + "/" + name);
  if (it == lq_counters_.end()) return s;
  s.pending = it->second.pending;
  s.admitted = it->second.admitted;
  for (const auto& [flavor_and_resource, u] : it->second.usage) {
    if (u != 0) s.usage.push_back({flavor_and_resource.first, flavor_and_resource.second, u, 0, 0});
  }
  s.consumed = it->second.consumed;
  s.last_update = it->second.last_update;
  s.weighted_usage = LqWeightedUsage(it->first);
  return s;
}

std::vector<std::string> CoreState::PendingOf(const std::string& name, size_t limit) {
  std::vector<std::string> out;
  auto it = cqs_.find(name);
  if (it == cqs_.end()) return out;
  const CqInfo& cq = *it->second;
  for (PendingEntry* e : cq.queue.heap()) {
    if (out.size() >= limit) return out;
    out.push_back(e->wl.key);
  }
  std::vector<PendingEntry*> rest = cq.queue.Inadmissible();
  for (const auto& [t, key] : backoff_) {
    auto p = pending_.find(key);
    if (p != pending_.end() && p->second->queued_in == name) rest.push_back(p->second.get());
  }
  for (PendingEntry* e : rest) {
    if (out.size() >= limit) break;
    out.push_back(e->wl.key);
  }
  return out;
}

std::vector<PendingWorkloadInfo> CoreState::PendingInQueueOrder(const std::string& name) const {
  std::vector<const PendingEntry*> entries;
  auto it = cqs_.find(name);
  if (it == cqs_.end()) return {};
  const CqInfo& cq = *it->second;
  entries.reserve(cq.queue.heap_size() + cq.queue.inadmissible_size());
  for (const PendingEntry* e : cq.queue.heap()) entries.push_back(e);
  for (const PendingEntry* e : cq.queue.Inadmissible()) entries.push_back(e);
  if (auto b = backoff_per_cq_.find(name); b != backoff_per_cq_.end() && b->second > 0) {
    for (const auto& [t, key] : backoff_) {
      auto p = pending_.find(key);
      if (p != pending_.end() && p->second->queued_in == name) entries.push_back(p->second.get());
    }
  }
  std::sort(entries.begin(), entries.end(), EntryOrder());
  std::vector<PendingWorkloadInfo> out;
  out.reserve(entries.size());
  for (const PendingEntry* e : entries) {
    out.push_back({e->wl.key, e->wl.namespace_, e->wl.local_queue, e->wl.priority, e->wl.creation});
  }
  return out;
}

std::string CoreState::CheckInvariants() {
  EnsureBuilt();
  return tree_->CheckInvariants();
}

}  // namespace internal

// ---- AdmissionCore ----------------------------------------------------------

AdmissionCore::AdmissionCore(Options opts)
    : state_(std::make_unique<internal::CoreState>(std::move(opts))) {}
AdmissionCore::~AdmissionCore() = default;

void AdmissionCore::UpsertResourceFlavor(ResourceFlavor f) { state_->UpsertFlavor(std::move(f)); }
void AdmissionCore::DeleteResourceFlavor(std::string_view n) { state_->DeleteFlavor(std::string(n)); }
void AdmissionCore::UpsertClusterQueue(ClusterQueue cq) { state_->UpsertCq(std::move(cq)); }
void AdmissionCore::DeleteClusterQueue(std::string_view n) { state_->DeleteCq(std::string(n)); }
void AdmissionCore::UpsertCohort(Cohort c) { state_->UpsertCohort(std::move(c)); }
void AdmissionCore::DeleteCohort(std::string_view n) { state_->DeleteCohort(std::string(n)); }
void AdmissionCore::UpsertLocalQueue(LocalQueue lq) { state_->UpsertLq(std::move(lq)); }
void AdmissionCore::SampleAdmissionFairSharing(absl::Time now) { state_->SampleAfs(now); }
void AdmissionCore::RestoreLocalQueueConsumed(std::string_view ns, std::string_view name,
                                              std::map<std::string, double> consumed,
                                              absl::Time last_update) {
  state_->RestoreLqConsumed(std::string(ns) + "/" + std::string(name), std::move(consumed),
                            last_update);
}
void AdmissionCore::DeleteLocalQueue(std::string_view ns, std::string_view n) {
  state_->DeleteLq(std::string(ns), std::string(n));
}
void AdmissionCore::UpsertTopology(Topology t) { state_->UpsertTopology(std::move(t)); }
void AdmissionCore::DeleteTopology(std::string_view name) {
  state_->DeleteTopology(std::string(name));
}
void AdmissionCore::UpsertTopologyNode(TopologyNode n) {
  state_->UpsertTopologyNode(std::move(n));
}
void AdmissionCore::DeleteTopologyNode(std::string_view name) {
  state_->DeleteTopologyNode(std::string(name));
}
std::vector<TopologyRepair> AdmissionCore::RepairTopology() { return state_->RepairTopology(); }
void AdmissionCore::UpsertPending(Workload wl) { state_->UpsertPending(std::move(wl)); }
void AdmissionCore::SetAdmitted(Workload wl, Admission a) {
  state_->SetAdmitted(std::move(wl), std::move(a));
}
void AdmissionCore::Remove(std::string_view key) { state_->Remove(std::string(key)); }
std::vector<Decision> AdmissionCore::RunCycle(absl::Time now) { return state_->RunCycle(now); }
ClusterQueueStatus AdmissionCore::ClusterQueueStatusOf(std::string_view n) const {
  return state_->CqStatus(std::string(n));
}
CohortStatus AdmissionCore::CohortStatusOf(std::string_view n) const {
  return state_->CohortStatusOf(std::string(n));
}
LocalQueueStatus AdmissionCore::LocalQueueStatusOf(std::string_view ns, std::string_view n) const {
  return state_->LqStatus(std::string(ns), std::string(n));
}
std::vector<std::string> AdmissionCore::PendingWorkloads(std::string_view cq, size_t limit) const {
  return state_->PendingOf(std::string(cq), limit);
}
std::vector<PendingWorkloadInfo> AdmissionCore::PendingInQueueOrder(std::string_view cq) const {
  return state_->PendingInQueueOrder(std::string(cq));
}
std::optional<absl::Time> AdmissionCore::NextRequeueAt() const { return state_->NextRequeueAt(); }
bool AdmissionCore::IsAdmitted(std::string_view key) const {
  return state_->IsAdmitted(std::string(key));
}
bool AdmissionCore::IsPending(std::string_view key) const {
  return state_->IsPending(std::string(key));
}
size_t AdmissionCore::PendingCount() const { return state_->PendingCount(); }
size_t AdmissionCore::AdmittedCount() const { return state_->AdmittedCount(); }
uint64_t AdmissionCore::HeadsEvaluated() const { return state_->heads_evaluated(); }
uint64_t AdmissionCore::UsageVersion() const { return state_->UsageVersion(); }
absl::Status AdmissionCore::CheckInvariants() const {
  std::string err = state_->CheckInvariants();
  return err.empty() ? absl::OkStatus() : absl::FailedPreconditionError(err);
}

}  // namespace batchd::queueing
