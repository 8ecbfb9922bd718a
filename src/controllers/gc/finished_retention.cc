#include "controllers/gc/finished_retention.h"

#include <algorithm>
#include <utility>

#include "api/json_access.h"
#include "api/meta/time_util.h"
#include "common/logging.h"

namespace batchd::controllers {

using api::Json;

FinishedRetentionSweeper::FinishedRetentionSweeper(registry::Registry& registry, Clock& clock,
                                                   const api::KindDef& kind,
                                                   std::string condition, absl::Duration after)
    : registry_(registry),
      clock_(clock),
      kind_(kind),
      condition_(std::move(condition)),
      after_(after),
      worker_(clock, std::clamp(after / 10, absl::Seconds(1), absl::Minutes(1)),
              [this] { Sweep(); }) {}

int FinishedRetentionSweeper::Sweep() {
  auto list = registry_.List(kind_, "", registry::ListOptions{});
  if (!list.ok()) {
    BATCHD_LOG_WARN("retention of {}: list failed: {}", kind_.plural, list.status().ToString());
    return 0;
  }
  const absl::Time now = clock_.Now();
  int deleted = 0;
  for (const registry::ObjectPtr& o : list->items) {
    std::shared_ptr<const Json> obj = o->Shared();
    const Json& status = api::MemberObject(*obj, "status");
    const Json* conds = api::FindMember(status, "conditions");
    if (conds == nullptr || !conds->is_array()) continue;
    for (const Json& c : *conds) {
      if (!c.is_object() || c.value("type", "") != condition_ || c.value("status", "") != "True") {
        continue;
      }
      absl::StatusOr<absl::Time> since =
          api::meta::ParseRfc3339(c.value("lastTransitionTime", ""));
      if (!since.ok() || now - *since < after_) break;
      const Json& meta = api::MemberObject(*obj, "metadata");
      registry::DeleteOptions d;
      d.precondition_uid = api::CopyStringMember(meta, "uid");
      d.propagation_policy = "Background";
      auto r = registry_.Delete(kind_, api::CopyStringMember(meta, "namespace"),
                                api::CopyStringMember(meta, "name"), d);
      if (r.ok()) ++deleted;
      break;
    }
  }
  return deleted;
}

}  // namespace batchd::controllers
