// Node fencing on the agent's side: NodeFence's deadlines on an injected
// clock, and a NodeAgent (FakePodRuntime, in-process API behind a client that
// can be cut off) that hands them to the runtime at every lease renewal,
// stops moving them on while cut off, and reports a pod its shim fenced as
// Failed/Evicted once it is back.
#include "agent/internal/fence.h"

#include "agent/agent.h"
#include "agent/testing/fake_pod_runtime.h"
#include "api/meta/object_meta.h"
#include "client/in_process_client.h"
#include "common/testing/fake_clock.h"
#include "gtest/gtest.h"
#include "store/memory/memory_store.h"

namespace batchd::agent {
namespace {

using api::Json;

Json Tolerating(std::optional<int64_t> seconds) {
  Json t = {{"key", "node.kubernetes.io/unreachable"}, {"operator", "Exists"},
            {"effect", "NoExecute"}};
  if (seconds) t["tolerationSeconds"] = *seconds;
  return Json{{"spec", {{"tolerations", Json::array({t})}}}};
}

TEST(NodeFenceTest, DeadlinesFollowTheLastRenewalSent) {
  FakeClock clock;
  internal::NodeFence fence(absl::Seconds(40));
  const Json plain = {{"spec", Json::object()}};
  // Before any renewal a pod would be fenced at once.
  EXPECT_EQ(fence.DeadlineFor(plain), absl::InfinitePast());
  EXPECT_EQ(fence.RemainingFor(plain, clock.Now()), -absl::InfiniteDuration());
  EXPECT_FALSE(fence.Lapsed(clock.Now()));  // nothing to lapse yet

  const absl::Time t0 = clock.Now();
  fence.Renewed(t0);
  EXPECT_EQ(fence.DeadlineFor(plain), t0 + absl::Seconds(40));
  EXPECT_EQ(fence.DeadlineFor(Tolerating(300)), t0 + absl::Seconds(300));
  EXPECT_EQ(fence.DeadlineFor(Tolerating(5)), t0 + absl::Seconds(40));
  EXPECT_EQ(fence.DeadlineFor(Tolerating(std::nullopt)), absl::InfiniteFuture());
  EXPECT_EQ(fence.RemainingFor(Tolerating(std::nullopt), t0), absl::InfiniteDuration());

  // Renewals every 10 s keep it 30-40 s away; one that completes late with
  // an older send time does not move it back.
  for (int i = 0; i < 5; ++i) {
    clock.Advance(absl::Seconds(10));
    fence.Renewed(clock.Now());
    EXPECT_FALSE(fence.Lapsed(clock.Now()));
  }
  const absl::Time last = clock.Now();
  fence.Renewed(last - absl::Seconds(25));
  EXPECT_EQ(fence.last_renewed(), last);
  // Cut off: the deadline stays, time runs out.
  clock.Advance(absl::Seconds(39));
  EXPECT_EQ(fence.RemainingFor(plain, clock.Now()), absl::Seconds(1));
  EXPECT_FALSE(fence.Lapsed(clock.Now()));
  clock.Advance(absl::Seconds(1));
  EXPECT_EQ(fence.RemainingFor(plain, clock.Now()), absl::ZeroDuration());
  EXPECT_FALSE(fence.Lapsed(clock.Now()));  // exactly the period: not yet
  clock.Advance(absl::Milliseconds(1));
  EXPECT_TRUE(fence.Lapsed(clock.Now()));
  EXPECT_LT(fence.RemainingFor(plain, clock.Now()), absl::ZeroDuration());
  // Back: a new renewal, a new deadline.
  fence.Renewed(clock.Now());
  EXPECT_FALSE(fence.Lapsed(clock.Now()));
  EXPECT_EQ(fence.RemainingFor(plain, clock.Now()), absl::Seconds(40));
}

TEST(NodeFenceTest, OffGivesNoDeadlines) {
  internal::NodeFence fence(absl::ZeroDuration());
  EXPECT_FALSE(fence.enabled());
  EXPECT_EQ(fence.DeadlineFor(Json::object()), absl::InfiniteFuture());
  EXPECT_FALSE(fence.Lapsed(absl::Now()));
}

// An in-process client whose writes and reads fail while `cut` (the agent's
// network to the server is gone; watches already open keep running).
class CuttableClient : public client::Client {
 public:
  explicit CuttableClient(client::Client& inner) : inner_(inner) {}
  bool cut = false;
  const api::Scheme& scheme() const override { return inner_.scheme(); }
  absl::StatusOr<Json> Get(const api::KindDef& k, const std::string& ns,
                           const std::string& name) override {
    if (cut) return Down();
    return inner_.Get(k, ns, name);
  }
  absl::StatusOr<client::ListResult> List(const api::KindDef& k, const std::string& ns,
                                          const client::Selector& sel) override {
    if (cut) return Down();
    return inner_.List(k, ns, sel);
  }
  absl::StatusOr<Json> Create(const api::KindDef& k, const std::string& ns, Json obj) override {
    if (cut) return Down();
    return inner_.Create(k, ns, std::move(obj));
  }
  absl::StatusOr<Json> Update(const api::KindDef& k, Json obj) override {
    if (cut) return Down();
    return inner_.Update(k, std::move(obj));
  }
  absl::StatusOr<Json> UpdateStatus(const api::KindDef& k, Json obj) override {
    if (cut) return Down();
    return inner_.UpdateStatus(k, std::move(obj));
  }
  absl::StatusOr<Json> MergePatch(const api::KindDef& k, const std::string& ns,
                                  const std::string& name, const Json& patch,
                                  bool status) override {
    if (cut) return Down();
    return inner_.MergePatch(k, ns, name, patch, status);
  }
  absl::Status Delete(const api::KindDef& k, const std::string& ns, const std::string& name,
                      const client::DeleteOptions& opts) override {
    if (cut) return Down();
    return inner_.Delete(k, ns, name, opts);
  }
  absl::StatusOr<std::unique_ptr<client::WatchStream>> Watch(
      const api::KindDef& k, const std::string& ns, const client::Selector& sel,
      const std::string& rv) override {
    if (cut) return Down();
    return inner_.Watch(k, ns, sel, rv);
  }

 private:
  static absl::Status Down() { return absl::UnavailableError("connection timed out"); }
  client::Client& inner_;
};

class FakeProbe : public HostProbe {
 public:
  int CpuCount() override { return 4; }
  int64_t MemoryBytes() override { return int64_t{8} << 30; }
  int64_t DiskBytes(const std::string&) override { return int64_t{100} << 30; }
  int64_t DiskAvailableBytes(const std::string&) override { return int64_t{50} << 30; }
  int GpuCount() override { return 0; }
  NodeFacts Facts() override { return {"host1", "amd64", "6.1.0", "Debian", "m", "b"}; }
};

class AgentFenceTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(reg_.Start().ok()); }
  void StartAgent(absl::Duration fence_period) {
    agent_.reset();
    runtime_ = new testing::FakePodRuntime();
    AgentOptions o;
    o.node_name = "n1";
    o.fence_period = fence_period;
    agent_ = std::make_unique<NodeAgent>(o, client_, clock_,
                                         std::unique_ptr<PodRuntime>(runtime_), probe_);
    ASSERT_TRUE(agent_->Sync().ok());
    agent_->RunUntilIdle();
  }
  void Tick(absl::Duration d) {
    const absl::Time end = clock_.Now() + d;
    while (clock_.Now() < end) {
      clock_.Advance(std::min(absl::Milliseconds(500), end - clock_.Now()));
      agent_->RunUntilIdle();
    }
  }
  std::string CreatePod(const std::string& name, Json tolerations = Json::array()) {
    Json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", name}, {"namespace", "default"}}},
                {"spec",
                 {{"nodeName", "n1"},
                  {"restartPolicy", "Never"},
                  {"tolerations", std::move(tolerations)},
                  {"containers",
                   Json::array({{{"name", "c"}, {"image", "busybox"},
                                 {"command", Json::array({"sleep", "300"})}}})}}}};
    auto p = inner_.Create(Pods(), "default", pod);
    EXPECT_TRUE(p.ok()) << p.status();
    agent_->RunUntilIdle();
    return p.ok() ? api::meta::GetUid(*p) : "";
  }
  Json NodeAnnotations() {
    auto n = inner_.Get(inner_.Kind("", "v1", "nodes"), "", "n1");
    return n.ok() ? (*n)["metadata"].value("annotations", Json::object()) : Json();
  }
  void SetRunning(const std::string& uid) {
    PodSandboxStatus st = runtime_->Get(uid);
    st.found = true;
    ContainerStatus c;
    c.name = "c";
    c.state = ContainerStatus::State::kRunning;
    c.started = c.ready = true;
    c.started_at = clock_.Now();
    st.app = {c};
    st.supervisor_alive = true;
    runtime_->SetStatus(uid, st);
  }
  const api::KindDef& Pods() { return inner_.Kind("", "v1", "pods"); }

  FakeClock clock_;
  store::MemoryStore store_;
  registry::Registry reg_{store_, api::BuiltinScheme(), clock_};
  client::InProcessClient inner_{reg_};
  CuttableClient client_{inner_};
  FakeProbe probe_;
  testing::FakePodRuntime* runtime_ = nullptr;  // Owned by the agent.
  std::unique_ptr<NodeAgent> agent_;
};

TEST_F(AgentFenceTest, DeadlinesMoveWithRenewalsAndStopWhileCutOff) {
  StartAgent(absl::Seconds(40));
  EXPECT_EQ(NodeAnnotations().value("batchd.io/fence-period-seconds", ""), "40");
  const std::string plain = CreatePod("plain");
  const std::string patient = CreatePod("patient", Tolerating(300)["spec"]["tolerations"]);
  const std::string forever = CreatePod("forever", Tolerating(std::nullopt)["spec"]["tolerations"]);
  // Set before the sandbox starts (Start), from the renewal at Sync.
  EXPECT_EQ(runtime_->Fence(plain), absl::Seconds(40));
  EXPECT_EQ(runtime_->Fence(patient), absl::Seconds(300));
  EXPECT_EQ(runtime_->Fence(forever), std::nullopt);
  SetRunning(plain);
  SetRunning(patient);
  const int started = runtime_->fence_writes();
  Tick(absl::Seconds(4));
  EXPECT_EQ(runtime_->fence_writes(), started);  // not moved between renewals
  Tick(absl::Seconds(6));                        // the 10 s heartbeat renews
  EXPECT_GT(runtime_->fence_writes(), started);  // 40 s from this renewal
  EXPECT_EQ(runtime_->Fence(plain), absl::Seconds(40));
  EXPECT_EQ(runtime_->Fence(patient), absl::Seconds(300));
  EXPECT_EQ(runtime_->Fence(forever), std::nullopt);

  // Cut off: renewals fail, nothing moves the deadlines on.
  client_.cut = true;
  const int writes = runtime_->fence_writes();
  Tick(absl::Seconds(45));
  EXPECT_EQ(runtime_->fence_writes(), writes);
  EXPECT_EQ(runtime_->Fence(plain), absl::Seconds(40));  // set 45 s ago: past
  // The shim fenced `plain` (FakePodRuntime has no shim: as the real one
  // records it).
  PodSandboxStatus st = runtime_->Get(plain);
  st.app[0].state = ContainerStatus::State::kTerminated;
  st.app[0].exit_code = 137;
  st.app[0].signal = 9;
  st.app[0].reason = "Error";
  st.app[0].finished_at = clock_.Now();
  st.reason = "Evicted";
  st.message = "The node lost contact with the API server for longer than its fence period";
  st.finished = true;
  st.supervisor_alive = false;
  runtime_->SetStatus(plain, st);
  Tick(absl::Seconds(1));
  EXPECT_EQ((*inner_.Get(Pods(), "default", "plain"))["status"].value("phase", ""), "Running");

  // Back: the next renewal moves the others' deadlines on, and the fenced pod
  // is reported as Kubernetes reports a pod the kubelet evicted.
  client_.cut = false;
  Tick(absl::Seconds(12));
  EXPECT_GT(runtime_->fence_writes(), writes);
  EXPECT_EQ(runtime_->Fence(patient).value_or(absl::ZeroDuration()) > absl::Seconds(290), true);
  const Json got = *inner_.Get(Pods(), "default", "plain");
  EXPECT_EQ(got["status"]["phase"], "Failed");
  EXPECT_EQ(got["status"]["reason"], "Evicted");
  bool disrupted = false;
  for (const Json& c : got["status"]["conditions"]) {
    disrupted |= c["type"] == "DisruptionTarget" && c["status"] == "True" &&
                 c["reason"] == "TerminationByKubelet";
  }
  EXPECT_TRUE(disrupted) << got["status"].dump();
}

TEST_F(AgentFenceTest, AnAgentThatDoesNotFenceRemovesTheAnnotationAndSetsNoDeadlines) {
  StartAgent(absl::Seconds(40));
  ASSERT_EQ(NodeAnnotations().value("batchd.io/fence-period-seconds", ""), "40");
  const std::string uid = CreatePod("p");
  ASSERT_EQ(runtime_->Fence(uid), absl::Seconds(40));
  // The next agent on the node does not fence.
  StartAgent(absl::ZeroDuration());
  EXPECT_FALSE(NodeAnnotations().contains("batchd.io/fence-period-seconds"));
  const std::string other = CreatePod("q");
  EXPECT_EQ(runtime_->Fence(other), std::nullopt);
  Tick(absl::Seconds(11));
  EXPECT_EQ(runtime_->fence_writes(), 0);
}

}  // namespace
}  // namespace batchd::agent
