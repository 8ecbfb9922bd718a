#include "api/batch/v1/cronjob_writers.h"

#include <string>

#include "api/json_access.h"
#include "api/meta/object_view.h"
#include "api/meta/time_util.h"

namespace batchd::api::batch_v1 {

void AddCronJobActive(Json& cronjob, const Json& job) {
  const meta::ObjectMetaView m = meta::ObjectMetaView::Parse(job);
  MutableArray(MutableObject(cronjob, "status"), "active")
      .push_back({{"apiVersion", "batch/v1"},
                  {"kind", "Job"},
                  {"namespace", std::string(m.namespace_)},
                  {"name", std::string(m.name)},
                  {"uid", std::string(m.uid)},
                  {"resourceVersion", std::string(m.resource_version)}});
}

bool RemoveCronJobActive(Json& cronjob, std::string_view job_uid) {
  Json* active = FindMutableMemberAt(cronjob, {"status", "active"});
  if (active == nullptr || !active->is_array()) return false;
  const size_t before = active->size();
  Json kept = Json::array();
  for (Json& ref : *active) {
    if (!ref.is_object() || StringMember(ref, "uid") != job_uid) kept.push_back(std::move(ref));
  }
  *active = std::move(kept);
  return active->size() != before;
}

void SetCronJobLastScheduleTime(Json& cronjob, absl::Time t) {
  MutableObject(cronjob, "status")["lastScheduleTime"] = meta::FormatRfc3339(t);
}

void SetCronJobLastSuccessfulTime(Json& cronjob, absl::Time t) {
  MutableObject(cronjob, "status")["lastSuccessfulTime"] = meta::FormatRfc3339(t);
}

Json NewJobFromTemplate(const Json* job_template, std::string_view name, std::string_view ns) {
  const Json& tmpl = job_template != nullptr ? *job_template : EmptyObject();
  Json job = {{"apiVersion", "batch/v1"},
              {"kind", "Job"},
              {"metadata", {{"name", std::string(name)}, {"namespace", std::string(ns)}}},
              {"spec", MemberObject(tmpl, "spec")}};
  const Json& tmeta = MemberObject(tmpl, "metadata");
  for (const char* field : {"labels", "annotations"}) {
    if (const Json& v = Member(tmeta, field); v.is_object()) job["metadata"][field] = v;
  }
  return job;
}

}  // namespace batchd::api::batch_v1
