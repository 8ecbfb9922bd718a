// The pure helpers of two-phase admission: which checks apply, broken
// references, and the per-workload state list as Kueue writes it.
#include "controllers/admissioncheck/admission_checks.h"

#include "api/meta/time_util.h"
#include "gtest/gtest.h"

namespace batchd::controllers::admissioncheck {
namespace {

Json Cq(Json rules) {
  return {{"spec", {{"admissionChecksStrategy", {{"admissionChecks", std::move(rules)}}}}}};
}

TEST(AdmissionChecks, ChecksForHonoursOnFlavors) {
  Json cq = Cq({{{"name", "b"}}, {{"name", "a"}, {"onFlavors", {"gpu"}}}, {{"name", "b"}}});
  EXPECT_EQ(ChecksFor(cq, {"cpu"}), std::vector<std::string>({"b"}));
  EXPECT_EQ(ChecksFor(cq, {"cpu", "gpu"}), std::vector<std::string>({"a", "b"}));
  EXPECT_EQ(ReferencedChecks(cq), std::vector<std::string>({"a", "b"}));
  EXPECT_TRUE(ChecksFor(Json::object(), {"cpu"}).empty());
}

TEST(AdmissionChecks, AssignedFlavorsOfEveryPodSet) {
  Json adm = {{"podSetAssignments",
               {{{"name", "a"}, {"flavors", {{"cpu", "x"}, {"memory", "y"}}}},
                {{"name", "b"}, {"flavors", {{"cpu", "z"}}}}}}};
  EXPECT_EQ(AssignedFlavors(adm), std::set<std::string>({"x", "y", "z"}));
}

TEST(AdmissionChecks, BrokenReferencesUseKueueReasons) {
  Json cq = Cq({{{"name", "gone"}}, {{"name", "idle"}}, {{"name", "ok"}}});
  auto idle = std::make_shared<const Json>(Json{{"metadata", {{"name", "idle"}}}});
  auto ok = std::make_shared<const Json>(
      Json{{"status", {{"conditions", {{{"type", "Active"}, {"status", "True"}}}}}}});
  auto lookup = [&](const std::string& n) -> std::shared_ptr<const Json> {
    if (n == "idle") return idle;
    if (n == "ok") return ok;
    return nullptr;
  };
  std::vector<std::string> reasons, messages;
  EXPECT_FALSE(CheckReferencesUsable(cq, lookup, &reasons, &messages));
  EXPECT_EQ(reasons, std::vector<std::string>({"AdmissionCheckNotFound", "AdmissionCheckInactive"}));
  EXPECT_EQ(messages, std::vector<std::string>({"references missing AdmissionCheck(s): [gone]",
                                                "references inactive AdmissionCheck(s): [idle]"}));
  reasons.clear();
  messages.clear();
  EXPECT_TRUE(CheckReferencesUsable(Cq({{{"name", "ok"}}}), lookup, &reasons, &messages));
  EXPECT_TRUE(reasons.empty());
}

TEST(AdmissionChecks, ResetForReservationCountsRetriesAndDropsUpdates) {
  const absl::Time t0 = absl::FromUnixSeconds(1000), t1 = absl::FromUnixSeconds(2000);
  Json status = Json::object();
  EXPECT_TRUE(ResetForReservation(status, {"a", "b"}, t0));
  ASSERT_EQ(status["admissionChecks"].size(), 2u);
  EXPECT_EQ(status["admissionChecks"][0]["state"], "Pending");
  EXPECT_EQ(status["admissionChecks"][0]["lastTransitionTime"], api::meta::FormatRfc3339(t0));
  EXPECT_FALSE(ResetForReservation(status, {"a", "b"}, t1));  // Already Pending: kept.

  ASSERT_TRUE(SetCheckState(status, "a", {kRetry, "no room", 30, std::nullopt}, t1));
  ASSERT_TRUE(SetCheckState(status, "b", {kReady, "ok", std::nullopt, Json::array({{{"name", "main"}}})},
                            t1));
  EXPECT_FALSE(AllChecksReady({{"status", status}}));
  EXPECT_TRUE(ResetForReservation(status, {"a", "b"}, t1));
  const Json& a = status["admissionChecks"][0];
  EXPECT_EQ(a["state"], "Pending");
  EXPECT_EQ(a["retryCount"], 1);
  EXPECT_FALSE(a.contains("requeueAfterSeconds"));
  EXPECT_EQ(a["message"], "Reset to Pending after eviction. Previously: Retry");
  const Json& b = status["admissionChecks"][1];
  EXPECT_FALSE(b.contains("podSetUpdates"));
  EXPECT_FALSE(b.contains("retryCount"));

  EXPECT_TRUE(ResetForReservation(status, {}, t1));  // No checks any more.
  EXPECT_FALSE(status.contains("admissionChecks"));
}

TEST(AdmissionChecks, SetCheckStateMovesTransitionTimeOnlyOnChange) {
  const absl::Time t0 = absl::FromUnixSeconds(1000), t1 = absl::FromUnixSeconds(2000);
  Json status = Json::object();
  ResetForReservation(status, {"a"}, t0);
  EXPECT_TRUE(SetCheckState(status, "a", {kPending, "waiting", std::nullopt, std::nullopt}, t1));
  EXPECT_EQ(status["admissionChecks"][0]["lastTransitionTime"], api::meta::FormatRfc3339(t0));
  EXPECT_FALSE(SetCheckState(status, "a", {kPending, "waiting", std::nullopt, std::nullopt}, t1));
  EXPECT_TRUE(SetCheckState(status, "a", {kReady, "", std::nullopt, std::nullopt}, t1));
  EXPECT_EQ(status["admissionChecks"][0]["lastTransitionTime"], api::meta::FormatRfc3339(t1));
  EXPECT_TRUE(AllChecksReady({{"status", status}}));
  EXPECT_FALSE(SetCheckState(status, "missing", {kReady, "", std::nullopt, std::nullopt}, t1));
}

TEST(AdmissionChecks, SyncCheckListKeepsStatesAndAddsPending) {
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  Json status = Json::object();
  ResetForReservation(status, {"a", "b"}, t0);
  SetCheckState(status, "a", {kReady, "", std::nullopt, std::nullopt}, t0);
  EXPECT_TRUE(SyncCheckList(status, {"a", "c"}, t0));
  ASSERT_EQ(status["admissionChecks"].size(), 2u);
  EXPECT_EQ(status["admissionChecks"][0]["state"], "Ready");
  EXPECT_EQ(status["admissionChecks"][1]["name"], "c");
  EXPECT_EQ(status["admissionChecks"][1]["state"], "Pending");
  EXPECT_FALSE(SyncCheckList(status, {"a", "c"}, t0));
}

}  // namespace
}  // namespace batchd::controllers::admissioncheck
