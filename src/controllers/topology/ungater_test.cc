#include "controllers/topology/ungater.h"

#include <map>
#include <string>

#include "client/in_process_client.h"
#include "common/testing/fake_clock.h"
#include "gtest/gtest.h"
#include "store/memory/memory_store.h"

namespace batchd::controllers::topology {
namespace {

using api::Json;
using reconcile::ControllerContext;
using reconcile::FakeEventRecorder;
using reconcile::InformerFactory;
using reconcile::Manager;

constexpr char kGate[] = "kueue.x-k8s.io/topology";

class UngaterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(reg_.Start().ok());
    AddTopologyUngater(ctx_);
    ASSERT_TRUE(mgr_.SyncAll().ok());
  }

  // A Workload admitted with `domains` (rack, hostname) -> count for pod set main.
  void CreateWorkload(const std::string& name, const std::vector<std::pair<std::string, int>>& hosts,
                      Json topology_request = {{"required", "rack"},
                                               {"podIndexLabel",
                                                "batch.kubernetes.io/job-completion-index"}}) {
    Json roots = Json::array(), counts = Json::array();
    for (const auto& [h, n] : hosts) {
      roots.push_back(h);
      counts.push_back(n);
    }
    Json wl = {
        {"apiVersion", "kueue.x-k8s.io/v1beta2"},
        {"kind", "Workload"},
        {"metadata", {{"name", name}, {"namespace", "default"}}},
        {"spec",
         {{"queueName", "lq"},
          {"podSets",
           Json::array({{{"name", "main"},
                         {"count", 4},
                         {"topologyRequest", topology_request},
                         {"template",
                          {{"spec",
                            {{"restartPolicy", "Never"},
                             {"containers",
                              Json::array({{{"name", "c"}, {"image", "x"}}})}}}}}}})}}}};
    ASSERT_TRUE(c_.Create(wls_, "default", wl).ok());
    Json status = {
        {"status",
         {{"admission",
           {{"clusterQueue", "cq"},
            {"podSetAssignments",
             Json::array({{{"name", "main"},
                           {"count", 4},
                           {"flavors", {{"cpu", "tas"}}},
                           {"topologyAssignment",
                            {{"levels", Json::array({"rack", "kubernetes.io/hostname"})},
                             {"slices",
                              Json::array({{{"domainCount", hosts.size()},
                                            {"valuesPerLevel",
                                             Json::array({{{"universalValue", "r1"}},
                                                          {{"roots", roots}}})},
                                            {"podCounts", counts}}})}}}}})}}},
          {"conditions",
           Json::array({{{"type", "QuotaReserved"},
                         {"status", "True"},
                         {"reason", "QuotaReserved"},
                         {"message", "m"},
                         {"lastTransitionTime", "2026-01-01T00:00:00Z"}}})}}}};
    auto r = c_.MergePatch(wls_, "default", name, status, /*status=*/true);
    ASSERT_TRUE(r.ok()) << r.status();
    mgr_.RunUntilIdle();
  }

  void CreatePod(const std::string& name, const std::string& wl, int index, bool gated = true,
                 const std::map<std::string, std::string>& labels = {}) {
    Json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata",
                 {{"name", name},
                  {"namespace", "default"},
                  {"labels",
                   {{"kueue.x-k8s.io/podset", "main"},
                    {"kueue.x-k8s.io/tas", "true"},
                    {"batch.kubernetes.io/job-completion-index", std::to_string(index)}}},
                  {"annotations", {{"kueue.x-k8s.io/workload", wl}}}}},
                {"spec",
                 {{"containers", Json::array({{{"name", "c"}, {"image", "x"}}})}}}};
    if (gated) pod["spec"]["schedulingGates"] = Json::array({{{"name", kGate}}});
    for (const auto& [k, v] : labels) pod["metadata"]["labels"][k] = v;
    auto r = c_.Create(pods_, "default", pod);
    ASSERT_TRUE(r.ok()) << r.status();
    mgr_.RunUntilIdle();
  }

  // The pod's hostname selector, or "gated".
  std::string Placement(const std::string& name) {
    auto p = c_.Get(pods_, "default", name);
    EXPECT_TRUE(p.ok());
    const Json& spec = (*p)["spec"];
    if (spec.contains("schedulingGates")) return "gated";
    if (!spec.contains("nodeSelector")) return "none";
    EXPECT_EQ(spec["nodeSelector"].value("rack", ""), "r1");
    return spec["nodeSelector"].value("kubernetes.io/hostname", "");
  }

  FakeClock clock_;
  store::MemoryStore store_;
  registry::Registry reg_{store_, api::BuiltinScheme(), clock_};
  client::InProcessClient c_{reg_};
  Manager mgr_{clock_};
  InformerFactory inf_{c_, mgr_};
  FakeEventRecorder ev_;
  ControllerContext ctx_{c_, inf_, mgr_, clock_, ev_};
  const api::KindDef& pods_ = c_.Kind("", "v1", "pods");
  const api::KindDef& wls_ = c_.Kind("kueue.x-k8s.io", "v1beta2", "workloads");
};

TEST_F(UngaterTest, GatedPodsStayUntilTheAssignmentExists) {
  CreatePod("p0", "wl", 0);
  EXPECT_EQ(Placement("p0"), "gated") << "no Workload yet";
}

TEST_F(UngaterTest, PodsFillDomainsInRankOrder) {
  CreatePod("p3", "wl", 3);
  CreatePod("p1", "wl", 1);
  CreatePod("p0", "wl", 0);
  CreatePod("p2", "wl", 2);
  CreateWorkload("wl", {{"h1", 3}, {"h2", 1}});
  EXPECT_EQ(Placement("p0"), "h1");
  EXPECT_EQ(Placement("p1"), "h1");
  EXPECT_EQ(Placement("p2"), "h1");
  EXPECT_EQ(Placement("p3"), "h2");
}

// subGroupIndexLabel / subGroupCount (replicated jobs, as JobSet's): ranks
// run job by job, so each job's pods fill the domains together.
TEST_F(UngaterTest, ReplicatedJobsRankJobByJob) {
  CreatePod("j1-0", "wl", 0, true, {{"job-index", "1"}});
  CreatePod("j0-1", "wl", 1, true, {{"job-index", "0"}});
  CreatePod("j1-1", "wl", 1, true, {{"job-index", "1"}});
  CreatePod("j0-0", "wl", 0, true, {{"job-index", "0"}});
  CreateWorkload("wl", {{"h1", 2}, {"h2", 2}},
                 {{"required", "rack"},
                  {"podIndexLabel", "batch.kubernetes.io/job-completion-index"},
                  {"subGroupIndexLabel", "job-index"},
                  {"subGroupCount", 2}});
  EXPECT_EQ(Placement("j0-0"), "h1");
  EXPECT_EQ(Placement("j0-1"), "h1");
  EXPECT_EQ(Placement("j1-0"), "h2");
  EXPECT_EQ(Placement("j1-1"), "h2");
}

TEST_F(UngaterTest, AReplacementTakesTheFreedSlot) {
  CreateWorkload("wl", {{"h1", 2}, {"h2", 2}});
  for (int i = 0; i < 4; ++i) CreatePod("p" + std::to_string(i), "wl", i);
  EXPECT_EQ(Placement("p0"), "h1");
  EXPECT_EQ(Placement("p3"), "h2");
  ASSERT_TRUE(c_.Delete(pods_, "default", "p0").ok());
  mgr_.RunUntilIdle();
  CreatePod("p0-again", "wl", 0);
  EXPECT_EQ(Placement("p0-again"), "h1") << "h2 is full; h1 lost p0";
}

TEST_F(UngaterTest, MorePodsThanAssignedStayGated) {
  CreateWorkload("wl", {{"h1", 1}});
  CreatePod("p0", "wl", 0);
  CreatePod("p1", "wl", 1);
  EXPECT_EQ(Placement("p0"), "h1");
  EXPECT_EQ(Placement("p1"), "gated");
}

TEST_F(UngaterTest, PodsOfOtherWorkloadsAndUngatedPodsAreLeftAlone) {
  CreateWorkload("wl", {{"h1", 4}});
  CreatePod("other", "another-wl", 0);
  CreatePod("plain", "wl", 1, /*gated=*/false);
  EXPECT_EQ(Placement("other"), "gated");
  EXPECT_EQ(Placement("plain"), "none");
}

// The ungater's reconciles so far.
int64_t UngaterReconciles(const Manager& mgr) {
  for (const auto& [name, n] : mgr.ProcessedByController()) {
    if (name == "topology-ungater") return n;
  }
  return -1;
}

TEST_F(UngaterTest, WorkloadsAdmittedWithoutATopologyAssignmentDoNotWakeIt) {
  Json wl = {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
             {"kind", "Workload"},
             {"metadata", {{"name", "plain"}, {"namespace", "default"}}},
             {"spec",
              {{"queueName", "lq"},
               {"podSets",
                Json::array({{{"name", "main"},
                              {"count", 1},
                              {"template",
                               {{"spec",
                                 {{"restartPolicy", "Never"},
                                  {"containers",
                                   Json::array({{{"name", "c"}, {"image", "x"}}})}}}}}}})}}}};
  ASSERT_TRUE(c_.Create(wls_, "default", wl).ok());
  Json admission = {{"clusterQueue", "cq"},
                    {"podSetAssignments",
                     Json::array({{{"name", "main"}, {"count", 1}, {"flavors", {{"cpu", "f"}}}}})}};
  Json conditions = Json::array({{{"type", "QuotaReserved"},
                                  {"status", "True"},
                                  {"reason", "QuotaReserved"},
                                  {"message", "m"},
                                  {"lastTransitionTime", "2026-01-01T00:00:00Z"}}});
  auto r = c_.MergePatch(wls_, "default", "plain",
                         {{"status", {{"admission", admission}, {"conditions", conditions}}}}, true);
  ASSERT_TRUE(r.ok()) << r.status();
  mgr_.RunUntilIdle();
  EXPECT_EQ(UngaterReconciles(mgr_), 0) << "admitted without a topology assignment";
  // One with a topology assignment does.
  CreateWorkload("wl", {{"h1", 4}});
  EXPECT_GT(UngaterReconciles(mgr_), 0);
}

}  // namespace
}  // namespace batchd::controllers::topology
