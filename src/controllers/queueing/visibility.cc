// Kueue's visibility API (visibility.kueue.x-k8s.io v1beta2 / v1beta1,
// KEP-168-2): the pending workloads of a ClusterQueue or a LocalQueue, on
// demand, with their positions. Positions count every pending workload of
// the ClusterQueue in queue order (priority, then queue-order time), as
// Kueue ranks them; a LocalQueue's list is the ClusterQueue's order filtered
// to that queue.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "api/json_access.h"
#include "api/kueue/queue_views.h"
#include "api/meta/time_util.h"
#include "common/string_view.h"
#include "controllers/queueing/internal/queue_manager_impl.h"

namespace batchd::controllers::queueing {

absl::StatusOr<api::Json> QueueManagerImpl::PendingWorkloadsSummary(
    const std::string& api_version, const std::string& ns, const std::string& name,
    int64_t offset, int64_t limit) const {
  std::string cq = name;
  if (!ns.empty()) {
    client::ObjectRef lq = lqs_.Get(ns, name);
    if (!lq) {
      return absl::NotFoundError(
          absl::StrCat("localqueues.visibility.kueue.x-k8s.io \"", name, "\" not found"));
    }
    cq = std::string(api::kueue::LocalQueueView::Parse(*lq).cluster_queue);
  } else if (!cqs_.Get("", name)) {
    return absl::NotFoundError(
        absl::StrCat("clusterqueues.visibility.kueue.x-k8s.io \"", name, "\" not found"));
  }
  std::vector<batchd::queueing::PendingWorkloadInfo> pending;
  {
    absl::MutexLock lock(&mu_);
    pending = core_.PendingInQueueOrder(cq);
  }
  Json items = Json::array();
  std::map<std::string, int64_t> in_lq;  // "ns/lq" -> pending ahead so far
  int64_t matched = 0;
  for (size_t i = 0; i < pending.size(); ++i) {
    const auto& p = pending[i];
    int64_t lq_pos = in_lq[absl::StrCat(p.namespace_, "/", p.local_queue)]++;
    if (!ns.empty() && (p.namespace_ != ns || p.local_queue != name)) continue;
    if (matched++ < offset) continue;
    if (static_cast<int64_t>(items.size()) >= limit) break;
    std::string wl_name = p.key.substr(p.key.find('/') + 1);
    Json meta = {{"name", wl_name},
                 {"namespace", p.namespace_},
                 {"creationTimestamp", api::meta::FormatRfc3339(p.creation)}};
    // ownerReferences as the Workload has them (kueuectl reads the job from them).
    if (client::ObjectRef wl = workloads_.Get(p.namespace_, wl_name)) {
      const Json& m = api::MemberObject(*wl, "metadata");
      if (auto it = m.find("ownerReferences"); it != m.end()) meta["ownerReferences"] = *it;
    }
    items.push_back({{"metadata", std::move(meta)},
                     {"priority", p.priority},
                     {"localQueueName", p.local_queue},
                     {"positionInClusterQueue", static_cast<int64_t>(i)},
                     {"positionInLocalQueue", lq_pos}});
  }
  return Json{{"kind", "PendingWorkloadsSummary"},
              {"apiVersion", api_version},
              {"metadata", {{"name", name}, {"creationTimestamp", nullptr}}},
              {"items", std::move(items)}};
}

}  // namespace batchd::controllers::queueing
