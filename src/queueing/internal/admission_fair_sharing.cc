// Admission fair sharing (Kueue's AdmissionFairSharing, KEP-4136; reference
// §1.2 admissionScope, §1.4 admissionFairSharing): within a ClusterQueue
// whose admissionScope is UsageBasedAdmissionFairSharing, pending workloads
// are ordered first by their LocalQueue's weighted usage (lower first), then
// priority and queue-order time. Usage is the LocalQueue's consumed
// resources, an exponentially decayed average of its admitted usage
// sampled every interval, plus the entry penalty of admissions since the
// last sample (types.h AdmissionFairSharing).
//
// Cost: a sample is O(LocalQueues + pending workloads); an admission in a
// fair-sharing ClusterQueue re-keys the pending workloads of its LocalQueue
// (O(pending) scan). ClusterQueues without admissionScope pay nothing.
#include <cmath>
#include <limits>

#include "queueing/internal/core_state.h"

namespace batchd::queueing::internal {

double CoreState::AfsAlpha() const {
  if (!opts_.admission_fair_sharing) return 0;
  const AdmissionFairSharing& afs = *opts_.admission_fair_sharing;
  if (afs.half_life <= absl::ZeroDuration()) return 1;
  return 1 - std::pow(0.5, absl::FDivDuration(afs.sampling, afs.half_life));
}

double CoreState::LqWeightedUsage(const std::string& lq_key) const {
  if (!opts_.admission_fair_sharing) return 0;
  auto it = lq_counters_.find(lq_key);
  if (it == lq_counters_.end()) return 0;
  const std::map<std::string, double>& weights = opts_.admission_fair_sharing->resource_weights;
  auto weight_of = [&weights](const std::string& r) {
    auto w = weights.find(r);
    return w == weights.end() ? 1.0 : w->second;
  };
  double sum = 0;
  for (const auto& [r, v] : it->second.consumed) sum += weight_of(r) * v;
  for (const auto& [r, v] : it->second.penalty) sum += weight_of(r) * v;
  double lq_weight = 1;
  const size_t slash = lq_key.find('/');
  if (auto lq = lqs_.find({lq_key.substr(0, slash), lq_key.substr(slash + 1)}); lq != lqs_.end()) {
    lq_weight = lq->second.fair_weight;
  }
  if (lq_weight <= 0) return sum > 0 ? std::numeric_limits<double>::infinity() : 0;
  return sum / lq_weight;
}

double CoreState::AfsKey(const Workload& wl) const {
  if (!opts_.admission_fair_sharing || wl.cluster_queue.empty()) return 0;
  auto cq = cqs_.find(wl.cluster_queue);
  if (cq == cqs_.end() || !cq->second->spec || !cq->second->spec->admission_fair_sharing) return 0;
  return LqWeightedUsage(wl.namespace_ + "/" + wl.local_queue);
}

void CoreState::AfsRekey(CqInfo& cq, const std::string* lq_key) {
  for (auto& [key, e] : pending_) {
    PendingEntry* p = e.get();
    if (p->queued_in != cq.name) continue;
    if (lq_key != nullptr && p->wl.namespace_ + "/" + p->wl.local_queue != *lq_key) continue;
    const double k = AfsKey(p->wl);
    if (k == p->afs_key) continue;
    switch (p->where) {
      case PendingEntry::Where::kHeap:
        cq.queue.Erase(p);
        p->afs_key = k;
        cq.queue.PushHeap(p);
        break;
      case PendingEntry::Where::kInadmissible:
        cq.queue.Erase(p);
        p->afs_key = k;
        cq.queue.PushInadmissible(p, p->group);
        break;
      default:  // backoff, or popped this cycle: not in an ordered set
        p->afs_key = k;
        break;
    }
  }
}

void CoreState::AfsAdmitted(CqInfo& cq, const Workload& wl, const FlavorResourceAmounts& usage) {
  if (!opts_.admission_fair_sharing || !cq.spec || !cq.spec->admission_fair_sharing) return;
  const std::string lq_key = wl.namespace_ + "/" + wl.local_queue;
  LqCounters& c = lq_counters_[lq_key];
  const double alpha = AfsAlpha();
  for (const auto& [id, v] : usage) {
    c.penalty[flavor_resources_.Resource(id)] += alpha * static_cast<double>(v);
  }
  AfsRekey(cq, &lq_key);
}

void CoreState::SampleAfs(absl::Time now) {
  if (!opts_.admission_fair_sharing) return;
  const double alpha = AfsAlpha();
  for (auto& [key, c] : lq_counters_) {
    std::map<std::string, double> current;
    for (const auto& [fr, v] : c.usage) current[fr.second] += static_cast<double>(v);
    for (auto& [r, v] : c.consumed) v *= 1 - alpha;
    for (const auto& [r, v] : current) c.consumed[r] += alpha * v;
    for (auto it = c.consumed.begin(); it != c.consumed.end();) {
      it = it->second < 1e-3 && !current.contains(it->first) ? c.consumed.erase(it) : std::next(it);
    }
    c.penalty.clear();
    c.last_update = now;
  }
  for (auto& [name, cq] : cqs_) {
    if (cq->spec && cq->spec->admission_fair_sharing) AfsRekey(*cq, nullptr);
  }
}

void CoreState::RestoreLqConsumed(const std::string& key, std::map<std::string, double> consumed,
                                  absl::Time last_update) {
  LqCounters& c = lq_counters_[key];
  c.consumed = std::move(consumed);
  c.last_update = last_update;
  for (auto& [name, cq] : cqs_) {
    if (cq->spec && cq->spec->admission_fair_sharing) AfsRekey(*cq, &key);
  }
}

}  // namespace batchd::queueing::internal
