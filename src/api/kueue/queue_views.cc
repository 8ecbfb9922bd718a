#include "api/kueue/queue_views.h"

#include "api/json_access.h"
#include "api/meta/time_util.h"

namespace batchd::api::kueue {

WorkloadView WorkloadView::Parse(const Json& workload) {
  WorkloadView v;
  v.meta = meta::ObjectMetaView::Parse(workload);
  const Json& spec = MemberObject(workload, "spec");
  v.queue_name = StringMember(spec, "queueName");
  v.active = BoolMember(spec, "active", true);
  const Json& status = MemberObject(workload, "status");
  v.has_admission = Member(status, "admission").is_object();
  const Json& requeue = MemberObject(status, "requeueState");
  v.requeue_count = static_cast<int32_t>(IntMember(requeue, "count"));
  v.requeue_at = meta::ParseOptionalRfc3339(StringMember(requeue, "requeueAt"));
  if (const Json& c = Member(status, "conditions"); c.is_array()) v.conditions = &c;
  return v;
}

LocalQueueView LocalQueueView::Parse(const Json& local_queue) {
  LocalQueueView v;
  v.meta = meta::ObjectMetaView::Parse(local_queue);
  v.spec = &MemberObject(local_queue, "spec");
  v.cluster_queue = StringMember(*v.spec, "clusterQueue");
  return v;
}

ClusterQueueView ClusterQueueView::Parse(const Json& cluster_queue) {
  ClusterQueueView v;
  v.meta = meta::ObjectMetaView::Parse(cluster_queue);
  v.spec = &MemberObject(cluster_queue, "spec");
  for (const Json& g : MemberArray(*v.spec, "resourceGroups")) {
    ResourceGroup group;
    for (const Json& r : MemberArray(g, "coveredResources")) {
      if (r.is_string()) group.covered_resources.push_back(AsString(r));
    }
    for (const Json& f : MemberArray(g, "flavors")) group.flavors.push_back(StringMember(f, "name"));
    v.resource_groups.push_back(std::move(group));
  }
  return v;
}

}  // namespace batchd::api::kueue
