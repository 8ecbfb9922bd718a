#include "controllers/jobset/internal/policies.h"

#include <memory>

#include "api/testing/jobset_builders.h"
#include "gtest/gtest.h"

namespace batchd::controllers::jobset::internal {
namespace {

using api::Json;
using api::testing::MakeJobSet;
namespace js = api::jobset_v1alpha2;

client::ObjectRef Failed(const std::string& name, const std::string& rjob,
                         const std::string& reason, const std::string& message, int at) {
  Json cond = {{"type", "Failed"}, {"status", "True"}, {"reason", reason}, {"message", message},
               {"lastTransitionTime", "2026-01-01T00:00:0" + std::to_string(at) + "Z"}};
  return std::make_shared<const Json>(
      Json{{"metadata",
            {{"name", name},
             {"labels", {{"jobset.sigs.k8s.io/replicatedjob-name", rjob},
                         {"jobset.sigs.k8s.io/restart-attempt", "0"}}}}},
           {"status", {{"conditions", {cond}}}}});
}

struct Fixture {
  Json jobset;
  js::JobSetSpecView spec;
  js::JobSetStatusView status;
  explicit Fixture(Json j)
      : jobset(std::move(j)),
        spec(js::JobSetSpecView::Parse(jobset)),
        status(js::JobSetStatusView::Parse(jobset)) {}
};

TEST(DecideFailureTest, NoPolicyFailsWithTheEarliestJob) {
  Fixture f(MakeJobSet("js").ReplicatedJob("w", 2).Obj());
  const ChildJobs jobs =
      Classify({Failed("js-w-0", "w", "R", "m", 5), Failed("js-w-1", "w", "R", "m", 2)}, 0);
  const FailureDecision d = DecideFailure(f.spec, f.status, jobs);
  EXPECT_EQ(d.kind, FailureDecision::Kind::kFail);
  EXPECT_EQ(d.reason, "FailedJobs");
  EXPECT_EQ(d.job, "js-w-1");
}

TEST(DecideFailureTest, FirstMatchingRuleInOrderWins) {
  Fixture f(MakeJobSet("js")
                .ReplicatedJob("a", 1)
                .ReplicatedJob("b", 1)
                .MaxRestarts(1)
                .Rule("onlyB", "FailJobSet", {}, {"b"})
                .Rule("reason", "RestartJobSetAndIgnoreMaxRestarts", {"DeadlineExceeded"})
                .Rule("pattern", "FailJobSet", {}, {}, {"^boom"})
                .Obj());
  auto decide = [&](client::ObjectRef job) {
    return DecideFailure(f.spec, f.status, Classify({job}, 0));
  };
  FailureDecision d = decide(Failed("js-b-0", "b", "BackoffLimitExceeded", "x", 1));
  EXPECT_EQ(d.reason, "FailJobSetFailurePolicyAction");
  d = decide(Failed("js-a-0", "a", "DeadlineExceeded", "x", 1));
  EXPECT_EQ(d.kind, FailureDecision::Kind::kRestart);
  EXPECT_FALSE(d.counts_towards_max);
  EXPECT_EQ(d.reason, "FailurePolicy_reason");
  EXPECT_EQ(d.action_reason, "RestartJobSetAndIgnoreMaxRestartsFailurePolicyAction");
  d = decide(Failed("js-a-0", "a", "BackoffLimitExceeded", "boom!", 1));
  EXPECT_EQ(d.kind, FailureDecision::Kind::kFail);
  d = decide(Failed("js-a-0", "a", "BackoffLimitExceeded", "no boom", 1));
  EXPECT_EQ(d.kind, FailureDecision::Kind::kRestart);  // No rule: RestartJobSet.
  EXPECT_TRUE(d.counts_towards_max);
  EXPECT_EQ(d.reason, "DefaultFailurePolicy");
  EXPECT_EQ(d.message, "applying RestartJobSet failure policy action (first failed job: js-a-0)");
}

TEST(DecideFailureTest, MaxRestartsCountsOnlyRestartsTowardsMax) {
  Json jobset = MakeJobSet("js").ReplicatedJob("w", 1).MaxRestarts(2).Obj();
  jobset["status"] = {{"restarts", 5}, {"restartsCountTowardsMax", 1}};
  Fixture f(jobset);
  const ChildJobs jobs = Classify({Failed("js-w-0", "w", "R", "m", 1)}, 0);
  EXPECT_EQ(DecideFailure(f.spec, f.status, jobs).kind, FailureDecision::Kind::kRestart);
  jobset["status"]["restartsCountTowardsMax"] = 2;
  Fixture g(jobset);
  const FailureDecision d = DecideFailure(g.spec, g.status, jobs);
  EXPECT_EQ(d.kind, FailureDecision::Kind::kFail);
  EXPECT_EQ(d.reason, "ReachedMaxRestarts");
}

TEST(SuccessPolicyTest, AllAndAnyWithTargets) {
  auto succeeded = [](const std::string& name, const std::string& rjob) {
    return std::make_shared<const Json>(Json{
        {"metadata",
         {{"name", name},
          {"labels", {{"jobset.sigs.k8s.io/replicatedjob-name", rjob},
                      {"jobset.sigs.k8s.io/restart-attempt", "0"}}}}},
        {"status", {{"conditions", {{{"type", "Complete"}, {"status", "True"}}}}}}});
  };
  Fixture all(MakeJobSet("js").ReplicatedJob("a", 1).ReplicatedJob("b", 2).SuccessPolicy("All", {"b"}).Obj());
  EXPECT_FALSE(SuccessPolicyMet(all.spec, Classify({succeeded("a0", "a"), succeeded("b0", "b")}, 0)));
  EXPECT_TRUE(SuccessPolicyMet(all.spec, Classify({succeeded("b0", "b"), succeeded("b1", "b")}, 0)));
  Fixture any(MakeJobSet("js").ReplicatedJob("a", 1).ReplicatedJob("b", 2).SuccessPolicy("Any", {"a"}).Obj());
  EXPECT_FALSE(SuccessPolicyMet(any.spec, Classify({succeeded("b0", "b")}, 0)));
  EXPECT_TRUE(SuccessPolicyMet(any.spec, Classify({succeeded("a0", "a")}, 0)));
}

TEST(StartupTest, DependenciesAndReadiness) {
  Fixture f(MakeJobSet("js")
                .ReplicatedJob("a", 2)
                .ReplicatedJob("b", 1)
                .ReplicatedJob("c", 1)
                .DependsOn("b", "a", "Ready")
                .DependsOn("c", "a", "Complete")
                .Obj());
  Counts counts = {{"a", 1, 0, 1, 1, 0}, {"b", 0, 0, 0, 0, 0}, {"c", 0, 0, 0, 0, 0}};
  EXPECT_TRUE(DependenciesReached(f.spec.replicated_jobs[1], f.spec, counts));
  EXPECT_FALSE(DependenciesReached(f.spec.replicated_jobs[2], f.spec, counts));
  EXPECT_TRUE(DependenciesReached(f.spec.replicated_jobs[0], f.spec, counts));
  counts[0] = {"a", 0, 2, 0, 0, 0};
  EXPECT_TRUE(DependenciesReached(f.spec.replicated_jobs[2], f.spec, counts));
  EXPECT_TRUE(AllReplicasStarted(2, &counts[0]));
  EXPECT_FALSE(AllReplicasStarted(1, &counts[1]));
  EXPECT_FALSE(AllReplicasStarted(1, nullptr));
  EXPECT_FALSE(AllJobsReady(f.spec, counts));
  counts[1].ready = 1;
  counts[2].succeeded = 1;
  EXPECT_TRUE(AllJobsReady(f.spec, counts));
}

TEST(TtlTest, RemainingFromTheFinishTime) {
  Json jobset = MakeJobSet("js").ReplicatedJob("w", 1).Ttl(60).Obj();
  jobset["status"]["conditions"] = {{{"type", "Completed"}, {"status", "True"},
                                     {"lastTransitionTime", "2026-01-01T00:00:00Z"}}};
  const js::JobSetView v = js::JobSetView::Parse(jobset);
  EXPECT_EQ(TtlRemaining(v, absl::FromUnixSeconds(1767225600 + 45)), absl::Seconds(15));
  EXPECT_EQ(TtlRemaining(v, absl::FromUnixSeconds(1767225600 + 90)), absl::Seconds(-30));
  jobset["spec"].erase("ttlSecondsAfterFinished");
  EXPECT_FALSE(TtlRemaining(js::JobSetView::Parse(jobset), absl::UnixEpoch()).has_value());
}

}  // namespace
}  // namespace batchd::controllers::jobset::internal
