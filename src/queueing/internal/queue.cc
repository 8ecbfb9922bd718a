#include "queueing/internal/queue.h"

#include <algorithm>
#include <string_view>

#include "absl/hash/hash.h"
#include "queueing/internal/state.h"

namespace batchd::queueing::internal {

uint64_t SchedulingSignature(const Workload& wl, bool with_priority) {
  size_t h = with_priority ? absl::HashOf(wl.cluster_queue, wl.namespace_, wl.local_queue,
                                          wl.priority, wl.namespace_labels, wl.replaces)
                           : absl::HashOf(std::string_view("any priority"), wl.cluster_queue,
                                          wl.namespace_, wl.local_queue, wl.namespace_labels,
                                          wl.replaces);
  for (const PodSet& ps : wl.pod_sets) {
    h = absl::HashOf(h, ps.name, ps.count, ps.min_count.value_or(-1), ps.requests,
                     ps.node_selector);
    for (const NodeSelectorTerm& term : ps.required_affinity) {
      for (const auto& r : term) h = absl::HashOf(h, r.String());
    }
    for (const Toleration& t : ps.tolerations) {
      h = absl::HashOf(h, t.key, static_cast<int>(t.op), t.value,
                       t.effect ? static_cast<int>(*t.effect) : -1);
    }
    if (ps.topology) {
      h = absl::HashOf(h, static_cast<int>(ps.topology->mode), ps.topology->level);
      for (const TopologySlice& s : ps.topology->slices) h = absl::HashOf(h, s.level, s.size);
    }
  }
  return h;
}

bool EntryOrder::operator()(const PendingEntry* a, const PendingEntry* b) const {
  if (a->afs_key != b->afs_key) return a->afs_key < b->afs_key;
  if (a->wl.priority != b->wl.priority) return a->wl.priority > b->wl.priority;
  if (a->wl.queue_order_time != b->wl.queue_order_time) {
    return a->wl.queue_order_time < b->wl.queue_order_time;
  }
  if (a->wl.uid != b->wl.uid) return a->wl.uid < b->wl.uid;
  return a->wl.key < b->wl.key;
}

void CqQueue::PushHeap(PendingEntry* e) {
  heap_.insert(e);
  e->where = PendingEntry::Where::kHeap;
}

void CqQueue::PushInadmissible(PendingEntry* e, uint64_t group) {
  const uint64_t from = e->released_from;
  e->released_from = 0;
  // Its outcome no longer proves anything for the group it came from.
  if (from != 0 && from != group) ReleaseNext(from);
  groups_[group].insert(e);
  e->group = group;
  ++inadmissible_count_;
  e->where = PendingEntry::Where::kInadmissible;
}

void CqQueue::ReleaseAfter(PendingEntry* e) {
  const uint64_t from = e->released_from;
  e->released_from = 0;
  ReleaseNext(e->signature);
  if (e->coarse_signature != 0) ReleaseNext(e->coarse_signature);
  if (from != 0 && from != e->signature && from != e->coarse_signature) ReleaseNext(from);
}

void CqQueue::Erase(PendingEntry* e) {
  if (e->where == PendingEntry::Where::kHeap) heap_.erase(e);
  if (e->where == PendingEntry::Where::kInadmissible) {
    auto g = groups_.find(e->group);
    if (g != groups_.end() && g->second.erase(e) > 0) {
      --inadmissible_count_;
      if (g->second.empty()) groups_.erase(g);
    }
  }
  e->where = PendingEntry::Where::kNone;
}

PendingEntry* CqQueue::PopHead() {
  if (heap_.empty()) return nullptr;
  PendingEntry* e = *heap_.begin();
  heap_.erase(heap_.begin());
  e->where = PendingEntry::Where::kNone;
  return e;
}

void CqQueue::ReleaseNext(uint64_t group) {
  auto g = groups_.find(group);
  if (g == groups_.end()) return;
  PendingEntry* e = *g->second.begin();
  g->second.erase(g->second.begin());
  if (g->second.empty()) groups_.erase(g);
  --inadmissible_count_;
  PushHeap(e);
  e->released_from = group;
}

size_t CqQueue::RequeueInadmissible() {
  std::vector<uint64_t> sigs;
  sigs.reserve(groups_.size());
  for (const auto& [sig, _] : groups_) sigs.push_back(sig);
  for (uint64_t sig : sigs) ReleaseNext(sig);
  return sigs.size();
}

std::vector<PendingEntry*> CqQueue::Inadmissible() const {
  std::vector<PendingEntry*> out;
  out.reserve(inadmissible_count_);
  for (const auto& [_, g] : groups_) out.insert(out.end(), g.begin(), g.end());
  std::sort(out.begin(), out.end(), EntryOrder());
  return out;
}

uint64_t FlavorResourceMask(const FlavorResourceAmounts& u) {
  uint64_t m = 0;
  for (const auto& [id, v] : u) {
    if (v > 0) m |= uint64_t{1} << (id & 63);
  }
  return m;
}

uint64_t FlavorResourceMask(const std::vector<FlavorResourceId>& ids) {
  uint64_t m = 0;
  for (FlavorResourceId id : ids) m |= uint64_t{1} << (id & 63);
  return m;
}

void AdmittedList::Insert(AdmittedEntry* e) {
  e->slot = summaries_.size();
  summaries_.push_back({e, FlavorResourceMask(e->usage), e->admit_seq, e->wl.queue_order_time,
                        e->wl.priority, e->evicting});
}

void AdmittedList::Erase(AdmittedEntry* e) {
  size_t i = e->slot;
  if (i >= summaries_.size() || summaries_[i].entry != e) return;
  summaries_[i] = summaries_.back();
  summaries_[i].entry->slot = i;
  summaries_.pop_back();
}

void AdmittedList::SetEvicting(AdmittedEntry* e) {
  e->evicting = true;
  if (e->slot < summaries_.size() && summaries_[e->slot].entry == e) {
    summaries_[e->slot].evicting = true;
  }
}

}  // namespace batchd::queueing::internal
