#include "api/jobset/v1alpha2/jobset_writers.h"

#include <algorithm>

#include "api/jobset/v1alpha2/constants.h"
#include "api/json_access.h"

namespace batchd::api::jobset_v1alpha2 {
namespace {

Json CountsJson(const ReplicatedJobCounts& c) {
  return {{"name", c.name},           {"ready", c.ready},   {"succeeded", c.succeeded},
          {"failed", c.failed},       {"active", c.active}, {"suspended", c.suspended}};
}

// The other condition of the StartupPolicy pair, or "".
std::string_view ExclusiveWith(std::string_view type) {
  if (type == kConditionStartupInProgress) return kConditionStartupCompleted;
  if (type == kConditionStartupCompleted) return kConditionStartupInProgress;
  return "";
}

}  // namespace

bool SetReplicatedJobsStatus(Json& js, const std::vector<ReplicatedJobCounts>& counts) {
  Json want = Json::array();
  for (const ReplicatedJobCounts& c : counts) want.push_back(CountsJson(c));
  Json& status = MutableObject(js, "status");
  const Json& have = Member(status, "replicatedJobsStatus");
  if (have.is_array() && have.size() == want.size() &&
      std::all_of(want.begin(), want.end(), [&](const Json& w) {
        return std::find(have.begin(), have.end(), w) != have.end();
      })) {
    return false;
  }
  if (want.empty() && !have.is_array()) return false;
  status["replicatedJobsStatus"] = std::move(want);
  return true;
}

bool SetJobSetCondition(Json& js, const meta::Condition& c, absl::Time now) {
  Json& status = MutableObject(js, "status");
  bool changed = false;
  const std::string_view other = ExclusiveWith(c.type);
  if (Json* conds = FindMutableMemberAt(status, {"conditions"}); conds && conds->is_array()) {
    for (Json& existing : *conds) {
      if (!other.empty() && c.status == meta::kConditionTrue &&
          StringMember(existing, "type") == other &&
          StringMember(existing, "status") == meta::kConditionTrue) {
        existing["status"] = meta::kConditionFalse;
        changed = true;
      }
    }
  }
  const bool exists = meta::FindConditionIn(Member(status, "conditions"), c.type) != nullptr;
  if (!exists && c.status != meta::kConditionTrue) return changed;
  return meta::SetConditionIn(MutableArray(status, "conditions"), meta::ConditionShape::kMeta, c,
                              now) ||
         changed;
}

bool SetTerminalState(Json& js, std::string_view state) {
  Json& status = MutableObject(js, "status");
  if (StringMember(status, "terminalState") == state) return false;
  status["terminalState"] = std::string(state);
  return true;
}

bool SetRestarts(Json& js, int32_t restarts, int32_t restarts_count_towards_max) {
  Json& status = MutableObject(js, "status");
  bool changed = false;
  if (!status.contains("restarts") || IntMember(status, "restarts", -1) != restarts) {
    status["restarts"] = restarts;
    changed = true;
  }
  if (IntMember(status, "restartsCountTowardsMax") != restarts_count_towards_max) {
    if (restarts_count_towards_max == 0) {
      status.erase("restartsCountTowardsMax");
    } else {
      status["restartsCountTowardsMax"] = restarts_count_towards_max;
    }
    changed = true;
  }
  return changed;
}

bool SetInPlaceRestartAttempts(Json& js, std::optional<int32_t> current,
                               std::optional<int32_t> previous) {
  Json& status = MutableObject(js, "status");
  bool changed = false;
  for (auto [field, value] : {std::pair{"currentInPlaceRestartAttempt", current},
                              std::pair{"previousInPlaceRestartAttempt", previous}}) {
    if (!value) continue;
    const Json& old = Member(status, field);
    if (old.is_number_integer() && old.get<int64_t>() == *value) continue;
    status[field] = *value;
    changed = true;
  }
  return changed;
}

}  // namespace batchd::api::jobset_v1alpha2
