#include "controllers/jobset/internal/child_jobs.h"

#include <memory>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace batchd::controllers::jobset::internal {
namespace {

using api::Json;
namespace js = api::jobset_v1alpha2;

client::ObjectRef Job(const std::string& name, const std::string& rjob, const char* attempt,
                      Json status = Json::object(), Json spec = Json::object()) {
  Json labels = {{"jobset.sigs.k8s.io/replicatedjob-name", rjob}};
  if (attempt != nullptr) labels["jobset.sigs.k8s.io/restart-attempt"] = attempt;
  return std::make_shared<const Json>(
      Json{{"metadata", {{"name", name}, {"labels", labels}}}, {"spec", spec}, {"status", status}});
}

Json Cond(const std::string& type, const std::string& reason = "", const std::string& msg = "") {
  return Json::array({{{"type", type}, {"status", "True"}, {"reason", reason}, {"message", msg},
                       {"lastTransitionTime", "2026-01-01T00:00:07Z"}}});
}

std::vector<std::string> Names(const std::vector<ChildJob>& jobs) {
  std::vector<std::string> out;
  for (const ChildJob& j : jobs) out.emplace_back(j.name());
  return out;
}

TEST(ClassifyTest, ByAttemptAndState) {
  const ChildJobs c = Classify(
      {Job("a", "w", "2"), Job("b", "w", "2", {{"conditions", Cond("Complete")}}),
       Job("c", "w", "2", {{"conditions", Cond("Failed", "PodFailurePolicy", "exit 3")}}),
       Job("old", "w", "1", {{"conditions", Cond("Failed")}}), Job("nolabel", "w", nullptr),
       Job("bad", "w", "x"), Job("newer", "w", "3")},
      2);
  EXPECT_THAT(Names(c.active), ::testing::ElementsAre("a", "newer"));
  EXPECT_THAT(Names(c.succeeded), ::testing::ElementsAre("b"));
  EXPECT_THAT(Names(c.failed), ::testing::ElementsAre("c"));
  EXPECT_THAT(Names(c.previous), ::testing::ElementsAre("old", "nolabel", "bad"));
  EXPECT_EQ(c.failed[0].failure_reason, "PodFailurePolicy");
  EXPECT_EQ(c.failed[0].failure_message, "exit 3");
  EXPECT_EQ(c.failed[0].failure_time, absl::FromUnixSeconds(1767225607));
  EXPECT_TRUE(c.Has("old"));
  EXPECT_FALSE(c.Has("zzz"));
}

TEST(CountReplicatedJobsTest, ReadyActiveSuspendedSucceededFailed) {
  const Json jobset = {{"spec",
                        {{"replicatedJobs",
                          {{{"name", "w"}, {"replicas", 4}}, {{"name", "idle"}, {"replicas", 1}}}}}}};
  const js::JobSetSpecView spec = js::JobSetSpecView::Parse(jobset);
  const ChildJobs c = Classify(
      {// 3 pods needed (min(parallelism 4, completions 3)): 2 ready + 1 succeeded.
       Job("r", "w", "0", {{"ready", 2}, {"succeeded", 1}, {"active", 2}},
           {{"parallelism", 4}, {"completions", 3}}),
       Job("n", "w", "0", {{"ready", 1}, {"active", 2}}, {{"parallelism", 2}}),
       Job("s", "w", "0", Json::object(), {{"suspend", true}}),
       Job("done", "w", "0", {{"conditions", Cond("Complete")}}),
       Job("f", "w", "0", {{"conditions", Cond("Failed")}}), Job("x", "gone", "0")},
      0);
  const auto counts = CountReplicatedJobs(spec, c);
  ASSERT_EQ(counts.size(), 2u);
  EXPECT_EQ(counts[0], (js::ReplicatedJobCounts{"w", 1, 1, 1, 2, 1}));
  EXPECT_EQ(counts[1], (js::ReplicatedJobCounts{"idle", 0, 0, 0, 0, 0}));
  EXPECT_EQ(FindCounts(counts, "idle"), &counts[1]);
  EXPECT_EQ(FindCounts(counts, "gone"), nullptr);
}

}  // namespace
}  // namespace batchd::controllers::jobset::internal
