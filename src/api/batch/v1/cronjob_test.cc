#include <functional>
#include <string>
#include <vector>

#include "api/batch/v1/batch_v1.h"
#include "api/batch/v1/internal/test_fixtures.h"
#include "api/core/v1/core_v1.h"
#include "gtest/gtest.h"

namespace batchd::api::batch_v1 {
namespace {

using testing::Messages;
using testing::RawCronJob;

Json Defaulted(Json cj) {
  SetDefaultsCronJob(cj);
  return cj;
}

TEST(ValidateCronJobCreateTest, Table) {
  struct Case {
    std::string name;
    std::function<void(Json&)> mutate;  // Before defaulting.
    std::vector<std::string> want;
  };
  const Case cases[] = {
      {"valid", [](Json&) {}, {}},
      {"macro schedule", [](Json& j) { j["spec"]["schedule"] = "@daily"; }, {}},
      {"every schedule (robfig ParseStandard accepts it)",
       [](Json& j) { j["spec"]["schedule"] = "@every 1h"; }, {}},
      {"valid time zone", [](Json& j) { j["spec"]["timeZone"] = "America/New_York"; }, {}},
      {"bad schedule", [](Json& j) { j["spec"]["schedule"] = "x"; },
       {"spec.schedule: Invalid value: \"x\": expected exactly 5 fields, found 1: [x]"}},
      {"out of range", [](Json& j) { j["spec"]["schedule"] = "0 0 * * 7"; },
       {"spec.schedule: Invalid value: \"0 0 * * 7\": end of range (7) above maximum (6): 7"}},
      {"empty schedule", [](Json& j) { j["spec"]["schedule"] = ""; }, {"spec.schedule: Required value"}},
      {"TZ in schedule", [](Json& j) { j["spec"]["schedule"] = "TZ=UTC 0 * * * *"; },
       {"spec.schedule: Invalid value: \"TZ=UTC 0 * * * *\": cannot use TZ or CRON_TZ in schedule, "
        "use timeZone field instead"}},
      {"CRON_TZ with a bad zone", [](Json& j) { j["spec"]["schedule"] = "CRON_TZ=Mars/Base 0 * * * *"; },
       {"spec.schedule: Invalid value: \"CRON_TZ=Mars/Base 0 * * * *\": provided bad location "
        "Mars/Base: unknown time zone Mars/Base",
        "spec.schedule: Invalid value: \"CRON_TZ=Mars/Base 0 * * * *\": cannot use TZ or CRON_TZ "
        "in schedule, use timeZone field instead"}},
      {"unknown time zone", [](Json& j) { j["spec"]["timeZone"] = "Mars/Olympus"; },
       {"spec.timeZone: Invalid value: \"Mars/Olympus\": unknown time zone Mars/Olympus"}},
      {"time zone with bad characters", [](Json& j) { j["spec"]["timeZone"] = "../etc/passwd"; },
       {"spec.timeZone: Invalid value: \"../etc/passwd\": unknown time zone ../etc/passwd"}},
      {"empty time zone", [](Json& j) { j["spec"]["timeZone"] = ""; },
       {"spec.timeZone: Invalid value: \"\": timeZone must be nil or non-empty string"}},
      {"Local time zone", [](Json& j) { j["spec"]["timeZone"] = "Local"; },
       {"spec.timeZone: Invalid value: \"Local\": timeZone must be an explicit time zone as "
        "defined in https://www.iana.org/time-zones"}},
      {"negative deadline and limits",
       [](Json& j) {
         j["spec"]["startingDeadlineSeconds"] = -1;
         j["spec"]["successfulJobsHistoryLimit"] = -1;
         j["spec"]["failedJobsHistoryLimit"] = -2;
       },
       {"spec.startingDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0",
        "spec.successfulJobsHistoryLimit: Invalid value: -1: must be greater than or equal to 0",
        "spec.failedJobsHistoryLimit: Invalid value: -2: must be greater than or equal to 0"}},
      {"unknown concurrencyPolicy", [](Json& j) { j["spec"]["concurrencyPolicy"] = "Sometimes"; },
       {"spec.concurrencyPolicy: Unsupported value: \"Sometimes\": supported values: \"Allow\", "
        "\"Forbid\", \"Replace\""}},
      {"template restartPolicy Always",
       [](Json& j) { j["spec"]["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"] = "Always"; },
       {"spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "
        "\"OnFailure\", \"Never\""}},
      {"template selector", [](Json& j) { j["spec"]["jobTemplate"]["spec"]["selector"] = Json::object(); },
       {"spec.jobTemplate.spec.selector: Invalid value: {}: `selector` will be auto-generated"}},
      {"name of 52 is fine", [](Json& j) { j["metadata"]["name"] = std::string(52, 'c'); }, {}},
      {"name of 53 is too long", [](Json& j) { j["metadata"]["name"] = std::string(53, 'c'); },
       {"metadata.name: Invalid value: \"" + std::string(53, 'c') +
        "\": must be no more than 52 characters"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Json cj = RawCronJob();
    c.mutate(cj);
    EXPECT_EQ(Messages(ValidateCronJobCreate(Defaulted(cj))), c.want);
  }
}

TEST(ValidateCronJobUpdateTest, Table) {
  struct Case {
    std::string name;
    std::function<void(Json&)> old_mutate;
    std::function<void(Json&)> update;
    std::vector<std::string> want;
  };
  const auto none = [](Json&) {};
  const Case cases[] = {
      {"change schedule", none, [](Json& j) { j["spec"]["schedule"] = "0 * * * *"; }, {}},
      {"long legacy name stays updatable", [](Json& j) { j["metadata"]["name"] = std::string(60, 'c'); },
       [](Json& j) { j["spec"]["suspend"] = true; }, {}},
      {"legacy TZ schedule stays updatable",
       [](Json& j) { j["spec"]["schedule"] = "TZ=UTC 0 * * * *"; },
       [](Json& j) { j["spec"]["schedule"] = "TZ=UTC 5 * * * *"; }, {}},
      {"legacy TZ plus timeZone", [](Json& j) { j["spec"]["schedule"] = "TZ=UTC 0 * * * *"; },
       [](Json& j) { j["spec"]["timeZone"] = "UTC"; },
       {"spec.schedule: Invalid value: \"TZ=UTC 0 * * * *\": cannot use both timeZone field and "
        "TZ or CRON_TZ in schedule"}},
      {"new TZ rejected", none, [](Json& j) { j["spec"]["schedule"] = "TZ=UTC 0 * * * *"; },
       {"spec.schedule: Invalid value: \"TZ=UTC 0 * * * *\": cannot use TZ or CRON_TZ in schedule, "
        "use timeZone field instead"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Json raw = RawCronJob();
    c.old_mutate(raw);
    Json old = Defaulted(raw);
    Json now = old;
    c.update(now);
    EXPECT_EQ(Messages(ValidateCronJobUpdate(now, old)), c.want);
  }
}

TEST(CronJobKindTest, Identity) {
  const KindDef d = CronJobKind();
  EXPECT_EQ(d.GroupResource(), "cronjobs.batch");
  EXPECT_EQ(d.short_names, std::vector<std::string>{"cj"});
  EXPECT_EQ(d.categories, std::vector<std::string>{"all"});
  EXPECT_TRUE(d.has_status_subresource);
  Json cj = RawCronJob();
  cj["status"] = {{"lastScheduleTime", "2024-01-01T00:00:00Z"}};
  d.prepare_for_create(cj);
  EXPECT_EQ(cj["status"], Json::object());

  const KindDef j = JobKind();
  EXPECT_EQ(j.GroupKind(), "Job.batch");
  EXPECT_TRUE(j.short_names.empty());
  EXPECT_EQ(j.default_propagation_policy, "Orphan");
  EXPECT_EQ(j.columns.size(), j.row_cells(testing::Created(testing::RawJob()), absl::UnixEpoch()).size());
  EXPECT_EQ(d.columns.size(), d.row_cells(RawCronJob(), absl::UnixEpoch()).size());
  Json job = testing::Created(testing::RawJob());
  EXPECT_EQ(j.field_value(job, "status.successful"), "0");
  job["status"]["succeeded"] = 4;
  EXPECT_EQ(j.field_value(job, "status.successful"), "4");

  Scheme scheme;
  RegisterKinds(scheme);
  EXPECT_NE(scheme.ByResource("batch", "v1", "jobs"), nullptr);
  EXPECT_NE(scheme.ByKind("batch", "v1", "CronJob"), nullptr);
}

}  // namespace
}  // namespace batchd::api::batch_v1
