// Admission fair sharing on the queue manager's side (Kueue's
// AdmissionFairSharing, KEP-4136): the configuration's admissionFairSharing
// block turns it on; ClusterQueues opt in with spec.admissionScope
// {admissionMode: UsageBasedAdmissionFairSharing}; LocalQueues weigh in with
// spec.fairSharing.weight. Every usageSamplingInterval the core folds each
// LocalQueue's usage into its decayed consumed resources
// (queueing/types.h AdmissionFairSharing); LocalQueue status carries them
// (status.fairSharing.admissionFairSharingStatus) and a restart resumes
// from there. A ClusterQueue asking for it while the configuration has no
// admissionFairSharing block gets a Warning Event (the mode has no
// parameters to run with), as Kueue ignores it then.
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "api/json_access.h"
#include "api/kueue/queue_writers.h"
#include "api/meta/object_meta.h"
#include "api/meta/time_util.h"
#include "api/resource/amount.h"
#include "api/resource/quantity.h"
#include "controllers/queueing/internal/queue_manager_impl.h"

namespace batchd::controllers::queueing {

namespace q = batchd::queueing;
using api::Json;

bool QueueManagerImpl::AdmissionScopeOn(const Json& cq) {
  return api::AsString(api::MemberAt(cq, {"spec", "admissionScope", "admissionMode"})) ==
         "UsageBasedAdmissionFairSharing";
}

double QueueManagerImpl::LocalQueueWeight(const Json& lq) {
  const Json& w = api::MemberAt(lq, {"spec", "fairSharing", "weight"});
  if (w.is_null()) return 1;
  absl::StatusOr<api::Quantity> v = api::Quantity::FromJson(w);
  return v.ok() ? v->AsApproximateDouble() : 1;
}

void QueueManagerImpl::RestoreLocalQueueConsumed(const Json& lq) {
  if (!cfg_.admission_fair_sharing) return;
  const std::string key = client::Informer::KeyOf(lq);
  if (!afs_restored_.insert(key).second) return;
  const Json& st =
      api::MemberAt(lq, {"status", "fairSharing", "admissionFairSharingStatus"});
  const Json& consumed = api::Member(st, "consumedResources");
  if (!consumed.is_object()) return;
  std::optional<absl::Time> last = api::meta::ParseOptionalRfc3339(api::AsString(api::Member(st, "lastUpdate")));
  std::map<std::string, double> values;
  for (const auto& [r, v] : consumed.items()) {
    absl::StatusOr<api::Quantity> qv = api::Quantity::FromJson(v);
    if (qv.ok()) values[r] = static_cast<double>(api::Amount::FromQuantity(*qv).milli());
  }
  core_.RestoreLocalQueueConsumed(api::meta::GetNamespace(lq), api::meta::GetName(lq),
                                  std::move(values), last.value_or(absl::UnixEpoch()));
  // Resume the sampling schedule where the last process left it.
  if (last) {
    const absl::Time next = *last + cfg_.admission_fair_sharing->usage_sampling_interval;
    if (!next_afs_sample_ || next < *next_afs_sample_) next_afs_sample_ = next;
  }
}

void QueueManagerImpl::SampleFairSharing(absl::Time now) {
  if (!cfg_.admission_fair_sharing) return;
  if (next_afs_sample_ && now < *next_afs_sample_) return;
  core_.SampleAdmissionFairSharing(now);
  next_afs_sample_ = now + cfg_.admission_fair_sharing->usage_sampling_interval;
  for (const client::ObjectRef& lq : lqs_.List()) {
    status_lqs_.insert(client::Informer::KeyOf(*lq));
  }
}

void QueueManagerImpl::SetLocalQueueFairSharing(api::kueue::StatusUpdate& update,
                                                const q::LocalQueueStatus& st) {
  if (!cfg_.admission_fair_sharing || !st.last_update) return;
  Json consumed = Json::object();
  for (const auto& [r, v] : st.consumed) {
    consumed[r] = api::Amount::FromMilli(static_cast<int64_t>(std::llround(v))).ToString();
  }
  update.status()["fairSharing"] = {
      {"weightedShare", static_cast<int64_t>(std::llround(std::min(st.weighted_usage, 9.2e18) / 1000))},
      {"admissionFairSharingStatus",
       {{"consumedResources", std::move(consumed)},
        {"lastUpdate", api::meta::FormatRfc3339(*st.last_update)}}}};
}

}  // namespace batchd::controllers::queueing
