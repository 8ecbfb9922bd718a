#include "controllers/cronjob/cronjob_controller.h"

#include <algorithm>
#include <string>
#include <vector>

#include "api/meta/object_meta.h"
#include "api/meta/time_util.h"
#include "client/in_process_client.h"
#include "common/testing/fake_clock.h"
#include "controllers/cronjob/internal/schedule.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "registry/registry.h"
#include "store/memory/memory_store.h"

namespace batchd::controllers {

using reconcile::ControllerContext;
using reconcile::FakeEventRecorder;
using reconcile::InformerFactory;
using reconcile::Manager;

namespace {

using api::Json;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Not;

const absl::Time kStart = absl::FromUnixSeconds(1767225600);  // 2026-01-01T00:00:00Z

std::string JobNameAt(absl::Duration since_start) {
  return cronjob::internal::JobName("cj", kStart + since_start);
}

// One fresh API server + CronJob controller on a fake clock.
class Env {
 public:
  Env() {
    EXPECT_TRUE(reg_.Start().ok());
    AddCronJobController(ctx_);
    EXPECT_TRUE(mgr_.SyncAll().ok());
  }

  static Json CronJob(const std::string& schedule) {
    Json pod_spec = {{"restartPolicy", "Never"},
                     {"containers", Json::array({{{"name", "c"}, {"image", "busybox"}}})}};
    Json tmpl = {{"metadata", {{"labels", {{"team", "a"}}}, {"annotations", {{"note", "x"}}}}},
                 {"spec", {{"template", {{"spec", pod_spec}}}}}};
    return {{"apiVersion", "batch/v1"},
            {"kind", "CronJob"},
            {"metadata", {{"name", "cj"}, {"namespace", "default"}}},
            {"spec", {{"schedule", schedule}, {"jobTemplate", tmpl}}}};
  }

  void Create(const Json& cj) { ASSERT_TRUE(client_.Create(CronJobs(), "default", cj).ok()); }

  // Advances the clock timer by timer (each reconcile sees the time its
  // requeue was due), reconciling after each, until `d` has passed.
  void RunFor(absl::Duration d) {
    absl::Time end = clock_.Now() + d;
    mgr_.RunUntilIdle();
    for (absl::Time next = clock_.NextTimer(); next <= end; next = clock_.NextTimer()) {
      clock_.AdvanceTo(next);
      mgr_.RunUntilIdle();
    }
    clock_.AdvanceTo(end);
    mgr_.RunUntilIdle();
  }

  std::vector<std::string> JobNames() {
    std::vector<std::string> names;
    auto list = client_.List(Jobs(), "default");
    EXPECT_TRUE(list.ok());
    for (const auto& j : list->items) names.push_back(api::meta::GetName(j));
    std::sort(names.begin(), names.end());
    return names;
  }

  Json GetCronJob() {
    auto cj = client_.Get(CronJobs(), "default", "cj");
    EXPECT_TRUE(cj.ok());
    return cj.ok() ? *cj : Json::object();
  }

  std::vector<std::string> ActiveNames() {
    std::vector<std::string> names;
    Json st = GetCronJob().value("status", Json::object());
    for (const auto& r : st.value("active", Json::array())) names.push_back(r.value("name", ""));
    std::sort(names.begin(), names.end());
    return names;
  }

  // Marks a Job finished (`Complete` or `Failed`) as the Job controller would.
  void FinishJob(const std::string& name, const std::string& type, absl::Time start) {
    auto job = client_.Get(Jobs(), "default", name);
    ASSERT_TRUE(job.ok());
    std::string now = api::meta::FormatRfc3339(clock_.Now());
    auto cond = [&now](const char* t) {
      return Json{{"type", t},
                  {"status", "True"},
                  {"lastTransitionTime", now},
                  {"lastProbeTime", now},
                  {"reason", "Test"},
                  {"message", "test"}};
    };
    Json& st = (*job)["status"];
    st["startTime"] = api::meta::FormatRfc3339(start);
    if (type == "Complete") {
      st["conditions"] = Json::array({cond("SuccessCriteriaMet"), cond("Complete")});
      st["completionTime"] = now;
      st["succeeded"] = 1;
    } else {
      st["conditions"] = Json::array({cond("FailureTarget"), cond("Failed")});
      st["failed"] = 1;
    }
    auto r = client_.UpdateStatus(Jobs(), *job);
    ASSERT_TRUE(r.ok()) << r.status();
  }

  int CountReason(const std::string& reason) {
    auto r = events_.Reasons();
    return static_cast<int>(std::count(r.begin(), r.end(), reason));
  }

  const api::KindDef& Jobs() { return client_.Kind("batch", "v1", "jobs"); }
  const api::KindDef& CronJobs() { return client_.Kind("batch", "v1", "cronjobs"); }

  FakeClock clock_{kStart};
  store::MemoryStore store_;
  registry::Registry reg_{store_, api::BuiltinScheme(), clock_};
  client::InProcessClient client_{reg_};
  Manager mgr_{clock_};
  InformerFactory informers_{client_, mgr_};
  FakeEventRecorder events_;
  ControllerContext ctx_{client_, informers_, mgr_, clock_, events_};
};

class CronJobControllerTest : public ::testing::Test, public Env {};

TEST_F(CronJobControllerTest, EveryMinuteCreatesOneJobPerMinute) {
  Create(CronJob("* * * * *"));
  RunFor(absl::Seconds(30));
  EXPECT_THAT(JobNames(), IsEmpty());
  RunFor(absl::Minutes(3));
  EXPECT_THAT(JobNames(), ElementsAre(JobNameAt(absl::Minutes(1)), JobNameAt(absl::Minutes(2)),
                                      JobNameAt(absl::Minutes(3))));
  EXPECT_EQ(ActiveNames(), JobNames());
  EXPECT_EQ(GetCronJob()["status"].value("lastScheduleTime", ""), "2026-01-01T00:03:00Z");
  EXPECT_EQ(CountReason("SuccessfulCreate"), 3);

  auto job = client_.Get(Jobs(), "default", JobNameAt(absl::Minutes(2)));
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(api::meta::GetLabel(*job, "team"), "a");
  EXPECT_EQ(api::meta::GetAnnotation(*job, "note"), "x");
  EXPECT_EQ(api::meta::GetAnnotation(*job, "batch.kubernetes.io/cronjob-scheduled-timestamp"),
            "2026-01-01T00:02:00Z");
  EXPECT_TRUE(api::meta::IsControlledBy(*job, api::meta::GetUid(GetCronJob())));
  EXPECT_EQ(JobNameAt(absl::Minutes(2)), "cj-29453762");
}

TEST_F(CronJobControllerTest, ConcurrencyPolicies) {
  struct Case {
    std::string name, policy;
    std::vector<std::string> want_jobs, want_active;
    std::string want_event;
  };
  std::vector<Case> cases = {
      {"allow",
       "Allow",
       {JobNameAt(absl::Minutes(1)), JobNameAt(absl::Minutes(2))},
       {JobNameAt(absl::Minutes(1)), JobNameAt(absl::Minutes(2))},
       "SuccessfulCreate"},
      {"forbid",
       "Forbid",
       {JobNameAt(absl::Minutes(1))},
       {JobNameAt(absl::Minutes(1))},
       "JobAlreadyActive"},
      {"replace",
       "Replace",
       {JobNameAt(absl::Minutes(2))},
       {JobNameAt(absl::Minutes(2))},
       "SuccessfulDelete"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Env e;
    Json cj = CronJob("* * * * *");
    cj["spec"]["concurrencyPolicy"] = c.policy;
    e.Create(cj);
    e.RunFor(absl::Minutes(2) + absl::Seconds(1));
    EXPECT_EQ(e.JobNames(), c.want_jobs);
    EXPECT_EQ(e.ActiveNames(), c.want_active);
    EXPECT_EQ(e.CountReason(c.want_event), c.policy == "Allow" ? 2 : 1);
  }
}

TEST_F(CronJobControllerTest, ForbidStartsAgainOnceTheActiveJobFinishes) {
  Json cj = CronJob("* * * * *");
  cj["spec"]["concurrencyPolicy"] = "Forbid";
  Create(cj);
  RunFor(absl::Minutes(2) + absl::Seconds(1));
  ASSERT_THAT(JobNames(), ElementsAre(JobNameAt(absl::Minutes(1))));
  EXPECT_EQ(CountReason("JobAlreadyActive"), 1);
  FinishJob(JobNameAt(absl::Minutes(1)), "Complete", kStart + absl::Minutes(1));
  mgr_.RunUntilIdle();
  EXPECT_EQ(CountReason("SawCompletedJob"), 1);
  EXPECT_EQ(GetCronJob()["status"].value("lastSuccessfulTime", ""), "2026-01-01T00:02:01Z");
  // The skipped 00:02 run was never recorded as scheduled, so it starts now.
  EXPECT_THAT(ActiveNames(), ElementsAre(JobNameAt(absl::Minutes(2))));
  RunFor(absl::Minutes(1));
  EXPECT_THAT(JobNames(), ElementsAre(JobNameAt(absl::Minutes(1)), JobNameAt(absl::Minutes(2))));
  EXPECT_EQ(CountReason("JobAlreadyActive"), 2);
}

TEST_F(CronJobControllerTest, StartingDeadlineAfterControllerDowntime) {
  struct Case {
    std::string name;
    std::optional<int> deadline;
    std::vector<std::string> want;
  };
  std::vector<Case> cases = {
      {"no deadline: the missed 01:00 run starts late", std::nullopt, {JobNameAt(absl::Hours(1))}},
      {"within the deadline", 600, {JobNameAt(absl::Hours(1))}},
      {"too late", 60, {}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Env e;
    Json cj = CronJob("0 * * * *");
    if (c.deadline) cj["spec"]["startingDeadlineSeconds"] = *c.deadline;
    e.Create(cj);
    e.mgr_.RunUntilIdle();
    e.clock_.Advance(absl::Minutes(65));  // The controller is down: timers fire, nobody runs.
    e.mgr_.RunUntilIdle();
    EXPECT_EQ(e.JobNames(), c.want);
    // The next hour runs on time in every case.
    e.RunFor(absl::Minutes(55) + absl::Seconds(1));
    EXPECT_EQ(e.JobNames().size(), c.want.size() + 1);
  }
}

TEST_F(CronJobControllerTest, TooManyMissedStillStartsTheMostRecent) {
  Create(CronJob("* * * * *"));
  mgr_.RunUntilIdle();
  clock_.Advance(absl::Minutes(150) + absl::Seconds(5));
  mgr_.RunUntilIdle();
  EXPECT_EQ(CountReason("TooManyMissedTimes"), 1);
  EXPECT_THAT(JobNames(), ElementsAre(JobNameAt(absl::Minutes(150))));
}

TEST_F(CronJobControllerTest, HistoryLimitsDeleteTheOldestFinishedJobs) {
  Json cj = CronJob("* * * * *");
  cj["spec"]["successfulJobsHistoryLimit"] = 1;
  cj["spec"]["failedJobsHistoryLimit"] = 0;
  Create(cj);
  RunFor(absl::Seconds(1));
  for (int m = 1; m <= 3; ++m) {
    RunFor(absl::Minutes(1));
    std::string name = JobNameAt(absl::Minutes(m));
    ASSERT_THAT(JobNames(), Contains(name));
    FinishJob(name, m == 2 ? "Failed" : "Complete", kStart + absl::Minutes(m));
    mgr_.RunUntilIdle();
  }
  // Minute 1 (Complete) gave way to minute 3; minute 2 (Failed) went at once.
  EXPECT_THAT(JobNames(), ElementsAre(JobNameAt(absl::Minutes(3))));
  EXPECT_EQ(CountReason("SuccessfulDelete"), 2);
  EXPECT_THAT(ActiveNames(), IsEmpty());
}

TEST(CronJobTimeZoneTest, ScheduleIsEvaluatedInTheCronJobsZone) {
  struct Case {
    std::string name, zone, schedule, want_annotation;
  };
  std::vector<Case> cases = {
      {"unset is UTC", "", "0 1 * * *", "2026-01-01T01:00:00Z"},
      {"Tokyo", "Asia/Tokyo", "0 10 * * *", "2026-01-01T10:00:00+09:00"},
      {"New York", "America/New_York", "0 20 * * *", "2025-12-31T20:00:00-05:00"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Env e;
    Json cj = Env::CronJob(c.schedule);
    if (!c.zone.empty()) cj["spec"]["timeZone"] = c.zone;
    e.Create(cj);
    e.RunFor(absl::Minutes(59));
    EXPECT_THAT(e.JobNames(), IsEmpty());
    e.RunFor(absl::Minutes(1) + absl::Seconds(1));
    // Every case fires at 01:00 UTC.
    ASSERT_THAT(e.JobNames(), ElementsAre(JobNameAt(absl::Hours(1))));
    auto job = e.client_.Get(e.Jobs(), "default", JobNameAt(absl::Hours(1)));
    ASSERT_TRUE(job.ok());
    EXPECT_EQ(api::meta::GetAnnotation(*job, "batch.kubernetes.io/cronjob-scheduled-timestamp"),
              c.want_annotation);
  }
}

TEST_F(CronJobControllerTest, SuspendedCreatesNothingAndResumesWithTheLatestMissedRun) {
  Json cj = CronJob("* * * * *");
  cj["spec"]["suspend"] = true;
  Create(cj);
  RunFor(absl::Minutes(3) + absl::Seconds(10));
  EXPECT_THAT(JobNames(), IsEmpty());
  ASSERT_TRUE(
      client_.MergePatch(CronJobs(), "default", "cj", {{"spec", {{"suspend", false}}}}).ok());
  mgr_.RunUntilIdle();
  EXPECT_THAT(JobNames(), ElementsAre(JobNameAt(absl::Minutes(3))));
}

TEST_F(CronJobControllerTest, ActiveJobDeletedElsewhereIsDropped) {
  Create(CronJob("* * * * *"));
  RunFor(absl::Minutes(1) + absl::Seconds(1));
  ASSERT_THAT(ActiveNames(), ElementsAre(JobNameAt(absl::Minutes(1))));
  client::DeleteOptions bg;
  bg.propagation_policy = "Background";
  ASSERT_TRUE(client_.Delete(Jobs(), "default", JobNameAt(absl::Minutes(1)), bg).ok());
  mgr_.RunUntilIdle();
  EXPECT_THAT(ActiveNames(), IsEmpty());
  EXPECT_EQ(CountReason("MissingJob"), 1);
}

}  // namespace
}  // namespace batchd::controllers
