// Tests for `batchctl create simulated-nodes`: the spec and the generated
// Nodes as pure functions, then create/update/delete against a real
// registry through the in-process client.
#include "cli/node_commands.h"

#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "api/json_access.h"
#include "api/kind.h"
#include "client/in_process_client.h"
#include "common/testing/fake_clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "registry/registry.h"
#include "store/memory/memory_store.h"

namespace batchd::cli {
namespace {

using api::Json;
using ::testing::HasSubstr;

SimulatedNodeFlags Flags(const std::string& levels) {
  SimulatedNodeFlags f;
  f.levels = levels;
  f.cpu = "96";
  f.memory = "256Gi";
  return f;
}

TEST(BuildSimulatedNodeSpec, LevelsNamesAndLabels) {
  SimulatedNodeFlags f = Flags("block=4,rack=8,hostname=20");
  f.count = "640";
  f.gpu = "8";
  auto spec = BuildSimulatedNodeSpec(f);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->count, 640);
  ASSERT_EQ(spec->levels.size(), 3u);
  EXPECT_EQ(spec->levels[0].key, "topology.batchd.io/block");
  EXPECT_EQ(spec->levels[1].key, "topology.batchd.io/rack");
  EXPECT_EQ(spec->levels[2].key, "kubernetes.io/hostname");

  EXPECT_EQ(SimulatedNodeName(*spec, 0), "sim-b0-r0-h0");
  // 3*160 + 3*20 + 17: block 3, rack 3, host 17.
  const int64_t i = 3 * 160 + 3 * 20 + 17;
  EXPECT_EQ(SimulatedNodeName(*spec, i), "sim-b3-r3-h17");
  EXPECT_EQ(SimulatedNodeName(*spec, 639), "sim-b3-r7-h19");
  auto labels = SimulatedNodeLabels(*spec, i);
  EXPECT_EQ(labels, (std::map<std::string, std::string>{
                        {"topology.batchd.io/block", "b3"},
                        {"topology.batchd.io/rack", "b3-r3"},
                        {"kubernetes.io/hostname", "sim-b3-r3-h17"}}));

  // Every name and every rack value is unique; there are 4*8 racks.
  std::set<std::string> names, racks;
  for (int64_t n = 0; n < spec->count; ++n) {
    names.insert(SimulatedNodeName(*spec, n));
    racks.insert(SimulatedNodeLabels(*spec, n)["topology.batchd.io/rack"]);
  }
  EXPECT_EQ(names.size(), 640u);
  EXPECT_EQ(racks.size(), 32u);
}

TEST(BuildSimulatedNodeSpec, NodeShape) {
  SimulatedNodeFlags f = Flags("block=2,rack=2,hostname=2");
  f.gpu = "8";
  f.prefix = "t";
  f.labels = "pool=sim,tier=a";
  f.taints = "sim=yes:NoSchedule,gpu:NoExecute";
  f.cpu = "1500m";
  auto spec = BuildSimulatedNodeSpec(f);
  ASSERT_TRUE(spec.ok()) << spec.status();
  Json node = SimulatedNode(*spec, 5);
  EXPECT_EQ(node["metadata"]["name"], "t-b1-r0-h1");
  EXPECT_EQ(node["metadata"]["annotations"], Json({{"batchd.io/simulated", "true"}}));
  EXPECT_EQ(node["metadata"]["labels"]["pool"], "sim");
  EXPECT_EQ(node["metadata"]["labels"]["topology.batchd.io/rack"], "b1-r0");
  Json cap = {{"cpu", "1500m"}, {"memory", "256Gi"}, {"pods", "110"}, {"nvidia.com/gpu", "8"}};
  EXPECT_EQ(node["status"]["capacity"], cap);
  EXPECT_EQ(node["status"]["allocatable"], cap);
  EXPECT_EQ(node["status"]["conditions"][0]["type"], "Ready");
  EXPECT_EQ(node["status"]["conditions"][0]["status"], "True");
  EXPECT_EQ(node["spec"]["taints"],
            Json::parse(R"([{"key":"sim","value":"yes","effect":"NoSchedule"},
                            {"key":"gpu","effect":"NoExecute"}])"));

  // No GPUs: no nvidia.com/gpu at all; no taints: no spec.taints.
  f.gpu = "0";
  f.taints = "";
  spec = BuildSimulatedNodeSpec(f);
  ASSERT_TRUE(spec.ok());
  node = SimulatedNode(*spec, 0);
  EXPECT_FALSE(node["status"]["capacity"].contains("nvidia.com/gpu"));
  EXPECT_FALSE(node["spec"].contains("taints"));
}

TEST(BuildSimulatedNodeSpec, FlatCountAndVerbatimKeys) {
  SimulatedNodeFlags f = Flags("");
  f.count = "3";
  auto flat = BuildSimulatedNodeSpec(f);
  ASSERT_TRUE(flat.ok()) << flat.status();
  EXPECT_EQ(SimulatedNodeName(*flat, 2), "sim-h2");
  EXPECT_EQ(SimulatedNodeLabels(*flat, 2),
            (std::map<std::string, std::string>{{"kubernetes.io/hostname", "sim-h2"}}));
  // The same nodes as --levels hostname=3.
  auto same = BuildSimulatedNodeSpec(Flags("hostname=3"));
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(SimulatedNode(*same, 1), SimulatedNode(*flat, 1));

  // A key with '/' is used as it is; its name part gives the letter. The
  // lowest level need not be hostname.
  auto spec = BuildSimulatedNodeSpec(Flags("cloud.example.com/Zone=2,rack=3"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->count, 6);
  EXPECT_EQ(SimulatedNodeName(*spec, 4), "sim-z1-r1");
  auto labels = SimulatedNodeLabels(*spec, 4);
  EXPECT_EQ(labels["cloud.example.com/Zone"], "z1");
  EXPECT_EQ(labels["topology.batchd.io/rack"], "z1-r1");
  EXPECT_EQ(labels["kubernetes.io/hostname"], "sim-z1-r1");
}

TEST(BuildSimulatedNodeSpec, Errors) {
  struct Case {
    std::string name;
    SimulatedNodeFlags flags;
    std::string want;  // Substring of the message.
  };
  auto with = [](SimulatedNodeFlags f, auto edit) {
    edit(f);
    return f;
  };
  const SimulatedNodeFlags base = Flags("block=2,rack=2,hostname=2");
  const Case cases[] = {
      {"nothing", Flags(""), "give --levels"},
      {"no fanout", Flags("block"), "--levels: \"block\" is not name=fanout"},
      {"empty name", Flags("=4"), "is not name=fanout"},
      {"empty entry", Flags("block=2,,rack=2"), "is not name=fanout"},
      {"zero fanout", Flags("block=0"), "block=0: the fanout must be a whole number from 1"},
      {"negative fanout", Flags("block=-3"), "the fanout must be"},
      {"not a number", Flags("rack=eight"), "rack=eight: the fanout must be"},
      {"huge fanout", Flags("rack=99999999999999999999999"), "the fanout must be"},
      {"duplicate", Flags("rack=2,rack=3"), "level \"rack\" (label topology.batchd.io/rack) is given twice"},
      {"duplicate hostname", Flags("hostname=2,kubernetes.io/hostname=2"), "given twice"},
      {"bad name", Flags("ra ck=2"), "does not make a label key"},
      {"bad key", Flags("a/b/c=2"), "does not make a label key"},
      {"hostname not lowest", Flags("hostname=2,rack=2"), "can only be the lowest level"},
      {"too many", Flags("a=1000,b=1000"), "makes more than 100000 nodes"},
      {"overflow", Flags("a=100000,b=100000,c=100000,d=100000"), "makes more than 100000 nodes"},
      {"count mismatch", with(base, [](auto& f) { f.count = "10"; }),
       "--count: 10 does not match --levels block=2,rack=2,hostname=2 (8 nodes)"},
      {"count zero", with(Flags(""), [](auto& f) { f.count = "0"; }), "--count: \"0\" must be"},
      {"count too big", with(Flags(""), [](auto& f) { f.count = "100001"; }), "--count"},
      {"count text", with(Flags(""), [](auto& f) { f.count = "many"; }), "--count"},
      {"no cpu", with(base, [](auto& f) { f.cpu = ""; }), "--cpu: required"},
      {"bad cpu", with(base, [](auto& f) { f.cpu = "lots"; }), "--cpu: \"lots\""},
      {"zero memory", with(base, [](auto& f) { f.memory = "0"; }), "--memory: \"0\" must be more than 0"},
      {"negative memory", with(base, [](auto& f) { f.memory = "-1Gi"; }), "--memory"},
      {"bad gpu", with(base, [](auto& f) { f.gpu = "1.5"; }), "--gpu"},
      {"negative gpu", with(base, [](auto& f) { f.gpu = "-1"; }), "--gpu"},
      {"zero pods", with(base, [](auto& f) { f.pods = "0"; }), "--pods"},
      {"bad prefix", with(base, [](auto& f) { f.prefix = "Sim_"; }), "--prefix"},
      {"empty prefix", with(base, [](auto& f) { f.prefix = ""; }), "--prefix"},
      {"long name", with(base, [](auto& f) { f.prefix = std::string(60, 'a'); }),
       "is invalid: must be no more than 63 characters"},
      {"long values", Flags(absl::StrCat("a=1,b=1,c=1,d=1,e=1,f=1,g=1,h=1,i=1,j=1,k=1,",
                                         "l=1,m=1,n=1,o=1,p=1,q=1,r=1,s=1,t=1,u=1,v=1")),
       "is not a valid label value"},
      {"bad label", with(base, [](auto& f) { f.labels = "pool"; }), "--labels: \"pool\" is not key=value"},
      {"bad label value", with(base, [](auto& f) { f.labels = "pool=a b"; }), "--labels: value"},
      {"generated label", with(base, [](auto& f) { f.labels = "topology.batchd.io/rack=x"; }),
       "is generated"},
      {"hostname label", with(base, [](auto& f) { f.labels = "kubernetes.io/hostname=x"; }),
       "is generated"},
      {"taint without effect", with(base, [](auto& f) { f.taints = "a=b"; }), "needs an effect"},
      {"bad effect", with(base, [](auto& f) { f.taints = "a=b:Never"; }), "unknown effect"},
      {"duplicate taint", with(base, [](auto& f) { f.taints = "a=b:NoSchedule,a=c:NoSchedule"; }),
       "a:NoSchedule is given twice"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = BuildSimulatedNodeSpec(c.flags);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(got.status().message()), HasSubstr(c.want));
  }
}

TEST(FormatSimulatedNodesPlan, FirstFewAndLast) {
  SimulatedNodeFlags f = Flags("block=4,rack=8,hostname=20");
  f.gpu = "8";
  f.taints = "sim=yes:NoSchedule";
  auto spec = BuildSimulatedNodeSpec(f);
  ASSERT_TRUE(spec.ok());
  std::string out = FormatSimulatedNodesPlan(*spec, 3);
  EXPECT_THAT(out, HasSubstr("640 simulated node(s), each cpu=96, memory=256Gi, "
                             "nvidia.com/gpu=8, pods=110, tainted sim=yes:NoSchedule"));
  EXPECT_THAT(out, HasSubstr("sim-b0-r0-h2    kubernetes.io/hostname=sim-b0-r0-h2,"
                             "topology.batchd.io/block=b0,topology.batchd.io/rack=b0-r0\n"));
  EXPECT_THAT(out, HasSubstr("... (636 more)\nsim-b3-r7-h19 "));
  EXPECT_THAT(out, ::testing::Not(HasSubstr("sim-b0-r0-h3")));
}

// Create and delete against a real registry (in-process).
class SimulatedNodeCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(reg_.Start().ok()); }

  const api::KindDef& Nodes() { return client_.Kind("", "v1", "nodes"); }
  SimulatedNodeSpec Spec(const std::string& levels, const std::string& cpu = "8") {
    SimulatedNodeFlags f = Flags(levels);
    f.cpu = cpu;
    auto spec = BuildSimulatedNodeSpec(f);
    EXPECT_TRUE(spec.ok()) << spec.status();
    return *spec;
  }
  std::vector<std::string> NodeNames() {
    std::vector<std::string> out;
    auto list = client_.List(Nodes(), "");
    EXPECT_TRUE(list.ok());
    for (const Json& n : list->items) out.push_back(n["metadata"]["name"]);
    std::sort(out.begin(), out.end());
    return out;
  }
  std::string Output() {
    std::string s = out_.str();
    out_.str("");
    return s;
  }

  FakeClock clock_{absl::FromUnixSeconds(1767225600)};
  store::MemoryStore store_;
  registry::Registry reg_{store_, api::BuiltinScheme(), clock_};
  client::InProcessClient client_{reg_};
  std::ostringstream out_;
  SimulatedNodeCommands cmds_{client_, out_};
};

TEST_F(SimulatedNodeCommandsTest, CreateIsIdempotentAndDeleteRemoves) {
  SimulatedNodeSpec spec = Spec("block=2,rack=2,hostname=2");
  ASSERT_TRUE(cmds_.Create(spec).ok());
  EXPECT_EQ(Output(), "8 simulated node(s): 8 created, 0 updated, 0 unchanged\n");
  ASSERT_EQ(NodeNames().size(), 8u);
  auto node = client_.Get(Nodes(), "", "sim-b1-r0-h1");
  ASSERT_TRUE(node.ok());
  EXPECT_EQ((*node)["metadata"]["labels"]["topology.batchd.io/rack"], "b1-r0");
  EXPECT_EQ((*node)["metadata"]["annotations"]["batchd.io/simulated"], "true");
  // Status is kept on create (agents register nodes with their capacity).
  EXPECT_EQ((*node)["status"]["capacity"]["cpu"], "8");
  EXPECT_EQ((*node)["status"]["allocatable"]["memory"], "256Gi");

  ASSERT_TRUE(cmds_.Create(spec).ok());
  EXPECT_EQ(Output(), "8 simulated node(s): 0 created, 0 updated, 8 unchanged\n");

  ASSERT_TRUE(cmds_.Delete(spec).ok());
  EXPECT_EQ(Output(), "8 simulated node(s): 8 deleted, 0 not found\n");
  EXPECT_TRUE(NodeNames().empty());
  ASSERT_TRUE(cmds_.Delete(spec).ok());
  EXPECT_EQ(Output(), "8 simulated node(s): 0 deleted, 8 not found\n");
}

TEST_F(SimulatedNodeCommandsTest, CreateBringsExistingSimulatedNodesToTheSpec) {
  SimulatedNodeFlags f = Flags("rack=2,hostname=2");
  f.cpu = "8";
  f.gpu = "4";
  f.taints = "old=x:NoSchedule";
  ASSERT_TRUE(cmds_.Create(*BuildSimulatedNodeSpec(f)).ok());
  Output();
  // Somebody labels one node; that label survives a rerun.
  ASSERT_TRUE(client_.MergePatch(Nodes(), "", "sim-r0-h0",
                                 Json({{"metadata", {{"labels", {{"team", "a"}}}}}})).ok());

  // More cpu, no GPUs, no taints, an extra label: every node is updated.
  f.cpu = "16";
  f.gpu = "0";
  f.taints = "";
  f.labels = "pool=big";
  ASSERT_TRUE(cmds_.Create(*BuildSimulatedNodeSpec(f)).ok());
  EXPECT_EQ(Output(), "4 simulated node(s): 0 created, 4 updated, 0 unchanged\n");
  auto node = client_.Get(Nodes(), "", "sim-r0-h0");
  ASSERT_TRUE(node.ok());
  EXPECT_EQ((*node)["metadata"]["labels"]["team"], "a");
  EXPECT_EQ((*node)["metadata"]["labels"]["pool"], "big");
  EXPECT_EQ((*node)["status"]["capacity"],
            Json({{"cpu", "16"}, {"memory", "256Gi"}, {"pods", "110"}}));
  EXPECT_EQ((*node)["status"]["allocatable"]["cpu"], "16");
  EXPECT_FALSE(api::HasMember((*node)["spec"], "taints"));

  ASSERT_TRUE(cmds_.Create(*BuildSimulatedNodeSpec(f)).ok());
  EXPECT_EQ(Output(), "4 simulated node(s): 0 created, 0 updated, 4 unchanged\n");
}

TEST_F(SimulatedNodeCommandsTest, NeverTouchesANodeThatIsNotSimulated) {
  Json real = {{"apiVersion", "v1"},
               {"kind", "Node"},
               {"metadata", {{"name", "sim-r1-h0"}, {"labels", {{"real", "yes"}}}}},
               {"status", {{"capacity", {{"cpu", "2"}}}}}};
  ASSERT_TRUE(client_.Create(Nodes(), "", real).ok());
  SimulatedNodeSpec spec = Spec("rack=2,hostname=2");

  // Create refuses before writing anything.
  absl::Status st = cmds_.Create(spec);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(st.message()), HasSubstr("node/sim-r1-h0"));
  EXPECT_THAT(std::string(st.message()), HasSubstr("nothing was changed"));
  EXPECT_EQ(NodeNames(), std::vector<std::string>{"sim-r1-h0"});

  // Delete removes the simulated ones and reports the other.
  SimulatedNodeSpec others = Spec("rack=1,hostname=2");  // sim-r0-h0, sim-r0-h1.
  ASSERT_TRUE(cmds_.Create(others).ok());
  Output();
  st = cmds_.Delete(spec);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  std::string out = Output();
  EXPECT_THAT(out, HasSubstr("node/sim-r1-h0 is not simulated"));
  EXPECT_THAT(out, HasSubstr("4 simulated node(s): 2 deleted, 1 not found, 1 not simulated (left alone)"));
  EXPECT_EQ(NodeNames(), std::vector<std::string>{"sim-r1-h0"});
  auto kept = client_.Get(Nodes(), "", "sim-r1-h0");
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ((*kept)["metadata"]["labels"]["real"], "yes");
}

TEST_F(SimulatedNodeCommandsTest, CreatesInBatches) {
  // More than one CreateMany batch, and a rerun that finds them all.
  SimulatedNodeSpec spec = Spec("rack=3,hostname=400");
  ASSERT_TRUE(cmds_.Create(spec).ok());
  EXPECT_EQ(Output(), "1200 simulated node(s): 1200 created, 0 updated, 0 unchanged\n");
  EXPECT_EQ(NodeNames().size(), 1200u);
  ASSERT_TRUE(cmds_.Create(spec).ok());
  EXPECT_EQ(Output(), "1200 simulated node(s): 0 created, 0 updated, 1200 unchanged\n");
}

}  // namespace
}  // namespace batchd::cli
