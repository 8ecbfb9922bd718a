// The queue manager's per-workload indexes and incremental pending counts,
// so that a cycle's work follows what changed rather than what is pending:
//   - by_ns_ / by_lq_ / by_cq_: which workloads a namespace, LocalQueue or
//     ClusterQueue change can affect (re-synced by key, never by a walk of
//     every workload);
//   - counts_: pending workloads per ClusterQueue and LocalQueue that the
//     core does not see (inadmissible, or waiting on a missing queue), kept
//     by recounting only the workloads touched this cycle (counted_ holds
//     each one's current contribution);
//   - status_cqs_ / status_lqs_: the queues whose status must be recomputed
//     after the cycle.
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/string_view.h"
#include "controllers/queueing/internal/queue_manager_impl.h"

namespace batchd::controllers::queueing {
namespace {

void EraseFrom(std::map<std::string, std::set<std::string>, std::less<>>& index,
               const std::string& bucket, const std::string& key) {
  auto it = index.find(bucket);
  if (it == index.end()) return;
  it->second.erase(key);
  if (it->second.empty()) index.erase(it);
}

std::string NamespaceOf(const std::string& key) { return key.substr(0, key.find('/')); }

}  // namespace

void QueueManagerImpl::MarkQueueStatus(const std::string& cq, const std::string& lq_key) {
  if (!cq.empty()) status_cqs_.insert(cq);
  if (!lq_key.empty()) status_lqs_.insert(lq_key);
}

void QueueManagerImpl::IndexWorkload(const std::string& key, std::string_view lq_name) {
  std::string lq_key = absl::StrCat(NamespaceOf(key), "/", Sv(lq_name));
  auto [it, inserted] = wl_lq_.try_emplace(key, lq_key);
  if (!inserted) {
    if (it->second == lq_key) return;
    EraseFrom(by_lq_, it->second, key);
    MarkQueueStatus("", it->second);
    it->second = lq_key;
  } else {
    by_ns_[NamespaceOf(key)].insert(key);
  }
  by_lq_[lq_key].insert(key);
  MarkQueueStatus("", lq_key);
}

void QueueManagerImpl::UnindexWorkload(const std::string& key) {
  auto it = wl_lq_.find(key);
  if (it == wl_lq_.end()) return;
  EraseFrom(by_lq_, it->second, key);
  EraseFrom(by_ns_, NamespaceOf(key), key);
  MarkQueueStatus("", it->second);
  wl_lq_.erase(it);
}

void QueueManagerImpl::SetWorkloadCq(const std::string& key, const std::string& cq) {
  auto [it, inserted] = wl_cq_.try_emplace(key, cq);
  if (!inserted) {
    if (it->second == cq) return;
    EraseFrom(by_cq_, it->second, key);
    MarkQueueStatus(it->second, "");
    it->second = cq;
  }
  by_cq_[cq].insert(key);
  MarkQueueStatus(cq, "");
}

void QueueManagerImpl::ClearWorkloadCq(const std::string& key) {
  auto it = wl_cq_.find(key);
  if (it == wl_cq_.end()) return;
  EraseFrom(by_cq_, it->second, key);
  MarkQueueStatus(it->second, "");
  wl_cq_.erase(it);
}

void QueueManagerImpl::Recount(const std::string& key) {
  // Subtract what the workload counted before.
  if (auto it = counted_.find(key); it != counted_.end()) {
    const Counted& c = it->second;
    auto dec = [this](const std::string& bucket, bool inadmissible, bool outside)
                   ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      auto ct = counts_.find(bucket);
      if (ct == counts_.end()) return;
      ct->second.inadmissible -= inadmissible ? 1 : 0;
      ct->second.outside_core -= outside ? 1 : 0;
      if (ct->second.inadmissible == 0 && ct->second.outside_core == 0) counts_.erase(ct);
    };
    if (!c.cq.empty()) dec(c.cq, true, c.outside_core);
    if (c.outside_core && !c.lq_key.empty()) dec(c.lq_key, false, true);
    MarkQueueStatus(c.cq, c.lq_key);
    counted_.erase(it);
  }
  // Add what it counts now: a pending workload with a pending reason counts
  // as inadmissible in its ClusterQueue; one the core does not hold is added
  // to its queues' pending counts.
  auto lq = wl_lq_.find(key);
  const std::string lq_key = lq == wl_lq_.end() ? "" : lq->second;
  MarkQueueStatus("", lq_key);
  if (auto cq = wl_cq_.find(key); cq != wl_cq_.end()) MarkQueueStatus(cq->second, "");
  if (!inadmissible_.contains(key)) return;
  Counted c;
  c.outside_core = !core_.IsPending(key);
  if (auto cq = wl_cq_.find(key); cq != wl_cq_.end()) c.cq = cq->second;
  if (c.outside_core) c.lq_key = lq_key;
  if (!c.cq.empty()) {
    PendingCounts& pc = counts_[c.cq];
    ++pc.inadmissible;
    if (c.outside_core) ++pc.outside_core;
  }
  if (c.outside_core && !c.lq_key.empty()) ++counts_[c.lq_key].outside_core;
  MarkQueueStatus(c.cq, c.lq_key);
  counted_.emplace(key, std::move(c));
}

void QueueManagerImpl::RecountAll() {
  counts_.clear();
  counted_.clear();
  for (const std::string& key : inadmissible_) Recount(key);
}

}  // namespace batchd::controllers::queueing
