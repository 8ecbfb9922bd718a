#include "api/meta/conditions.h"

#include <string>

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace batchd::api::meta {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1700000000);
const absl::Time kT1 = kT0 + absl::Minutes(1);
const char kT0s[] = "2023-11-14T22:13:20Z";
const char kT1s[] = "2023-11-14T22:14:20Z";

Json WithGeneration(int64_t generation) {
  return {{"metadata", {{"name", "w"}, {"generation", generation}}}};
}

TEST(ConditionsTest, ReadersTolerateMissingAndMistypedFields) {
  for (const Json& obj : {Json(), Json::object(), Json{{"status", 3}},
                          Json{{"status", {{"conditions", "x"}}}}}) {
    EXPECT_EQ(FindCondition(obj, "Ready"), nullptr);
    EXPECT_EQ(ConditionStatus(obj, "Ready"), "");
    EXPECT_FALSE(IsConditionTrue(obj, "Ready"));
    EXPECT_FALSE(GetCondition(obj, "Ready").has_value());
    EXPECT_FALSE(ConditionTransitionTime(obj, "Ready").has_value());
  }
  Json obj = {{"status",
               {{"conditions",
                 {{{"type", "Ready"}, {"status", "True"}, {"reason", "R"},
                   {"lastTransitionTime", kT0s}}}}}}};
  ASSERT_NE(FindCondition(obj, "Ready"), nullptr);
  EXPECT_TRUE(IsConditionTrue(obj, "Ready"));
  EXPECT_EQ(*GetCondition(obj, "Ready"), (Condition{"Ready", "True", "R", ""}));
  EXPECT_EQ(*ConditionTransitionTime(obj, "Ready"), kT0);
}

TEST(ConditionsTest, MetaMovesTransitionTimeOnlyOnStatusChange) {
  Json wl = WithGeneration(2);
  EXPECT_TRUE(SetCondition(wl, ConditionShape::kMeta, {"QuotaReserved", "True", "R", "m"}, kT0));
  EXPECT_FALSE(SetCondition(wl, ConditionShape::kMeta, {"QuotaReserved", "True", "R", "m"}, kT1));
  EXPECT_TRUE(SetCondition(wl, ConditionShape::kMeta, {"QuotaReserved", "True", "R2", "m"}, kT1));
  const Json* c = FindCondition(wl, "QuotaReserved");
  EXPECT_EQ((*c)["lastTransitionTime"], kT0s);
  EXPECT_EQ((*c)["observedGeneration"], 2);
  EXPECT_EQ((*c)["reason"], "R2");
  EXPECT_TRUE(SetCondition(wl, ConditionShape::kMeta, {"QuotaReserved", "False", "P", ""}, kT1));
  c = FindCondition(wl, "QuotaReserved");
  EXPECT_EQ((*c)["lastTransitionTime"], kT1s);
  EXPECT_EQ((*c)["message"], "");
  // A new generation alone is a change.
  wl["metadata"]["generation"] = 3;
  EXPECT_TRUE(SetCondition(wl, ConditionShape::kMeta, {"QuotaReserved", "False", "P", ""}, kT1));
  EXPECT_EQ((*FindCondition(wl, "QuotaReserved"))["observedGeneration"], 3);
  // No generation: no observedGeneration.
  Json plain = Json::object();
  SetCondition(plain, ConditionShape::kMeta, {"Active", "True", "Ready", "ok"}, kT0);
  EXPECT_FALSE(FindCondition(plain, "Active")->contains("observedGeneration"));
}

TEST(ConditionsTest, JobEnsureSemantics) {
  Json job = Json::object();
  EXPECT_FALSE(SetCondition(job, ConditionShape::kJob, {"Suspended", "False", "JobResumed", ""},
                            kT0));
  EXPECT_FALSE(job["status"].contains("conditions"));
  EXPECT_TRUE(SetCondition(job, ConditionShape::kJob, {"Suspended", "True", "JobSuspended", "s"},
                           kT0));
  EXPECT_FALSE(SetCondition(job, ConditionShape::kJob, {"Suspended", "True", "JobSuspended", "s"},
                            kT1));
  EXPECT_TRUE(SetCondition(job, ConditionShape::kJob, {"Suspended", "False", "JobResumed", "r"},
                           kT1));
  const Json& c = *FindCondition(job, "Suspended");
  EXPECT_EQ(c, (Json{{"type", "Suspended"}, {"status", "False"}, {"reason", "JobResumed"},
                     {"message", "r"}, {"lastProbeTime", kT1s}, {"lastTransitionTime", kT1s}}));
}

TEST(ConditionsTest, PodKeepsTransitionTimeWhileStatusHolds) {
  Json conds;
  EXPECT_TRUE(SetConditionIn(conds, ConditionShape::kPod, {"Ready", "True"}, kT0));
  EXPECT_FALSE(SetConditionIn(conds, ConditionShape::kPod, {"Ready", "True"}, kT1));
  EXPECT_TRUE(SetConditionIn(conds, ConditionShape::kPod, {"Ready", "True", "", "msg"}, kT1));
  EXPECT_EQ(conds[0], (Json{{"type", "Ready"}, {"status", "True"}, {"message", "msg"},
                            {"lastProbeTime", nullptr}, {"lastTransitionTime", kT0s}}));
  EXPECT_TRUE(SetConditionIn(conds, ConditionShape::kPod, {"Ready", "False", "Gone", ""}, kT1));
  EXPECT_EQ(conds[0]["lastTransitionTime"], kT1s);
}

TEST(ConditionsTest, NodeSetIsAHeartbeat) {
  Json node = Json::object();
  EXPECT_TRUE(SetCondition(node, ConditionShape::kNode, {"Ready", "True", "KubeletReady", "ok"},
                           kT0));
  EXPECT_TRUE(SetCondition(node, ConditionShape::kNode, {"Ready", "True", "KubeletReady", "ok"},
                           kT1));
  const Json& c = *FindCondition(node, "Ready");
  EXPECT_EQ(c["lastHeartbeatTime"], kT1s);
  EXPECT_EQ(c["lastTransitionTime"], kT0s);
  EXPECT_FALSE(SetCondition(node, ConditionShape::kNode, {"Ready", "True", "KubeletReady", "ok"},
                            kT1));
}

TEST(ConditionsTest, RemoveCondition) {
  Json obj = Json::object();
  EXPECT_FALSE(RemoveCondition(obj, "A"));
  SetCondition(obj, ConditionShape::kMeta, {"A", "True", "r", ""}, kT0);
  SetCondition(obj, ConditionShape::kMeta, {"B", "True", "r", ""}, kT0);
  EXPECT_TRUE(RemoveCondition(obj, "A"));
  EXPECT_FALSE(RemoveCondition(obj, "A"));
  EXPECT_EQ(obj["status"]["conditions"].size(), 1u);
  EXPECT_NE(FindCondition(obj, "B"), nullptr);
}

// A queue's Active condition as the queue manager writes it (moved here with
// the queue manager's own condition helpers).
TEST(ConditionsTest, MetaWithoutGenerationKeepsTransitionTime) {
  Json obj = {{"metadata", {{"name", "x"}}}};
  absl::Time t0 = absl::FromUnixSeconds(1767225600);
  EXPECT_TRUE(
      SetCondition(obj, ConditionShape::kMeta, {"Active", kConditionTrue, "Ready", "ok"}, t0));
  EXPECT_FALSE(SetCondition(obj, ConditionShape::kMeta, {"Active", kConditionTrue, "Ready", "ok"},
                            t0 + absl::Seconds(5)));
  EXPECT_TRUE(SetCondition(obj, ConditionShape::kMeta,
                           {"Active", kConditionTrue, "Ready", "changed"}, t0 + absl::Seconds(5)));
  EXPECT_EQ(ConditionTransitionTime(obj, "Active"), t0);  // status unchanged: time kept
  EXPECT_TRUE(SetCondition(obj, ConditionShape::kMeta, {"Active", kConditionFalse, "Stopped", "no"},
                           t0 + absl::Seconds(9)));
  EXPECT_EQ(ConditionTransitionTime(obj, "Active"), t0 + absl::Seconds(9));
  EXPECT_FALSE(IsConditionTrue(obj, "Active"));
  EXPECT_TRUE(RemoveCondition(obj, "Active"));
  EXPECT_EQ(FindCondition(obj, "Active"), nullptr);
}

}  // namespace
}  // namespace batchd::api::meta
