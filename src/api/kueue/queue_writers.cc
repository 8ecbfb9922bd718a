#include "api/kueue/queue_writers.h"

#include <string>
#include <utility>

#include "api/json_access.h"
#include "api/meta/time_util.h"
#include "api/resource/quantity.h"

namespace batchd::api::kueue {

namespace {

// [{name: flavor, resources: [{name, total[, borrowed]}]}].
Json FlavorsUsageJson(const std::vector<FlavorUsageStatus>& flavors) {
  Json out = Json::array();
  for (const FlavorUsageStatus& f : flavors) {
    Json resources = Json::array();
    for (const ResourceUsageStatus& r : f.resources) {
      Json e = {{"name", r.name}, {"total", ResourceQuantityJson(r.name, r.total)}};
      if (r.borrowed) e["borrowed"] = ResourceQuantityJson(r.name, *r.borrowed);
      resources.push_back(std::move(e));
    }
    out.push_back({{"name", f.name}, {"resources", std::move(resources)}});
  }
  return out;
}

void SetWorkloadCounts(Json& status, int64_t pending, int64_t reserving, int64_t admitted) {
  status["pendingWorkloads"] = pending;
  status["reservingWorkloads"] = reserving;
  status["admittedWorkloads"] = admitted;
}

void SetFlavorsUsage(Json& status, const std::vector<FlavorUsageStatus>& flavors) {
  Json usage = FlavorsUsageJson(flavors);
  status["flavorsReservation"] = usage;
  status["flavorsUsage"] = std::move(usage);
}

void SetActive(StatusUpdate& update, const ActiveCondition& active, absl::Time now) {
  SetCondition(update,
               {"Active", active.active ? meta::kConditionTrue : meta::kConditionFalse,
                std::string(active.reason), std::string(active.message)},
               now);
}

}  // namespace

Json ResourceQuantityJson(std::string_view resource, Amount amount) {
  if (resource == "cpu") return amount.ToQuantity(QuantityFormat::kDecimalSI).String();
  const bool binary = resource == "memory" || resource == "ephemeral-storage" ||
                      resource.substr(0, 10) == "hugepages-";
  if (binary && amount.milli() % 1000 == 0) {
    return Quantity::FromInt(amount.milli() / 1000, QuantityFormat::kBinarySI).String();
  }
  return amount.ToQuantity(QuantityFormat::kDecimalSI).String();
}

StatusUpdate::StatusUpdate(const Json& obj)
    : obj_(&obj),
      status_(MemberObject(obj, "status")),
      generation_(IntMember(Member(obj, "metadata"), "generation")) {}

bool StatusUpdate::changed() const { return status_ != Member(*obj_, "status"); }

Json StatusUpdate::Build(std::string_view api_version, std::string_view kind) && {
  Json out = Json::object();
  if (obj_->is_object()) {
    for (auto it = obj_->begin(); it != obj_->end(); ++it) {
      if (it.key() != "status") out[it.key()] = *it;
    }
  }
  out["status"] = std::move(status_);
  out["apiVersion"] = api_version;
  out["kind"] = kind;
  return out;
}

bool SetCondition(StatusUpdate& update, const meta::Condition& condition, absl::Time now) {
  return meta::SetConditionIn(MutableArray(update.status(), "conditions"),
                              meta::ConditionShape::kMeta, condition, now, update.generation());
}

bool RemoveCondition(StatusUpdate& update, std::string_view type) {
  Json* conditions = FindMutableMemberAt(update.status(), {"conditions"});
  return conditions != nullptr && meta::RemoveConditionIn(*conditions, type);
}

void SetClusterQueueStatus(StatusUpdate& update, const ClusterQueueStatusValues& values,
                           absl::Time now) {
  Json& status = update.status();
  SetFlavorsUsage(status, values.flavors_usage);
  SetWorkloadCounts(status, values.pending_workloads, values.reserving_workloads,
                    values.admitted_workloads);
  if (values.weighted_share) SetFairSharingStatus(update, *values.weighted_share);
  SetActive(update, values.active, now);
}

void SetLocalQueueStatus(StatusUpdate& update, const LocalQueueStatusValues& values,
                         absl::Time now) {
  Json& status = update.status();
  SetWorkloadCounts(status, values.pending_workloads, values.reserving_workloads,
                    values.admitted_workloads);
  SetFlavorsUsage(status, values.flavors_usage);
  SetActive(update, values.active, now);
}

void SetFairSharingStatus(StatusUpdate& update, int64_t weighted_share) {
  update.status()["fairSharing"] = {{"weightedShare", weighted_share}};
}

void SetAdmission(StatusUpdate& update, const AdmissionStatus& admission) {
  Json sets = Json::array();
  for (const PodSetAssignmentStatus& ps : admission.pod_set_assignments) {
    Json flavors = Json::object();
    for (const auto& [resource, flavor] : ps.flavors) flavors[std::string(resource)] = flavor;
    Json usage = Json::object();
    for (const ResourceAmount& r : ps.resource_usage) {
      usage[std::string(r.name)] = ResourceQuantityJson(r.name, r.amount);
    }
    sets.push_back({{"name", ps.name},
                    {"flavors", std::move(flavors)},
                    {"resourceUsage", std::move(usage)},
                    {"count", ps.count}});
    if (ps.topology) sets.back()["topologyAssignment"] = EncodeTopologyAssignment(*ps.topology);
  }
  update.status()["admission"] = {{"clusterQueue", admission.cluster_queue},
                                  {"podSetAssignments", std::move(sets)}};
}

void ClearRequeueAt(StatusUpdate& update) {
  Json& status = update.status();
  auto rs = status.find("requeueState");
  if (rs != status.end() && rs->is_object()) rs->erase("requeueAt");
}

void SetRequeueState(StatusUpdate& update, int32_t count, absl::Time requeue_at) {
  update.status()["requeueState"] = {{"count", count},
                                     {"requeueAt", meta::FormatRfc3339(requeue_at)}};
}

void ClearRequeueState(StatusUpdate& update) { update.status().erase("requeueState"); }

void SetUnhealthyNodes(StatusUpdate& update, const std::vector<std::string>& names) {
  if (names.empty()) {
    update.status().erase("unhealthyNodes");
    return;
  }
  Json list = Json::array();
  for (const std::string& n : names) list.push_back({{"name", n}});
  update.status()["unhealthyNodes"] = std::move(list);
}

Json ActivePatch(bool active) { return {{"spec", {{"active", active}}}}; }

}  // namespace batchd::api::kueue
