// The node agent's side of pod names and volumes: hosts files rendered from
// EndpointSlices and rewritten as peers come and go, isolation, volumes,
// FailedMount, and evictions the shim reports.
#include <filesystem>

#include "agent/agent.h"
#include "agent/testing/fake_pod_runtime.h"
#include "api/discovery/v1/endpoint_slice_view.h"
#include "client/in_process_client.h"
#include "common/testing/fake_clock.h"
#include "common/testing/temp_dir.h"
#include "gtest/gtest.h"
#include "reconcile/events.h"
#include "store/memory/memory_store.h"

namespace batchd::agent {
namespace {

using api::Json;
namespace dv1 = api::discovery_v1;

class FakeHostProbe : public HostProbe {
 public:
  int CpuCount() override { return 4; }
  int64_t MemoryBytes() override { return int64_t{8} << 30; }
  int64_t DiskBytes(const std::string&) override { return int64_t{100} << 30; }
  int GpuCount() override { return 0; }
  NodeFacts Facts() override { return {"host1", "amd64", "6.1.0", "Debian", "m", "b"}; }
};

constexpr char kNodeHosts[] = "127.0.0.1\tlocalhost\n";

Json NamedPod(const std::string& name, const std::string& subdomain) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec",
           {{"nodeName", "n1"},
            {"hostname", name},
            {"subdomain", subdomain},
            {"restartPolicy", "Never"},
            {"containers", Json::array({{{"name", "c"},
                                         {"image", "x"},
                                         {"command", Json::array({"sleep", "1"})}}})}}}};
}

class AgentNetworkTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(reg_.Start().ok()); }

  void StartAgent(bool isolation) {
    AgentOptions o;
    o.node_name = "n1";
    o.host_ip = "10.0.0.5";
    o.data_dir = data_.path();
    o.pod_isolation = isolation;
    o.node_hosts = kNodeHosts;
    o.events = &events_;
    runtime_ = new testing::FakePodRuntime();
    agent_ = std::make_unique<NodeAgent>(o, client_, clock_, std::unique_ptr<PodRuntime>(runtime_),
                                         probe_);
    ASSERT_TRUE(agent_->Sync().ok());
    agent_->RunUntilIdle();
  }

  std::string Uid(const Json& pod) { return pod["metadata"]["uid"]; }
  Json Create(const Json& pod) {
    auto p = client_.Create(client_.Kind("", "v1", "pods"), "default", pod);
    EXPECT_TRUE(p.ok()) << p.status();
    agent_->RunUntilIdle();
    return p.ok() ? *p : Json();
  }
  // Writes the slice `workers-0` of Service `service` with these endpoints.
  void PutSlice(const std::string& service, std::vector<dv1::EndpointValue> eps) {
    const api::KindDef& k = client_.Kind("discovery.k8s.io", "v1", "endpointslices");
    Json slice = dv1::BuildEndpointSlice("default", service + "-0", {service, "svc-uid"}, eps, {});
    auto old = client_.Get(k, "default", service + "-0");
    if (old.ok()) {
      slice["metadata"]["resourceVersion"] = (*old)["metadata"]["resourceVersion"];
      ASSERT_TRUE(client_.Update(k, slice).ok());
    } else {
      ASSERT_TRUE(client_.Create(k, "default", slice).ok());
    }
    agent_->RunUntilIdle();
  }
  static dv1::EndpointValue Peer(const std::string& host, const std::string& ip, bool ready) {
    dv1::EndpointValue e;
    e.address = ip;
    e.hostname = host;
    e.ready = e.serving = ready;
    e.pod_namespace = "default";
    e.pod_name = host;
    return e;
  }

  FakeClock clock_;
  store::MemoryStore store_;
  registry::Registry reg_{store_, api::BuiltinScheme(), clock_};
  client::InProcessClient client_{reg_};
  FakeHostProbe probe_;
  reconcile::FakeEventRecorder events_;
  ScopedTempDir data_{"batchd-agent-network"};
  testing::FakePodRuntime* runtime_ = nullptr;  // Owned by the agent.
  std::unique_ptr<NodeAgent> agent_;
};

TEST_F(AgentNetworkTest, HostsFileFollowsTheServicesSlices) {
  StartAgent(/*isolation=*/true);
  PutSlice("workers", {Peer("leader", "10.0.0.7", true)});
  const std::string uid = Uid(Create(NamedPod("w-0", "workers")));
  const PodSandboxSpec spec = runtime_->SpecOf(uid);
  EXPECT_TRUE(spec.isolate);
  EXPECT_EQ(spec.hostname, "w-0");
  const std::string header =
      std::string(kNodeHosts) +
      "# batchd: pod default/w-0 and its peers in workers (kept current by the node agent)\n"
      "10.0.0.5\tw-0.workers.default.svc.cluster.local\tw-0.workers\tw-0\n";
  const std::string leader =
      "10.0.0.7\tleader.workers.default.svc.cluster.local\tleader.workers\tleader\n";
  EXPECT_EQ(runtime_->Hosts(uid), header + leader);

  // A peer that is not ready yet does not resolve; once ready it does, in place.
  const int writes = runtime_->hosts_writes();
  PutSlice("workers", {Peer("leader", "10.0.0.7", true), Peer("w-1", "10.0.0.8", false)});
  EXPECT_EQ(runtime_->Hosts(uid), header + leader);
  EXPECT_EQ(runtime_->hosts_writes(), writes);  // Nothing changed: no write.
  PutSlice("workers", {Peer("leader", "10.0.0.7", true), Peer("w-1", "10.0.0.8", true)});
  EXPECT_EQ(runtime_->Hosts(uid),
            header + leader +
                "10.0.0.8\tw-1.workers.default.svc.cluster.local\tw-1.workers\tw-1\n");
  // Another service's slices are not this pod's peers.
  PutSlice("others", {Peer("x", "10.0.0.9", true)});
  EXPECT_EQ(runtime_->Hosts(uid).find("\tx\n"), std::string::npos);
  EXPECT_TRUE(events_.events().empty());
}

TEST_F(AgentNetworkTest, WithoutIsolationTheHostsFileIsNamedAndWarnedAbout) {
  StartAgent(/*isolation=*/false);
  const std::string uid = Uid(Create(NamedPod("w-0", "workers")));
  const PodSandboxSpec spec = runtime_->SpecOf(uid);
  EXPECT_FALSE(spec.isolate);
  EXPECT_FALSE(spec.hosts.empty());  // Still written: $BATCHD_HOSTS_FILE names it.
  EXPECT_EQ(events_.Reasons(), std::vector<std::string>{"PeerNamesNotResolvable"});
}

TEST_F(AgentNetworkTest, PlainPodsAreNotIsolated) {
  StartAgent(/*isolation=*/true);
  Json pod = NamedPod("plain", "");
  pod["spec"].erase("hostname");
  pod["spec"].erase("subdomain");
  std::string uid = Uid(Create(pod));
  EXPECT_FALSE(runtime_->SpecOf(uid).isolate);
  EXPECT_TRUE(runtime_->SpecOf(uid).hosts.empty());
  // A host name alone (an Indexed Job's pod) is no reason either.
  pod = NamedPod("indexed-0", "");
  pod["spec"].erase("subdomain");
  uid = Uid(Create(pod));
  EXPECT_FALSE(runtime_->SpecOf(uid).isolate);
  EXPECT_TRUE(runtime_->SpecOf(uid).hosts.empty());
  // Host aliases are.
  pod = NamedPod("aliased", "");
  pod["spec"].erase("subdomain");
  pod["spec"]["hostAliases"] = Json::parse(R"([{"ip": "10.9.9.9", "hostnames": ["db"]}])");
  uid = Uid(Create(pod));
  EXPECT_TRUE(runtime_->SpecOf(uid).isolate);
  EXPECT_NE(runtime_->SpecOf(uid).hosts.find("10.9.9.9\tdb\n"), std::string::npos);
}

TEST_F(AgentNetworkTest, VolumesAndFailedMount) {
  StartAgent(/*isolation=*/true);
  Json pod = NamedPod("v", "");
  pod["spec"].erase("hostname");
  pod["spec"].erase("subdomain");
  pod["spec"]["volumes"] = Json::array(
      {{{"name", "scratch"}, {"emptyDir", Json::object()}},
       {{"name", "ckpt"}, {"persistentVolumeClaim", {{"claimName", "ckpt"}}}}});
  pod["spec"]["containers"][0]["volumeMounts"] =
      Json::array({{{"name", "scratch"}, {"mountPath", "/scratch"}},
                   {{"name", "ckpt"}, {"mountPath", "/ckpt"}, {"readOnly", true}}});
  const std::string uid = Uid(Create(pod));
  const PodSandboxSpec spec = runtime_->SpecOf(uid);
  EXPECT_TRUE(spec.isolate);
  ASSERT_EQ(spec.volumes.size(), 2u);
  EXPECT_EQ(spec.volumes[1].host_path, data_.path() + "/volumes/default/ckpt");
  EXPECT_TRUE(std::filesystem::is_directory(data_.path() + "/volumes/default/ckpt"));
  EXPECT_EQ(spec.containers[0].mounts,
            (std::vector<MountSpec>{{"scratch", "/scratch", "", false},
                                    {"ckpt", "/ckpt", "", true}}));

  // A hostPath that fails its type check: not started, FailedMount, retried.
  Json bad = NamedPod("bad", "");
  bad["spec"].erase("hostname");
  bad["spec"].erase("subdomain");
  const std::string missing = data_.path() + "/missing";
  bad["spec"]["volumes"] =
      Json::array({{{"name", "d"}, {"hostPath", {{"path", missing}, {"type", "Directory"}}}}});
  const std::string bad_uid = Uid(Create(bad));
  EXPECT_FALSE(runtime_->Has(bad_uid));
  EXPECT_EQ(events_.Reasons(), std::vector<std::string>{"FailedMount"});
  auto got = client_.Get(client_.Kind("", "v1", "pods"), "default", "bad");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)["status"]["phase"], "Pending");
  EXPECT_EQ((*got)["status"]["containerStatuses"][0]["state"]["waiting"]["reason"],
            "ContainerCreating");
  std::filesystem::create_directory(missing);
  clock_.Advance(absl::Seconds(11));
  agent_->RunUntilIdle();
  EXPECT_TRUE(runtime_->Has(bad_uid));
  EXPECT_EQ(events_.Reasons().size(), 1u);  // Reported once.
}

TEST_F(AgentNetworkTest, ShimEvictionFailsThePod) {
  StartAgent(/*isolation=*/true);
  Json pod = NamedPod("big", "");
  const std::string uid = Uid(Create(pod));
  PodSandboxStatus st = runtime_->Get(uid);
  st.finished = true;
  st.supervisor_alive = false;
  st.reason = "Evicted";
  st.message = "Usage of EmptyDir volume \"scratch\" exceeds the limit \"1Mi\". ";
  st.app[0].state = ContainerStatus::State::kTerminated;
  st.app[0].exit_code = 137;
  runtime_->SetStatus(uid, st);
  clock_.Advance(absl::Seconds(2));
  agent_->RunUntilIdle();
  auto got = client_.Get(client_.Kind("", "v1", "pods"), "default", "big");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)["status"]["phase"], "Failed");
  EXPECT_EQ((*got)["status"]["reason"], "Evicted");
  EXPECT_EQ((*got)["status"]["message"], st.message);
}

}  // namespace
}  // namespace batchd::agent
