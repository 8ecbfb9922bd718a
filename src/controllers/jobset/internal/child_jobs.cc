#include "controllers/jobset/internal/child_jobs.h"

#include "absl/strings/numbers.h"
#include "api/json_access.h"
#include "api/meta/conditions.h"
#include "api/meta/time_util.h"
#include "common/string_view.h"

namespace batchd::controllers::jobset::internal {

namespace js = api::jobset_v1alpha2;
using api::Json;

namespace {

ChildJob MakeChild(const client::ObjectRef& ref) {
  ChildJob c{ref, api::batch_v1::JobView::Parse(*ref), {}, {}, {}, {}};
  c.rjob = c.view.meta.Label(js::kReplicatedJobNameKey).value_or("");
  return c;
}

// "Complete", "Failed" or "" (active), as upstream's JobFinished.
std::string_view FinishedType(const ChildJob& c) {
  const Json* conds = c.view.status.conditions;
  if (conds == nullptr) return "";
  for (const Json& cond : *conds) {
    std::string_view type = api::StringMember(cond, "type");
    if ((type == "Complete" || type == "Failed") &&
        api::StringMember(cond, "status") == api::meta::kConditionTrue) {
      return type;
    }
  }
  return "";
}

void ReadFailure(ChildJob& c) {
  const Json* cond = c.view.status.conditions == nullptr
                         ? nullptr
                         : api::meta::FindConditionIn(*c.view.status.conditions, "Failed");
  if (cond == nullptr) return;
  c.failure_reason = api::StringMember(*cond, "reason");
  c.failure_message = api::StringMember(*cond, "message");
  auto t = api::meta::ParseRfc3339(api::StringMember(*cond, "lastTransitionTime"));
  if (t.ok()) c.failure_time = *t;
}

}  // namespace

bool ChildJobs::Has(std::string_view name) const {
  for (const auto* list : {&active, &succeeded, &failed, &previous}) {
    for (const ChildJob& c : *list) {
      if (c.name() == name) return true;
    }
  }
  return false;
}

ChildJobs Classify(const std::vector<client::ObjectRef>& jobs, int32_t restarts) {
  ChildJobs out;
  for (const client::ObjectRef& ref : jobs) {
    ChildJob c = MakeChild(ref);
    int64_t attempt = 0;
    // A Job whose restart-attempt label is missing or unreadable cannot be
    // told to be current: it is replaced like a previous attempt's.
    if (!absl::SimpleAtoi(Sv(c.view.meta.Label(js::kRestartsKey).value_or("")), &attempt) ||
        attempt < restarts) {
      out.previous.push_back(std::move(c));
      continue;
    }
    const std::string_view finished = FinishedType(c);
    if (finished == "Failed") {
      ReadFailure(c);
      out.failed.push_back(std::move(c));
    } else if (finished == "Complete") {
      out.succeeded.push_back(std::move(c));
    } else {
      out.active.push_back(std::move(c));
    }
  }
  return out;
}

std::vector<js::ReplicatedJobCounts> CountReplicatedJobs(const js::JobSetSpecView& spec,
                                                         const ChildJobs& jobs) {
  std::vector<js::ReplicatedJobCounts> counts;
  for (const js::ReplicatedJobView& r : spec.replicated_jobs) {
    counts.push_back({std::string(r.name)});
  }
  auto find = [&counts](std::string_view rjob) -> js::ReplicatedJobCounts* {
    for (js::ReplicatedJobCounts& c : counts) {
      if (c.name == rjob) return &c;
    }
    return nullptr;  // Not a replicated job of the spec: not counted.
  };
  for (const ChildJob& j : jobs.active) {
    js::ReplicatedJobCounts* c = find(j.rjob);
    if (c == nullptr) continue;
    const api::batch_v1::JobSpecView& spec_v = j.view.spec;
    int32_t pods = spec_v.parallelism;
    if (spec_v.completions && *spec_v.completions < pods) pods = *spec_v.completions;
    if (j.view.status.succeeded + j.view.status.ready.value_or(0) >= pods) ++c->ready;
    if (j.view.status.active > 0) ++c->active;
    if (spec_v.suspend) ++c->suspended;
  }
  for (const ChildJob& j : jobs.succeeded) {
    if (js::ReplicatedJobCounts* c = find(j.rjob)) ++c->succeeded;
  }
  for (const ChildJob& j : jobs.failed) {
    if (js::ReplicatedJobCounts* c = find(j.rjob)) ++c->failed;
  }
  return counts;
}

const js::ReplicatedJobCounts* FindCounts(const std::vector<js::ReplicatedJobCounts>& counts,
                                          std::string_view rjob) {
  for (const js::ReplicatedJobCounts& c : counts) {
    if (c.name == rjob) return &c;
  }
  return nullptr;
}

}  // namespace batchd::controllers::jobset::internal
