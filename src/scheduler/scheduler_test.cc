#include "scheduler/scheduler_test_env.h"
#include "registry/errors.h"

namespace batchd::scheduler {
namespace {

using api::Json;
using testing::MakeNode;
using testing::MakePod;
using SchedulerTest = testing::SchedulerTestEnv;

TEST_F(SchedulerTest, BindsOnlyPodsItOwns) {
  CreateNode("n1", "4");
  CreatePod(MakePod("plain", "1"));
  Json gated = MakePod("gated", "1");
  gated["spec"]["schedulingGates"] = Json::array({{{"name", "kueue"}}});
  CreatePod(gated);
  Json other = MakePod("other", "1");
  other["spec"]["schedulerName"] = "volcano";
  CreatePod(other);
  mgr_.RunUntilIdle();
  EXPECT_EQ(NodeOf("plain"), "n1");
  EXPECT_EQ(NodeOf("gated"), "");
  EXPECT_EQ(NodeOf("other"), "");
  EXPECT_EQ(Condition("plain", "PodScheduled").value("status", ""), "True");
  EXPECT_EQ(ev_.Reasons(), (std::vector<std::string>{"Scheduled"}));

  // Removing the gate makes the pod schedulable.
  ASSERT_TRUE(c_.MergePatch(pods_, "default", "gated",
                            Json::parse(R"({"spec":{"schedulingGates":null}})"))
                  .ok());
  mgr_.RunUntilIdle();
  EXPECT_EQ(NodeOf("gated"), "n1");
}

TEST_F(SchedulerTest, BurstIsNotOverPackedAndPriorityGoesFirst) {
  CreateNode("a", "2");
  CreateNode("b", "2");
  for (int i = 0; i < 5; ++i) CreatePod(MakePod("low" + std::to_string(i), "1"));
  Json high = MakePod("high", "1");
  high["spec"]["priority"] = 100;
  CreatePod(high);
  mgr_.RunUntilIdle();
  std::map<std::string, int> per_node;
  for (const char* p : {"low0", "low1", "low2", "low3", "low4", "high"}) {
    ++per_node[NodeOf(p)];
  }
  EXPECT_EQ(per_node["a"], 2);
  EXPECT_EQ(per_node["b"], 2);
  EXPECT_EQ(per_node[""], 2);
  EXPECT_NE(NodeOf("high"), "");
  // Creation order (same second) then name: low0..low2 bound, low3 and low4 wait.
  EXPECT_EQ(NodeOf("low3"), "");
  EXPECT_EQ(NodeOf("low4"), "");
}

TEST_F(SchedulerTest, UnschedulableConditionThenRetryWhenCapacityAppears) {
  CreateNode("small", "500m");
  Json tainted = MakeNode("tainted", "8");
  tainted["spec"]["taints"] = Json::array({{{"key", "dedicated"}, {"value", "infra"},
                                            {"effect", "NoSchedule"}}});
  CreateNodeObj(tainted);
  CreatePod(MakePod("big", "1"));
  mgr_.RunUntilIdle();
  EXPECT_EQ(NodeOf("big"), "");
  Json cond = Condition("big", "PodScheduled");
  EXPECT_EQ(cond.value("status", ""), "False");
  EXPECT_EQ(cond.value("reason", ""), "Unschedulable");
  EXPECT_EQ(cond.value("message", ""),
            "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint "
            "{dedicated: infra}. preemption: 0/2 nodes are available: 1 No preemption victims "
            "found for incoming pod, 1 Preemption is not helpful for scheduling.");
  // Nothing changes: no hot loop, no second write or event.
  clock_.Advance(absl::Seconds(10));
  EXPECT_EQ(mgr_.RunUntilIdle(), 0);
  EXPECT_EQ(ev_.Reasons(), (std::vector<std::string>{"FailedScheduling"}));
  // The periodic flush retries it once; the same verdict is not written again.
  clock_.Advance(absl::Minutes(5));
  EXPECT_EQ(mgr_.RunUntilIdle(), 1);
  EXPECT_EQ(ev_.Reasons(), (std::vector<std::string>{"FailedScheduling"}));

  CreateNode("large", "4");
  mgr_.RunUntilIdle();
  EXPECT_EQ(NodeOf("big"), "large");
  EXPECT_EQ(Condition("big", "PodScheduled").value("status", ""), "True");
}

TEST_F(SchedulerTest, DeletedPodFreesCapacity) {
  CreateNode("n", "1");
  CreatePod(MakePod("first", "1"));
  mgr_.RunUntilIdle();
  CreatePod(MakePod("second", "1"));
  mgr_.RunUntilIdle();
  EXPECT_EQ(NodeOf("first"), "n");
  EXPECT_EQ(NodeOf("second"), "");
  client::DeleteOptions now;
  now.grace_period_seconds = 0;
  ASSERT_TRUE(c_.Delete(pods_, "default", "first", now).ok());
  mgr_.RunUntilIdle();
  EXPECT_EQ(NodeOf("second"), "n");
}

TEST_F(SchedulerTest, TerminalPodFreesCapacity) {
  CreateNode("n", "1");
  CreatePod(MakePod("first", "1"));
  CreatePod(MakePod("second", "1"));
  mgr_.RunUntilIdle();
  ASSERT_EQ(NodeOf("first"), "n");
  ASSERT_TRUE(c_.MergePatch(pods_, "default", "first",
                            Json::parse(R"({"status":{"phase":"Succeeded"}})"), true)
                  .ok());
  mgr_.RunUntilIdle();
  EXPECT_EQ(NodeOf("second"), "n");
}

// Waiting pods of one signature are retried one at a time (the group's first,
// then the next as each binds), yet every pod binds in queue order as capacity
// frees, and a pod of another signature is not held up behind them.
TEST_F(SchedulerTest, WaitingPodsOfOneSignatureBindInOrderAsCapacityFrees) {
  CreateNode("n", "2");
  for (int i = 0; i < 6; ++i) CreatePod(MakePod("p" + std::to_string(i), "1"));
  CreatePod(MakePod("small", "500m"));
  mgr_.RunUntilIdle();
  EXPECT_EQ(NodeOf("p0"), "n");
  EXPECT_EQ(NodeOf("p1"), "n");
  for (int i = 2; i < 6; ++i) {
    EXPECT_EQ(Condition("p" + std::to_string(i), "PodScheduled").value("reason", ""),
              "Unschedulable");
  }
  // Each finished pod makes room for exactly the next one in order; when two
  // finish at once, two bind.
  auto finish = [&](const std::string& pod) {
    ASSERT_TRUE(c_.MergePatch(pods_, "default", pod,
                              Json::parse(R"({"status":{"phase":"Succeeded"}})"), true)
                    .ok());
  };
  finish("p0");
  mgr_.RunUntilIdle();
  EXPECT_EQ(NodeOf("p2"), "n");
  EXPECT_EQ(NodeOf("p3"), "");
  EXPECT_EQ(NodeOf("small"), "");  // 500m does not fit in the 0 cpu left
  finish("p1");
  finish("p2");
  mgr_.RunUntilIdle();
  EXPECT_EQ(NodeOf("p3"), "n");
  EXPECT_EQ(NodeOf("p4"), "n");
  EXPECT_EQ(NodeOf("p5"), "");
  // A new 1-cpu node: p5 is first in queue order and takes it all.
  CreateNode("m", "1");
  mgr_.RunUntilIdle();
  EXPECT_EQ(NodeOf("p5"), "m");
  EXPECT_EQ(NodeOf("small"), "");
  finish("p3");
  mgr_.RunUntilIdle();
  EXPECT_EQ(NodeOf("small"), "n");  // the other group's pod was retried too
}

class FailingBinder : public Binder {
 public:
  absl::Status Bind(const std::string&, const std::string&, const std::string&) override {
    ++calls;
    return absl::UnavailableError("store down");
  }
  int calls = 0;
};

TEST(SchedulerBinderTest, BindErrorsAreRetriedWithBackoff) {
  FakeClock clock;
  store::MemoryStore store;
  registry::Registry reg(store, api::BuiltinScheme(), clock);
  ASSERT_TRUE(reg.Start().ok());
  client::InProcessClient c(reg);
  reconcile::Manager mgr(clock);
  reconcile::InformerFactory inf(c, mgr);
  reconcile::FakeEventRecorder ev;
  reconcile::ControllerContext ctx{c, inf, mgr, clock, ev};
  auto binder = std::make_shared<FailingBinder>();
  AddScheduler(ctx, SchedulerOptions{binder});
  ASSERT_TRUE(mgr.SyncAll().ok());
  Json node = MakeNode("n", "2");
  ASSERT_TRUE(c.Create(c.Kind("", "v1", "nodes"), "", node).ok());
  ASSERT_TRUE(c.MergePatch(c.Kind("", "v1", "nodes"), "", "n", {{"status", node["status"]}}, true).ok());
  ASSERT_TRUE(c.Create(c.Kind("", "v1", "pods"), "default", MakePod("p", "1")).ok());
  mgr.RunUntilIdle();
  EXPECT_EQ(binder->calls, 1);
  clock.Advance(absl::Seconds(1));
  mgr.RunUntilIdle();
  EXPECT_GE(binder->calls, 2);
}

// Records each BindMany call's size, binding through the registry.
class CountingBinder : public RegistryBinder {
 public:
  using RegistryBinder::RegistryBinder;
  std::vector<absl::Status> BindMany(const std::vector<Request>& reqs) override {
    sizes.push_back(reqs.size());
    return RegistryBinder::BindMany(reqs);
  }
  std::vector<size_t> sizes;
};

// The binds of one pass go out together: one BindMany (one store commit),
// each pod bound on its own, a pod taken meanwhile failing alone.
TEST(SchedulerBinderTest, OnePassBindsItsPodsWithOneBindMany) {
  FakeClock clock;
  store::MemoryStore store;
  registry::Registry reg(store, api::BuiltinScheme(), clock);
  ASSERT_TRUE(reg.Start().ok());
  client::InProcessClient c(reg);
  reconcile::Manager mgr(clock);
  reconcile::InformerFactory inf(c, mgr);
  reconcile::FakeEventRecorder ev;
  reconcile::ControllerContext ctx{c, inf, mgr, clock, ev};
  auto binder = std::make_shared<CountingBinder>(reg);
  AddScheduler(ctx, SchedulerOptions{binder});
  ASSERT_TRUE(mgr.SyncAll().ok());
  Json node = MakeNode("n", "8");
  ASSERT_TRUE(c.Create(c.Kind("", "v1", "nodes"), "", node).ok());
  ASSERT_TRUE(c.MergePatch(c.Kind("", "v1", "nodes"), "", "n", {{"status", node["status"]}}, true).ok());
  const int64_t rev0 = store.Revision();
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(c.Create(c.Kind("", "v1", "pods"), "default", MakePod("p" + std::to_string(i), "1")).ok());
  }
  mgr.RunUntilIdle();
  EXPECT_EQ(binder->sizes, (std::vector<size_t>{6}));
  for (int i = 0; i < 6; ++i) {
    auto p = c.Get(c.Kind("", "v1", "pods"), "default", "p" + std::to_string(i));
    ASSERT_TRUE(p.ok());
    EXPECT_EQ((*p)["spec"].value("nodeName", ""), "n");
  }
  EXPECT_EQ(store.Revision(), rev0 + 12);  // 6 creates, 6 binds: nothing else written
  EXPECT_EQ(ev.Reasons(), std::vector<std::string>(6, "Scheduled"));
}

}  // namespace
}  // namespace batchd::scheduler
