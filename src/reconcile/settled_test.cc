#include "reconcile/settled.h"

#include "api/kind.h"
#include "gtest/gtest.h"

namespace batchd::reconcile {
namespace {

using api::Json;

const api::KindDef& Kind(const api::Scheme& s, std::string_view group, std::string_view version,
                         std::string_view plural) {
  const api::KindDef* k = s.ByResource(group, version, plural);
  EXPECT_NE(k, nullptr) << plural;
  return *k;
}

TEST(SettledTest, TerminatedPodsWithoutFinalizers) {
  auto scheme = api::BuiltinScheme();
  auto settled = SettledWhen(Kind(*scheme, "", "v1", "pods"));
  ASSERT_TRUE(settled);
  Json pod = Json::parse(R"({"metadata":{"name":"p"},"status":{"phase":"Succeeded"}})");
  EXPECT_TRUE(settled(pod));
  pod["status"]["phase"] = "Failed";
  EXPECT_TRUE(settled(pod));
  for (const char* phase : {"Pending", "Running", "Unknown"}) {
    pod["status"]["phase"] = phase;
    EXPECT_FALSE(settled(pod)) << phase;
  }
  pod["status"]["phase"] = "Succeeded";
  pod["metadata"]["finalizers"] = Json::array({"batch.kubernetes.io/job-tracking"});
  EXPECT_FALSE(settled(pod)) << "the Job controller has not counted it yet";
  pod["metadata"]["finalizers"] = Json::array();
  pod["metadata"]["deletionTimestamp"] = "2026-12-06T00:00:00Z";
  EXPECT_FALSE(settled(pod)) << "being deleted";
  EXPECT_FALSE(settled(Json::parse(R"({"metadata":{"name":"p"}})")));
  EXPECT_FALSE(settled(Json::parse(R"({"metadata":{"name":"p"},"status":{"phase":7}})")));
}

TEST(SettledTest, FinishedJobsWithoutFinalizers) {
  auto scheme = api::BuiltinScheme();
  auto settled = SettledWhen(Kind(*scheme, "batch", "v1", "jobs"));
  ASSERT_TRUE(settled);
  Json job = Json::parse(
      R"({"metadata":{"name":"j"},"status":{"conditions":[
          {"type":"SuccessCriteriaMet","status":"True"},{"type":"Complete","status":"True"}]}})");
  EXPECT_TRUE(settled(job));
  job["status"]["conditions"][1]["type"] = "Failed";
  EXPECT_TRUE(settled(job));
  job["status"]["conditions"][1]["status"] = "False";
  EXPECT_FALSE(settled(job));
  job["status"]["conditions"][1] = Json::parse(R"({"type":"Suspended","status":"True"})");
  EXPECT_FALSE(settled(job));
  job["status"]["conditions"][1] = Json::parse(R"({"type":"Complete","status":"True"})");
  job["metadata"]["finalizers"] = Json::array({"foregroundDeletion"});
  EXPECT_FALSE(settled(job));
  job["metadata"].erase("finalizers");
  job["metadata"]["deletionTimestamp"] = "2026-12-06T00:00:00Z";
  EXPECT_FALSE(settled(job));
}

TEST(SettledTest, FinishedWorkloads) {
  auto scheme = api::BuiltinScheme();
  auto settled = SettledWhen(Kind(*scheme, "kueue.x-k8s.io", "v1beta2", "workloads"));
  ASSERT_TRUE(settled);
  Json wl = Json::parse(R"({"metadata":{"name":"w","finalizers":["kueue.x-k8s.io/resource-in-use"]},
      "status":{"conditions":[{"type":"Admitted","status":"True"},{"type":"Finished","status":"True"}]}})");
  EXPECT_TRUE(settled(wl));
  wl["status"]["conditions"][1]["status"] = "False";
  EXPECT_FALSE(settled(wl));
  wl["status"]["conditions"][1]["status"] = "True";
  wl["metadata"]["deletionTimestamp"] = "2026-12-06T00:00:00Z";
  EXPECT_FALSE(settled(wl));
}

TEST(SettledTest, OtherKindsAreNeverCompact) {
  auto scheme = api::BuiltinScheme();
  EXPECT_FALSE(SettledWhen(Kind(*scheme, "", "v1", "nodes")));
  EXPECT_FALSE(SettledWhen(Kind(*scheme, "kueue.x-k8s.io", "v1beta2", "clusterqueues")));
  EXPECT_FALSE(SettledWhen(Kind(*scheme, "jobset.x-k8s.io", "v1alpha2", "jobsets")));
}

}  // namespace
}  // namespace batchd::reconcile
