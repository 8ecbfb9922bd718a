#include "agent/agent.h"
#include <sys/stat.h>
#include <unistd.h>
#include <cstdlib>
#include <filesystem>

#include "absl/strings/match.h"

#include "agent/testing/fake_pod_runtime.h"
#include "api/meta/object_meta.h"
#include "client/in_process_client.h"
#include "common/testing/fake_clock.h"
#include "gtest/gtest.h"
#include "registry/errors.h"
#include "store/memory/memory_store.h"

namespace batchd::agent {
namespace {

using api::Json;
using State = ContainerStatus::State;

class FakeHostProbe : public HostProbe {
 public:
  int CpuCount() override { return 4; }
  int64_t MemoryBytes() override { return int64_t{8} << 30; }
  int64_t DiskBytes(const std::string&) override { return int64_t{100} << 30; }
  int64_t DiskAvailableBytes(const std::string&) override { return available; }
  int64_t available = int64_t{50} << 30;
  int GpuCount() override { return 2; }
  NodeFacts Facts() override { return {"host1", "amd64", "6.1.0", "Debian", "m", "b"}; }
};

Json MakePod(const std::string& name, const std::string& policy = "Never") {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec",
           {{"nodeName", "n1"},
            {"restartPolicy", policy},
            {"terminationGracePeriodSeconds", 5},
            {"containers",
             Json::array({{{"name", "c"},
                           {"image", "busybox"},
                           {"command", Json::array({"sh", "-c", "echo $(MSG)"})},
                           {"env", Json::array({{{"name", "MSG"}, {"value", "hi"}}})}}})}}}};
}

class AgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(reg_.Start().ok());
    runtime_ = new testing::FakePodRuntime();
  }
  void StartAgent() {
    AgentOptions o;
    o.node_name = "n1";
    o.labels = {{"pool", "a"}};
    o.taints = Json::array({{{"key", "gpu"}, {"effect", "NoSchedule"}}});
    o.log_port = 10250;
    o.first_status_delay = first_status_delay_;
    o.eviction_pressure_transition_period = absl::Seconds(30);
    agent_ = std::make_unique<NodeAgent>(o, client_, clock_,
                                         std::unique_ptr<PodRuntime>(runtime_), probe_);
    ASSERT_TRUE(agent_->Sync().ok());
    agent_->RunUntilIdle();
  }
  // Advances the clock in small steps so requeues fire, reconciling after each.
  void Tick(absl::Duration d) {
    absl::Time end = clock_.Now() + d;
    while (clock_.Now() < end) {
      clock_.Advance(std::min(absl::Milliseconds(100), end - clock_.Now()));
      agent_->RunUntilIdle();
    }
  }
  Json Create(const Json& pod) {
    auto p = client_.Create(Pods(), "default", pod);
    EXPECT_TRUE(p.ok()) << p.status();
    agent_->RunUntilIdle();
    return p.ok() ? *p : Json();
  }
  Json GetPod(const std::string& name) {
    auto p = client_.Get(Pods(), "default", name);
    return p.ok() ? *p : Json();
  }
  void SetApp(const std::string& uid, ContainerStatus c, bool finished = false) {
    PodSandboxStatus st = runtime_->Get(uid);
    st.found = true;
    st.app = {c};
    st.finished = finished;
    st.supervisor_alive = !finished;
    runtime_->SetStatus(uid, st);
  }
  const api::KindDef& Pods() { return client_.Kind("", "v1", "pods"); }

  absl::Duration first_status_delay_ = absl::ZeroDuration();
  FakeClock clock_;
  store::MemoryStore store_;
  registry::Registry reg_{store_, api::BuiltinScheme(), clock_};
  client::InProcessClient client_{reg_};
  FakeHostProbe probe_;
  testing::FakePodRuntime* runtime_ = nullptr;  // Owned by the agent.
  std::unique_ptr<NodeAgent> agent_;
};

ContainerStatus Running() {
  ContainerStatus c;
  c.name = "c";
  c.state = State::kRunning;
  c.started = c.ready = true;
  c.started_at = absl::FromUnixSeconds(1767225600);
  return c;
}
ContainerStatus Exited(int code) {
  ContainerStatus c = Running();
  c.state = State::kTerminated;
  c.ready = false;
  c.exit_code = code;
  c.reason = code ? "Error" : "Completed";
  c.finished_at = c.started_at + absl::Seconds(1);
  return c;
}

TEST_F(AgentTest, RegistersNodeAndRenewsLease) {
  StartAgent();
  auto node = client_.Get(client_.Kind("", "v1", "nodes"), "", "n1");
  ASSERT_TRUE(node.ok()) << node.status();
  const Json& labels = (*node)["metadata"]["labels"];
  EXPECT_EQ(labels["kubernetes.io/hostname"], "n1");
  EXPECT_EQ(labels["kubernetes.io/os"], "linux");
  EXPECT_EQ(labels["kubernetes.io/arch"], "amd64");
  EXPECT_EQ(labels["pool"], "a");
  EXPECT_EQ((*node)["spec"]["taints"][0]["key"], "gpu");
  const Json& st = (*node)["status"];
  EXPECT_EQ(st["capacity"]["cpu"], "4");
  EXPECT_EQ(st["capacity"]["pods"], "110");
  EXPECT_EQ(st["capacity"]["nvidia.com/gpu"], "2");
  EXPECT_EQ(st["allocatable"]["memory"], "8Gi");
  EXPECT_EQ(st["daemonEndpoints"]["kubeletEndpoint"]["Port"], 10250);
  bool ready = false;
  for (const Json& c : st["conditions"]) ready |= c["type"] == "Ready" && c["status"] == "True";
  EXPECT_TRUE(ready);

  const api::KindDef& leases = client_.Kind("coordination.k8s.io", "v1", "leases");
  auto lease = client_.Get(leases, "kube-node-lease", "n1");
  ASSERT_TRUE(lease.ok()) << lease.status();
  EXPECT_EQ((*lease)["spec"]["holderIdentity"], "n1");
  EXPECT_EQ((*lease)["spec"]["leaseDurationSeconds"], 40);
  std::string first = (*lease)["spec"]["renewTime"];
  Tick(absl::Seconds(10));
  auto renewed = client_.Get(leases, "kube-node-lease", "n1");
  ASSERT_TRUE(renewed.ok());
  EXPECT_NE((*renewed)["spec"]["renewTime"], first);
}

TEST_F(AgentTest, RunsPodAndReportsPhasesOnlyOnChange) {
  StartAgent();
  Json pod = Create(MakePod("p"));
  std::string uid = api::meta::GetUid(pod);
  ASSERT_TRUE(runtime_->Has(uid));
  PodSandboxSpec spec = runtime_->SpecOf(uid);
  EXPECT_EQ(spec.containers[0].argv, (std::vector<std::string>{"sh", "-c", "echo hi"}));
  EXPECT_EQ(spec.restart_policy, "Never");
  EXPECT_EQ(GetPod("p")["status"]["phase"], "Pending");

  SetApp(uid, Running());
  Tick(absl::Seconds(1));
  Json running = GetPod("p");
  EXPECT_EQ(running["status"]["phase"], "Running");
  EXPECT_EQ(running["status"]["podIP"], "127.0.0.1");
  int64_t writes = agent_->status_writes();
  Tick(absl::Seconds(5));
  EXPECT_EQ(agent_->status_writes(), writes);  // Nothing changed, nothing written.

  SetApp(uid, Exited(0), /*finished=*/true);
  Tick(absl::Seconds(2));
  Json done = GetPod("p");
  EXPECT_EQ(done["status"]["phase"], "Succeeded");
  EXPECT_EQ(done["status"]["containerStatuses"][0]["state"]["terminated"]["reason"], "Completed");
  EXPECT_TRUE(runtime_->Has(uid));  // Finished pods stay until deleted.
}

TEST_F(AgentTest, FirstStatusWaitsSoAShortPodIsReportedOnce) {
  struct Case {
    std::string name;
    bool exits_before_delay;
    std::string want_phase;
  };
  const std::vector<Case> cases = {{"exits-at-once", true, "Succeeded"},
                                   {"keeps-running", false, "Running"}};
  for (const Case& tc : cases) {
    SCOPED_TRACE(tc.name);
    if (agent_) {  // a fresh agent (and runtime) per case
      agent_.reset();
      runtime_ = new testing::FakePodRuntime();
    }
    first_status_delay_ = absl::Milliseconds(20);
    StartAgent();
    const std::string name = "p-" + tc.name;
    Json pod = Create(MakePod(name));
    const std::string uid = api::meta::GetUid(pod);
    ASSERT_TRUE(runtime_->Has(uid));
    SetApp(uid, Running());
    agent_->RunUntilIdle();
    EXPECT_EQ(agent_->status_writes(), 0);  // nothing reported before the delay
    if (tc.exits_before_delay) SetApp(uid, Exited(0), /*finished=*/true);
    clock_.Advance(absl::Milliseconds(20));
    agent_->RunUntilIdle();
    EXPECT_EQ(GetPod(name)["status"]["phase"], tc.want_phase);
    EXPECT_EQ(agent_->status_writes(), 1);
    if (!tc.exits_before_delay) {  // later changes are reported as before
      SetApp(uid, Exited(0), /*finished=*/true);
      Tick(absl::Seconds(2));
      EXPECT_EQ(GetPod(name)["status"]["phase"], "Succeeded");
      EXPECT_EQ(agent_->status_writes(), 2);
    }
  }
}

TEST_F(AgentTest, DeletionStopsWithGraceThenDeletesAndRemoves) {
  StartAgent();
  Json pod = Create(MakePod("p"));
  std::string uid = api::meta::GetUid(pod);
  SetApp(uid, Running());
  Tick(absl::Seconds(1));
  ASSERT_EQ(GetPod("p")["status"]["phase"], "Running");

  ASSERT_TRUE(client_.Delete(Pods(), "default", "p").ok());
  agent_->RunUntilIdle();
  ASSERT_FALSE(runtime_->stops().empty());
  EXPECT_EQ(runtime_->stops()[0].second, absl::Seconds(5));  // min(30, spec's 5).
  EXPECT_TRUE(api::meta::IsBeingDeleted(GetPod("p")));

  SetApp(uid, Exited(137), /*finished=*/true);
  Tick(absl::Seconds(2));
  auto gone = client_.Get(Pods(), "default", "p");
  EXPECT_EQ(registry::GetPayload(gone.status()).reason, "NotFound");
  EXPECT_EQ(runtime_->removed(), (std::vector<std::string>{uid}));
}

// The taint manager evicted a pod (Failed, DisruptionTarget, deleted) while
// it still runs here (this agent was cut off): the copy is killed at once,
// not after its grace period, and nothing of it is reported over the
// eviction.
TEST_F(AgentTest, EvictedPodStillRunningHereIsKilledAtOnce) {
  StartAgent();
  Json pod = Create(MakePod("p"));
  const std::string uid = api::meta::GetUid(pod);
  SetApp(uid, Running());
  Tick(absl::Seconds(1));
  Json cur = GetPod("p");
  ASSERT_EQ(cur["status"]["phase"], "Running");
  cur["status"]["phase"] = "Failed";
  cur["status"]["conditions"].push_back({{"type", "DisruptionTarget"},
                                         {"status", "True"},
                                         {"reason", "DeletionByTaintManager"},
                                         {"message", "Taint manager: deleting pod"}});
  const int64_t writes = agent_->status_writes();
  ASSERT_TRUE(client_.UpdateStatus(Pods(), cur).ok());
  ASSERT_TRUE(client_.Delete(Pods(), "default", "p").ok());
  agent_->RunUntilIdle();
  ASSERT_FALSE(runtime_->stops().empty());
  EXPECT_EQ(runtime_->stops()[0].first, uid);
  EXPECT_EQ(runtime_->stops()[0].second, absl::ZeroDuration());
  SetApp(uid, Exited(137), /*finished=*/true);
  Tick(absl::Seconds(2));
  EXPECT_EQ(registry::GetPayload(client_.Get(Pods(), "default", "p").status()).reason, "NotFound");
  // Nothing of the copy was reported over the eviction (the status written
  // while deleting is the Failed one computed over the evicted pod).
  EXPECT_LE(agent_->status_writes(), writes + 1);
}

TEST_F(AgentTest, ActiveDeadlineFailsAndStopsThePod) {
  StartAgent();
  Json p = MakePod("p");
  p["spec"]["activeDeadlineSeconds"] = 3;
  std::string uid = api::meta::GetUid(Create(p));
  SetApp(uid, Running());
  Tick(absl::Seconds(4));
  Json got = GetPod("p");
  EXPECT_EQ(got["status"]["phase"], "Failed");
  EXPECT_EQ(got["status"]["reason"], "DeadlineExceeded");
  ASSERT_FALSE(runtime_->stops().empty());
  EXPECT_EQ(runtime_->stops()[0].first, uid);
}

TEST_F(AgentTest, ReadoptsSandboxesOnStartup) {
  // Pods bound before this agent (re)started.
  auto running = client_.Create(Pods(), "default", MakePod("running"));
  auto exited = client_.Create(Pods(), "default", MakePod("exited"));
  ASSERT_TRUE(running.ok() && exited.ok());
  std::string ru = api::meta::GetUid(*running), eu = api::meta::GetUid(*exited);
  PodSandboxStatus alive;
  alive.found = alive.supervisor_alive = true;
  alive.app = {Running()};
  runtime_->AddExisting(ru, alive);
  PodSandboxStatus ended;
  ended.found = ended.finished = true;
  ended.app = {Exited(3)};
  runtime_->AddExisting(eu, ended);
  runtime_->AddExisting("orphan-uid", alive);

  StartAgent();
  EXPECT_EQ(GetPod("running")["status"]["phase"], "Running");
  Json e = GetPod("exited");
  EXPECT_EQ(e["status"]["phase"], "Failed");
  EXPECT_EQ(e["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"], 3);
  // The orphan is stopped at once, and removed once its shim is gone.
  ASSERT_FALSE(runtime_->stops().empty());
  EXPECT_EQ(runtime_->stops()[0], std::make_pair(std::string("orphan-uid"), absl::ZeroDuration()));
  EXPECT_TRUE(runtime_->Has("orphan-uid"));
  PodSandboxStatus dead;
  dead.found = dead.finished = true;
  runtime_->SetStatus("orphan-uid", dead);
  Tick(absl::Seconds(2));
  EXPECT_FALSE(runtime_->Has("orphan-uid"));
  EXPECT_TRUE(runtime_->Has(ru));
}

TEST_F(AgentTest, ForceDeletedPodIsCleanedUp) {
  StartAgent();
  std::string uid = api::meta::GetUid(Create(MakePod("p")));
  SetApp(uid, Running());
  Tick(absl::Seconds(1));
  client::DeleteOptions force;
  force.grace_period_seconds = 0;
  ASSERT_TRUE(client_.Delete(Pods(), "default", "p", force).ok());
  agent_->RunUntilIdle();
  ASSERT_FALSE(runtime_->stops().empty());
  EXPECT_EQ(runtime_->stops().back().first, uid);
  PodSandboxStatus dead;
  dead.found = dead.finished = true;
  runtime_->SetStatus(uid, dead);
  Tick(absl::Seconds(2));
  EXPECT_FALSE(runtime_->Has(uid));
}

// The node filesystem below nodefs.available<10%: DiskPressure=True, logs of
// finished pods go first, then running pods are evicted largest-log-first
// (one per check: Failed, reason Evicted, the kubelet's message,
// DisruptionTarget), new pods are refused; the condition clears only after
// the transition period above the threshold.
TEST_F(AgentTest, DiskPressureReclaimsThenEvictsLargestLogsFirst) {
  StartAgent();
  const Json small = Create(MakePod("small"));
  const Json big = Create(MakePod("big"));
  const Json done = Create(MakePod("done"));
  const std::string small_uid = api::meta::GetUid(small), big_uid = api::meta::GetUid(big),
                    done_uid = api::meta::GetUid(done);
  SetApp(small_uid, Running());
  SetApp(big_uid, Running());
  SetApp(done_uid, Exited(0), /*finished=*/true);
  runtime_->SetLogBytes(small_uid, 10 << 20);
  runtime_->SetLogBytes(big_uid, 300 << 20);
  runtime_->SetLogBytes(done_uid, 1 << 30);
  Tick(absl::Seconds(1));
  auto disk_pressure = [&] {
    auto node = client_.Get(client_.Kind("", "v1", "nodes"), "", "n1");
    for (const Json& c : (*node)["status"]["conditions"]) {
      if (c["type"] == "DiskPressure") return c["status"].get<std::string>();
    }
    return std::string("missing");
  };
  EXPECT_EQ(disk_pressure(), "False");

  probe_.available = int64_t{5} << 30;  // 5% of 100Gi free: below 10%
  Tick(absl::Seconds(11));
  EXPECT_EQ(disk_pressure(), "True");
  // The finished pod's logs were reclaimed; the pod with the larger logs
  // is evicted, the other keeps running (one eviction per check).
  EXPECT_EQ(runtime_->logs_removed(), std::vector<std::string>{done_uid});
  Json evicted = GetPod("big");
  EXPECT_EQ(evicted["status"]["phase"], "Failed");
  EXPECT_EQ(evicted["status"]["reason"], "Evicted");
  EXPECT_TRUE(absl::StartsWith(evicted["status"]["message"].get<std::string>(),
                               "The node was low on resource: ephemeral-storage. "
                               "Threshold quantity: 10485760Ki, available: 5242880Ki. "
                               "Container c was using 307200Ki"))
      << evicted["status"]["message"];
  bool disruption = false;
  for (const Json& c : evicted["status"]["conditions"]) {
    disruption |= c["type"] == "DisruptionTarget" && c["status"] == "True" &&
                  c["reason"] == "TerminationByKubelet";
  }
  EXPECT_TRUE(disruption);
  bool stopped_now = false;
  for (const auto& [uid, grace] : runtime_->stops()) {
    stopped_now |= uid == big_uid && grace == absl::ZeroDuration();
  }
  EXPECT_TRUE(stopped_now);
  EXPECT_NE(GetPod("small")["status"]["phase"], "Failed");

  // A new pod is refused while the node has DiskPressure.
  Create(MakePod("late"));
  Tick(absl::Seconds(1));
  Json late = GetPod("late");
  EXPECT_EQ(late["status"]["phase"], "Failed");
  EXPECT_EQ(late["status"]["message"], "The node had condition: [DiskPressure]. ");
  EXPECT_FALSE(runtime_->Has(api::meta::GetUid(late)));

  // Space returns: the condition holds for the transition period, then clears.
  probe_.available = int64_t{50} << 30;
  Tick(absl::Seconds(20));
  EXPECT_EQ(disk_pressure(), "True");
  Tick(absl::Seconds(20));
  EXPECT_EQ(disk_pressure(), "False");
  EXPECT_NE(GetPod("small")["status"]["phase"], "Failed");
}

TEST(ParseOptionsTest, EvictionHardAndByteQuantities) {
  AgentOptions o;
  ASSERT_TRUE(ParseEvictionHard("nodefs.available<15%", o).ok());
  EXPECT_DOUBLE_EQ(o.eviction_nodefs_available_fraction, 0.15);
  EXPECT_EQ(o.eviction_nodefs_available_bytes, 0);
  ASSERT_TRUE(ParseEvictionHard("nodefs.available<2Gi", o).ok());
  EXPECT_EQ(o.eviction_nodefs_available_bytes, int64_t{2} << 30);
  EXPECT_EQ(o.eviction_nodefs_available_fraction, 0);
  ASSERT_TRUE(ParseEvictionHard("", o).ok());
  EXPECT_EQ(o.eviction_nodefs_available_bytes, 0);
  EXPECT_FALSE(ParseEvictionHard("memory.available<100Mi", o).ok());
  EXPECT_FALSE(ParseEvictionHard("nodefs.available<150%", o).ok());
  EXPECT_FALSE(ParseEvictionHard("nodefs.available<lots", o).ok());
  EXPECT_EQ(*ParseByteQuantity("10Mi"), 10 << 20);
  EXPECT_EQ(*ParseByteQuantity("4096"), 4096);
  EXPECT_FALSE(ParseByteQuantity("0").ok());
  EXPECT_FALSE(ParseByteQuantity("ten").ok());
}

TEST(ParseOptionsTest, LabelsAndTaints) {
  auto l = ParseLabels("a=1, b=two");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(*l, (std::map<std::string, std::string>{{"a", "1"}, {"b", "two"}}));
  EXPECT_FALSE(ParseLabels("novalue").ok());
  auto t = ParseTaints("gpu=yes:NoSchedule,spot:NoExecute");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0], Json({{"key", "gpu"}, {"value", "yes"}, {"effect", "NoSchedule"}}));
  EXPECT_EQ((*t)[1], Json({{"key", "spot"}, {"effect", "NoExecute"}}));
  EXPECT_FALSE(ParseTaints("gpu=yes:Sometimes").ok());
  EXPECT_FALSE(ParseTaints("gpu").ok());
}


// A directory the pod user cannot search (a bare chroot's "/" is 0700) is
// named with its mode; one it may search by owner, group or others passes.
TEST(CheckPathSearchableTest, JudgesEachComponentByOwnerGroupOthers) {
  char tmpl[] = "/tmp/batchd-search-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string top = tmpl;
  const std::string inner = top + "/inner";
  ASSERT_EQ(mkdir(inner.c_str(), 0700), 0);
  struct stat st;
  ASSERT_EQ(stat(top.c_str(), &st), 0);
  const int64_t owner = st.st_uid, group = st.st_gid;
  const int64_t stranger = owner + 4242, other_group = group + 4242;
  // The judgement walks every ancestor too, by the same owner, group or
  // others bits: where one of them is closed to a stranger in the group or
  // out of it (a fresh chroot's "/" is 0700, 0701 once the e2e suite opened
  // it to others), the cases below cannot be told apart.
  const std::string parent = std::filesystem::path(top).parent_path().string();
  for (int64_t g : {other_group, group}) {
    if (absl::Status up = CheckPathSearchable(parent, stranger, g); !up.ok()) {
      rmdir(inner.c_str());
      rmdir(top.c_str());
      GTEST_SKIP() << "an ancestor of " << top << " is closed to uid " << stranger << " gid "
                   << g << ": " << up;
    }
  }

  ASSERT_EQ(chmod(top.c_str(), 0700), 0);
  absl::Status denied = CheckPathSearchable(inner + "/pods", stranger, other_group);
  EXPECT_EQ(denied.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(denied.message(), "\"" + top + "\" (mode 0700")) << denied;
  EXPECT_TRUE(CheckPathSearchable(inner + "/pods", owner, other_group).ok());

  ASSERT_EQ(chmod(top.c_str(), 0710), 0);  // group may search top, nobody else inner
  EXPECT_TRUE(absl::StrContains(
      CheckPathSearchable(inner, stranger, group).message(), "\"" + inner + "\""));
  ASSERT_EQ(chmod(inner.c_str(), 0711), 0);
  EXPECT_TRUE(CheckPathSearchable(inner + "/pods/not-yet", stranger, group).ok());
  EXPECT_FALSE(CheckPathSearchable(inner, stranger, other_group).ok());  // top: 0710

  ASSERT_EQ(chmod(top.c_str(), 0701), 0);
  EXPECT_TRUE(CheckPathSearchable(inner, stranger, other_group).ok());
  rmdir(inner.c_str());
  rmdir(top.c_str());
}

}  // namespace
}  // namespace batchd::agent
