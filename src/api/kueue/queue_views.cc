#include "api/kueue/queue_views.h"

#include <algorithm>

#include "api/json_access.h"
#include "api/meta/time_util.h"

namespace batchd::api::kueue {

namespace {

constexpr std::string_view kDefaultPodSetName = "main";

std::string_view NameOr(const Json& obj) {
  const Json* n = FindMember(obj, "name");
  return n != nullptr && n->is_string() ? AsString(*n) : kDefaultPodSetName;
}

}  // namespace

WorkloadView WorkloadView::Parse(const Json& workload) {
  WorkloadView v;
  v.meta = meta::ObjectMetaView::Parse(workload);
  const Json& spec = MemberObject(workload, "spec");
  v.queue_name = StringMember(spec, "queueName");
  v.active = BoolMember(spec, "active", true);
  const Json& status = MemberObject(workload, "status");
  const Json& admission = Member(status, "admission");
  v.has_admission = admission.is_object();
  v.admission_cluster_queue = StringMember(admission, "clusterQueue");
  const Json& requeue = MemberObject(status, "requeueState");
  v.requeue_count = static_cast<int32_t>(IntMember(requeue, "count"));
  v.requeue_at = meta::ParseOptionalRfc3339(StringMember(requeue, "requeueAt"));
  if (const Json& c = Member(status, "conditions"); c.is_array()) v.conditions = &c;
  return v;
}

PodSetView PodSetView::Parse(const Json& pod_set) {
  PodSetView p;
  p.name = NameOr(pod_set);
  p.count = static_cast<int32_t>(IntMember(pod_set, "count", 1));
  if (auto m = AsOptionalInt(Member(pod_set, "minCount"))) p.min_count = static_cast<int32_t>(*m);
  if (const Json& t = Member(pod_set, "template"); t.is_object()) p.pod_template = &t;
  return p;
}

WorkloadPodSetsView WorkloadPodSetsView::Parse(const Json& workload) {
  WorkloadPodSetsView v;
  for (const Json& ps : MemberArray(MemberObject(workload, "spec"), "podSets")) {
    v.pod_sets.push_back(PodSetView::Parse(ps));
  }
  const Json& admission = MemberObject(MemberObject(workload, "status"), "admission");
  for (const Json& a : MemberArray(admission, "podSetAssignments")) {
    PodSetAssignmentView pa;
    pa.name = NameOr(a);
    if (auto c = AsOptionalInt(Member(a, "count"))) pa.count = static_cast<int32_t>(*c);
    for (const Json& flavor : MemberObject(a, "flavors")) {  // Values: resource -> flavor.
      if (flavor.is_string()) pa.flavors.push_back(AsString(flavor));
    }
    std::sort(pa.flavors.begin(), pa.flavors.end());
    pa.flavors.erase(std::unique(pa.flavors.begin(), pa.flavors.end()), pa.flavors.end());
    v.assignments.push_back(std::move(pa));
  }
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

ResourceFlavorView ResourceFlavorView::Parse(const Json& resource_flavor) {
  ResourceFlavorView v;
  v.meta = meta::ObjectMetaView::Parse(resource_flavor);
  const Json& spec = MemberObject(resource_flavor, "spec");
  if (const Json& l = Member(spec, "nodeLabels"); l.is_object()) v.node_labels = &l;
  if (const Json& t = Member(spec, "tolerations"); t.is_array()) v.tolerations = &t;
  return v;
}

}  // namespace batchd::api::kueue
