// Exclusive placement: the pod webhook on its own, then a JobSet through
// the JobSet controller, the Job controller, the webhook and the scheduler
// on nodes in racks (in process, FakeClock), then the placement controller.
#include "controllers/jobset/exclusive_placement.h"

#include <map>
#include <set>

#include "api/testing/jobset_builders.h"
#include "client/in_process_client.h"
#include "common/testing/fake_clock.h"
#include "controllers/job/job_controller.h"
#include "controllers/jobset/jobset_controller.h"
#include "gtest/gtest.h"
#include "registry/errors.h"
#include "registry/priority_admission.h"
#include "scheduler/scheduler.h"
#include "store/memory/memory_store.h"

namespace batchd::controllers {
namespace {

using api::Json;
using api::testing::MakeJobSet;

constexpr char kEx[] = "alpha.jobset.sigs.k8s.io/exclusive-topology";
constexpr char kJobKeyLabel[] = "jobset.sigs.k8s.io/job-key";

class ExclusivePlacementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(reg_.Start().ok());
    registry::AddPriorityAdmission(reg_);
    ASSERT_TRUE(AddJobSetPodWebhook(reg_).ok());
  }

  // Nodes <rack>-h1 and <rack>-h2 with the label rack=<rack>, 4 CPUs each.
  void AddRack(const std::string& rack) {
    for (const char* h : {"h1", "h2"}) {
      const std::string name = rack + "-" + h;
      Json node = {{"apiVersion", "v1"},
                   {"kind", "Node"},
                   {"metadata", {{"name", name}, {"labels", {{"rack", rack}}}}}};
      ASSERT_TRUE(c_.Create(nodes_, "", node).ok());
      Json status = {{"allocatable", {{"cpu", "4"}, {"memory", "16Gi"}, {"pods", "110"}}},
                     {"capacity", {{"cpu", "4"}, {"memory", "16Gi"}, {"pods", "110"}}},
                     {"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})}};
      ASSERT_TRUE(c_.MergePatch(nodes_, "", name, {{"status", status}}, true).ok());
    }
  }

  // A pod of child Job `job` (uid `uid`), completion index `index`.
  Json JobSetPod(const std::string& name, const std::string& job, int index,
                 const std::string& uid = "job-uid") {
    Json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata",
                 {{"name", name},
                  {"namespace", "default"},
                  {"labels", {{kJobKeyLabel, job + "-key"},
                              {"batch.kubernetes.io/job-completion-index", std::to_string(index)}}},
                  {"annotations", {{"jobset.sigs.k8s.io/jobset-name", "js"},
                                   {"batch.kubernetes.io/job-completion-index", std::to_string(index)},
                                   {kEx, "rack"}}},
                  {"ownerReferences",
                   Json::array({{{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"name", job},
                                 {"uid", uid}, {"controller", true}}})}}},
                {"spec",
                 {{"restartPolicy", "Never"},
                  {"containers", Json::array({{{"name", "c"}, {"image", "x"}}})}}}};
    return pod;
  }
  absl::StatusOr<Json> CreatePod(Json pod) { return c_.Create(pods_, "default", std::move(pod)); }
  void Bind(const std::string& pod, const std::string& node) {
    scheduler::RegistryBinder binder(reg_);
    ASSERT_TRUE(binder.Bind("default", pod, node).ok());
  }
  Json GetPod(const std::string& name) {
    auto p = c_.Get(pods_, "default", name);
    return p.ok() ? *p : Json();
  }

  FakeClock clock_;
  store::MemoryStore store_;
  registry::Registry reg_{store_, api::BuiltinScheme(), clock_};
  client::InProcessClient c_{reg_};
  const api::KindDef& pods_ = c_.Kind("", "v1", "pods");
  const api::KindDef& nodes_ = c_.Kind("", "v1", "nodes");
};

TEST_F(ExclusivePlacementTest, WebhookLeaderAffinitiesAndFollowerBehindItsLeader) {
  AddRack("r1");
  // Not a JobSet pod: untouched.
  Json plain = JobSetPod("plain", "p", 0, "p-uid");
  plain["metadata"]["annotations"].erase("jobset.sigs.k8s.io/jobset-name");
  auto p = CreatePod(plain);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_FALSE((*p)["metadata"]["labels"].contains("jobset.sigs.k8s.io/priority"));
  EXPECT_FALSE((*p)["spec"].contains("affinity"));

  // The leader: priority label and both affinities.
  auto leader = CreatePod(JobSetPod("j-0", "j", 0));
  ASSERT_TRUE(leader.ok()) << leader.status();
  EXPECT_EQ((*leader)["metadata"]["labels"]["jobset.sigs.k8s.io/priority"], "0");
  EXPECT_EQ((*leader)["spec"]["affinity"], Json::parse(R"({
    "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
      {"labelSelector": {"matchExpressions": [
         {"key": "jobset.sigs.k8s.io/job-key", "operator": "In", "values": ["j-key"]}]},
       "topologyKey": "rack", "namespaceSelector": {}}]},
    "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
      {"labelSelector": {"matchExpressions": [
         {"key": "jobset.sigs.k8s.io/job-key", "operator": "Exists"},
         {"key": "jobset.sigs.k8s.io/job-key", "operator": "NotIn", "values": ["j-key"]},
         {"key": "jobset.sigs.k8s.io/priority", "operator": "In", "values": ["0"]}]},
       "topologyKey": "rack", "namespaceSelector": {}}]}})"));

  // A follower waits for its leader to be scheduled.
  auto early = CreatePod(JobSetPod("j-1", "j", 1));
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(registry::GetPayload(early.status()).reason, "Forbidden");
  EXPECT_NE(early.status().message().find(
                "leader pod not yet scheduled, not creating follower pod. this is an expected, "
                "transient error"),
            std::string::npos)
      << early.status();
  // A pod of another Job with the same job-key (an older attempt) is no leader.
  auto stranger = CreatePod(JobSetPod("j-1", "j", 1, "other-job-uid"));
  ASSERT_FALSE(stranger.ok());
  EXPECT_NE(stranger.status().message().find("expected 1 leader pod"), std::string::npos)
      << stranger.status();

  Bind("j-0", "r1-h2");
  auto follower = CreatePod(JobSetPod("j-1", "j", 1));
  ASSERT_TRUE(follower.ok()) << follower.status();
  EXPECT_EQ((*follower)["spec"]["nodeSelector"], Json({{"rack", "r1"}}));
  EXPECT_FALSE((*follower)["spec"].contains("affinity"));
}

TEST_F(ExclusivePlacementTest, WebhookRefusesFollowerWhenLeaderNodeLacksTheLabel) {
  Json node = {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "bare"}}}};
  ASSERT_TRUE(c_.Create(nodes_, "", node).ok());
  ASSERT_TRUE(CreatePod(JobSetPod("j-0", "j", 0)).ok());
  Bind("j-0", "bare");
  auto follower = CreatePod(JobSetPod("j-1", "j", 1));
  ASSERT_FALSE(follower.ok());
  EXPECT_NE(follower.status().message().find("node does not have topology label: rack"),
            std::string::npos)
      << follower.status();
}

TEST_F(ExclusivePlacementTest, NodeSelectorStrategyPodsAreLeftAlone) {
  Json pod = JobSetPod("j-1", "j", 1);
  pod["metadata"]["annotations"]["alpha.jobset.sigs.k8s.io/node-selector"] = "true";
  auto created = CreatePod(pod);
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_FALSE((*created)["metadata"]["labels"].contains("jobset.sigs.k8s.io/priority"));
  EXPECT_FALSE((*created)["spec"].contains("nodeSelector"));
}

// The whole path in process: JobSet -> Jobs -> pods (webhook) -> scheduler.
class ExclusiveStackTest : public ExclusivePlacementTest {
 protected:
  void SetUp() override {
    ExclusivePlacementTest::SetUp();
    AddJobSetController(ctx_);
    AddJobController(ctx_, {});
    scheduler::SchedulerOptions so;
    so.binder = std::make_shared<scheduler::RegistryBinder>(reg_);
    scheduler::AddScheduler(ctx_, so);
    AddExclusivePlacementController(ctx_);
    ASSERT_TRUE(mgr_.SyncAll().ok());
  }
  // Runs the controllers, advancing the clock over their retry backoffs.
  void Settle() {
    for (int i = 0; i < 50; ++i) {
      mgr_.RunUntilIdle(20000);
      clock_.Advance(absl::Milliseconds(200));
    }
  }
  // Job name -> racks of its bound pods, and the number of its unbound pods.
  std::map<std::string, std::set<std::string>> RacksByJob(int* unbound) {
    std::map<std::string, std::set<std::string>> out;
    *unbound = 0;
    auto list = c_.List(pods_, "default", {});
    for (const Json& pod : list->items) {
      const std::string job = pod["metadata"]["labels"].value("batch.kubernetes.io/job-name", "");
      const std::string node = pod["spec"].value("nodeName", "");
      if (node.empty()) {
        ++*unbound;
      } else {
        out[job].insert(node.substr(0, 2));
      }
    }
    return out;
  }

  reconcile::Manager mgr_{clock_};
  reconcile::InformerFactory inf_{c_, mgr_};
  reconcile::FakeEventRecorder ev_;
  reconcile::ControllerContext ctx_{c_, inf_, mgr_, clock_, ev_};
};

TEST_F(ExclusiveStackTest, OneJobPerRack) {
  AddRack("r1");
  AddRack("r2");
  Json js = MakeJobSet("js").ReplicatedJob("workers", 3, 3).Obj();
  js["metadata"]["annotations"] = {{kEx, "rack"}};
  ASSERT_TRUE(c_.Create(c_.Kind("jobset.x-k8s.io", "v1alpha2", "jobsets"), "default", js).ok());
  Settle();
  int unbound = 0;
  std::map<std::string, std::set<std::string>> racks = RacksByJob(&unbound);
  // Two Jobs have all 3 pods in one rack each, different racks; the third
  // Job's leader waits (anti-affinity) and its followers are not created.
  ASSERT_EQ(racks.size(), 2u) << ::testing::PrintToString(racks);
  std::set<std::string> used;
  for (const auto& [job, set] : racks) {
    EXPECT_EQ(set.size(), 1u) << job;
    used.insert(set.begin(), set.end());
  }
  EXPECT_EQ(used, (std::set<std::string>{"r1", "r2"}));
  EXPECT_EQ(unbound, 1);
  auto pods = c_.List(pods_, "default", {});
  EXPECT_EQ(pods->items.size(), 7u);
}

TEST_F(ExclusiveStackTest, MisplacedFollowersAreEvicted) {
  AddRack("r1");
  AddRack("r2");
  // A follower pinned to r2 (its old leader's rack) while the new leader
  // runs in r1.
  Json follower = JobSetPod("j-1", "j", 1);
  follower["metadata"]["annotations"]["alpha.jobset.sigs.k8s.io/node-selector"] = "true";
  follower["spec"]["nodeSelector"] = {{"rack", "r2"}};
  ASSERT_TRUE(CreatePod(follower).ok());
  ASSERT_TRUE(CreatePod(JobSetPod("j-0", "j", 0)).ok());
  Bind("j-0", "r1-h1");
  Settle();
  // DisruptionTarget, then deleted (gone, or terminating on its node).
  Json evicted = GetPod("j-1");
  if (!evicted.is_null()) {
    EXPECT_TRUE(evicted["metadata"].contains("deletionTimestamp")) << evicted.dump();
    bool disrupted = false;
    for (const Json& c : evicted["status"].value("conditions", Json::array())) {
      disrupted |= c.value("type", "") == "DisruptionTarget" &&
                   c.value("reason", "") == "ExclusivePlacementViolation";
    }
    EXPECT_TRUE(disrupted) << evicted.dump();
  }
  Json leader = GetPod("j-0");
  ASSERT_FALSE(leader.is_null());
  EXPECT_FALSE(leader["metadata"].contains("deletionTimestamp"));
}

}  // namespace
}  // namespace batchd::controllers
