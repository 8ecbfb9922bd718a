#include "cli/queue_commands.h"

#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
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
using ::testing::Not;

TEST(ParseFlavorQuantities, Cases) {
  struct Case {
    std::string name, in;
    bool ok;
    std::string want;  // "flavor:res=q;...|..." rendering, or an error substring.
  };
  const Case cases[] = {
      {"empty", "", true, ""},
      {"one flavor", "default:cpu=9;memory=36Gi", true, "default:cpu=9;memory=36Gi"},
      {"two flavors", "spot:cpu=1,on-demand:cpu=500m", true, "spot:cpu=1|on-demand:cpu=500m"},
      {"canonicalised", "a:cpu=1000m", true, "a:cpu=1"},
      {"missing colon", "cpu=1", false, "is not flavor:resource=quantity"},
      {"bad quantity", "a:cpu=lots", false, "cpu"},
      {"duplicate flavor", "a:cpu=1,a:cpu=2", false, "given twice"},
      {"no equals", "a:cpu", false, "is not resource=quantity"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = ParseFlavorQuantities(c.in, "nominal-quota");
    ASSERT_EQ(got.ok(), c.ok) << got.status();
    if (!c.ok) {
      EXPECT_THAT(std::string(got.status().message()), HasSubstr(c.want));
      EXPECT_THAT(std::string(got.status().message()), HasSubstr("--nominal-quota"));
      continue;
    }
    std::vector<std::string> parts;
    for (const auto& f : got->order) {
      std::vector<std::string> rs;
      for (const auto& [r, q] : got->resources[f]) rs.push_back(r + "=" + q);
      parts.push_back(f + ":" + absl::StrJoin(rs, ";"));
    }
    EXPECT_EQ(absl::StrJoin(parts, "|"), c.want);
  }
}

TEST(BuildClusterQueue, GroupsFlavorsWithTheSameResources) {
  ClusterQueueFlags f;
  f.name = "cq";
  f.cohort = "pool";
  f.nominal_quota = "spot:cpu=10;memory=20Gi,on-demand:cpu=5;memory=10Gi,gpu-a:nvidia.com/gpu=4";
  f.borrowing_limit = "spot:cpu=2";
  f.lending_limit = "on-demand:memory=1Gi";
  f.reclaim_within_cohort = "Any";
  auto cq = BuildClusterQueue(f);
  ASSERT_TRUE(cq.ok()) << cq.status();
  const Json& spec = (*cq)["spec"];
  EXPECT_EQ(spec["cohortName"], "pool");
  EXPECT_EQ(spec["namespaceSelector"], Json::object());
  EXPECT_EQ(spec["preemption"]["reclaimWithinCohort"], "Any");
  ASSERT_EQ(spec["resourceGroups"].size(), 2u);
  EXPECT_EQ(spec["resourceGroups"][0]["coveredResources"], Json({"cpu", "memory"}));
  ASSERT_EQ(spec["resourceGroups"][0]["flavors"].size(), 2u);
  EXPECT_EQ(spec["resourceGroups"][0]["flavors"][1]["name"], "on-demand");
  EXPECT_EQ(spec["resourceGroups"][0]["flavors"][0]["resources"][0]["borrowingLimit"], "2");
  EXPECT_FALSE(spec["resourceGroups"][0]["flavors"][0]["resources"][1].contains("borrowingLimit"));
  EXPECT_EQ(spec["resourceGroups"][0]["flavors"][1]["resources"][1]["lendingLimit"], "1Gi");
  EXPECT_EQ(spec["resourceGroups"][1]["coveredResources"], Json({"nvidia.com/gpu"}));
}

TEST(BuildClusterQueue, Errors) {
  ClusterQueueFlags f;
  EXPECT_FALSE(BuildClusterQueue(f).ok());
  f.name = "cq";
  f.nominal_quota = "a:cpu=1";
  f.borrowing_limit = "b:cpu=1";
  auto st = BuildClusterQueue(f).status();
  EXPECT_THAT(std::string(st.message()), HasSubstr("flavor \"b\" has no --nominal-quota"));
  f.borrowing_limit = "";
  f.namespace_selector = "team";
  EXPECT_THAT(std::string(BuildClusterQueue(f).status().message()), HasSubstr("key=value"));
  f.namespace_selector = "team=a";
  auto ok = BuildClusterQueue(f);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ((*ok)["spec"]["namespaceSelector"]["matchLabels"]["team"], "a");
}

TEST(BuildResourceFlavor, LabelsTaintsTolerations) {
  ResourceFlavorFlags f;
  f.name = "spot";
  f.node_labels = "instance=spot,zone=a";
  f.node_taints = "spot=true:NoSchedule";
  f.tolerations = "spot=true:NoSchedule,gpu:NoExecute";
  auto rf = BuildResourceFlavor(f);
  ASSERT_TRUE(rf.ok()) << rf.status();
  EXPECT_EQ((*rf)["spec"]["nodeLabels"]["zone"], "a");
  EXPECT_EQ((*rf)["spec"]["nodeTaints"][0], Json({{"key", "spot"}, {"value", "true"},
                                                  {"effect", "NoSchedule"}}));
  EXPECT_EQ((*rf)["spec"]["tolerations"][1]["operator"], "Exists");
  f.node_taints = "spot=true";
  EXPECT_THAT(std::string(BuildResourceFlavor(f).status().message()), HasSubstr("needs an effect"));
  f.node_taints = "spot=true:Sometimes";
  EXPECT_THAT(std::string(BuildResourceFlavor(f).status().message()), HasSubstr("unknown effect"));
}

Json Wl(const std::string& name, std::vector<std::pair<std::string, std::string>> conds) {
  Json c = Json::array();
  for (auto& [t, s] : conds) c.push_back({{"type", t}, {"status", s}, {"message", t + " msg"}});
  return {{"metadata", {{"name", name}, {"namespace", "ns"},
                        {"creationTimestamp", "2026-01-01T00:00:00Z"}}},
          {"spec", {{"queueName", "lq"}, {"priority", 5}}},
          {"status", {{"conditions", c}}}};
}

TEST(WorkloadState, FromConditions) {
  struct Case {
    std::string name;
    std::vector<std::pair<std::string, std::string>> conds;
    std::string want;
  };
  const Case cases[] = {
      {"none", {}, "Pending"},
      {"pending", {{"QuotaReserved", "False"}}, "Pending"},
      {"reserved", {{"QuotaReserved", "True"}}, "QuotaReserved"},
      {"admitted", {{"QuotaReserved", "True"}, {"Admitted", "True"}}, "Admitted"},
      {"finished", {{"Admitted", "True"}, {"Finished", "True"}}, "Finished"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Json wl = Wl("w", c.conds);
    EXPECT_EQ(WorkloadState(wl), c.want);
    EXPECT_TRUE(*WorkloadMatches(wl, absl::AsciiStrToLower(c.want)));
    EXPECT_TRUE(*WorkloadMatches(wl, "all"));
  }
  EXPECT_FALSE(WorkloadMatches(Wl("w", {}), "running").ok());
  EXPECT_FALSE(*WorkloadMatches(Wl("w", {}), "admitted"));
}

TEST(Format, WorkloadsTable) {
  std::string out = FormatWorkloads({Wl("w1", {{"QuotaReserved", "False"}})}, true,
                                    absl::FromUnixSeconds(1767225600 + 120));
  EXPECT_THAT(out, HasSubstr("NAMESPACE"));
  EXPECT_THAT(out, HasSubstr("w1"));
  EXPECT_THAT(out, HasSubstr("Pending"));
  EXPECT_THAT(out, HasSubstr("QuotaReserved msg"));
  EXPECT_THAT(out, HasSubstr("2m"));
  EXPECT_THAT(FormatWorkloads({Wl("w1", {})}, false, absl::Now()), Not(HasSubstr("NAMESPACE")));
}

// An admitted workload placed on two hosts of rack r2.
Json TasWl() {
  Json wl = Wl("tas", {{"QuotaReserved", "True"}, {"Admitted", "True"}});
  wl["spec"]["podSets"] = {{{"name", "main"},
                            {"count", 4},
                            {"topologyRequest", {{"required", "topology.batchd.io/rack"}}}}};
  wl["status"]["admission"] = {
      {"clusterQueue", "cq"},
      {"podSetAssignments",
       {{{"name", "main"},
         {"count", 4},
         {"flavors", {{"cpu", "tas"}}},
         {"topologyAssignment",
          {{"levels", {"topology.batchd.io/rack", "kubernetes.io/hostname"}},
           {"slices",
            {{{"domainCount", 2},
              {"valuesPerLevel",
               {{{"universalValue", "r2"}}, {{"prefix", "r2-h"}, {"roots", {"1", "3"}}}}},
              {"podCounts", {3, 1}}}}}}}}}}};
  return wl;
}

TEST(Format, WorkloadsTableShowsTopologyDomains) {
  std::string out = FormatWorkloads({TasWl(), Wl("plain", {})}, false, absl::Now());
  EXPECT_THAT(out, HasSubstr("TOPOLOGY"));
  EXPECT_THAT(out, HasSubstr("rack=r2 hostname x2"));
  EXPECT_THAT(FormatWorkloads({Wl("plain", {})}, false, absl::Now()), Not(HasSubstr("TOPOLOGY")))
      << "no column without placements";
}

TEST(Format, DescribeWorkloadShowsPlacementPerDomain) {
  Json wl = TasWl();
  wl["status"]["unhealthyNodes"] = {{{"name", "r2-h9"}}};
  std::string out = DescribeWorkload(wl, absl::Now());
  EXPECT_THAT(out, HasSubstr("topology required topology.batchd.io/rack"));
  EXPECT_THAT(out, HasSubstr("Flavors:   cpu=tas"));
  EXPECT_THAT(out, HasSubstr("Placement: rack=r2 hostname x2"));
  EXPECT_THAT(out, HasSubstr("RACK"));
  EXPECT_THAT(out, HasSubstr("r2-h1"));
  EXPECT_THAT(out, HasSubstr("r2-h3"));
  EXPECT_THAT(out, HasSubstr("Unhealthy nodes: r2-h9"));
  Json pending = Wl("p", {{"QuotaReserved", "False"}});
  EXPECT_THAT(DescribeWorkload(pending, absl::Now()), HasSubstr("QuotaReserved msg"))
      << "a pending workload shows why";
}

TEST(Format, ClusterQueueUsage) {
  Json cq = {{"metadata", {{"name", "cq"}, {"creationTimestamp", "2026-01-01T00:00:00Z"}}},
             {"spec",
              {{"cohortName", "pool"},
               {"resourceGroups",
                {{{"coveredResources", {"cpu"}},
                  {"flavors", {{{"name", "default"}, {"resources", {{{"name", "cpu"}, {"nominalQuota", "10"}}}}}}}}}}}},
             {"status",
              {{"pendingWorkloads", 3},
               {"admittedWorkloads", 2},
               {"conditions", {{{"type", "Active"}, {"status", "True"}}}},
               {"flavorsReservation",
                {{{"name", "default"},
                  {"resources", {{{"name", "cpu"}, {"total", "12"}, {"borrowed", "2"}}}}}}}}}};
  std::string out = FormatClusterQueues({cq}, absl::FromUnixSeconds(1767225600 + 3600));
  EXPECT_THAT(out, HasSubstr("pool"));
  EXPECT_THAT(out, HasSubstr("default: cpu 12/10"));
  EXPECT_THAT(out, HasSubstr("default: cpu 2"));
  EXPECT_THAT(out, HasSubstr("True"));
}

// The runner against a real registry (in-process), with the Kueue kinds.
class QueueCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(reg_.Start().ok()); }
  FakeClock clock_{absl::FromUnixSeconds(1767225600)};
  store::MemoryStore store_;
  registry::Registry reg_{store_, api::BuiltinScheme(), clock_};
  client::InProcessClient client_{reg_};
  std::ostringstream out_;
  QueueCommands cmds_{client_, out_, clock_.Now()};
};

TEST_F(QueueCommandsTest, CreateListStopResume) {
  ResourceFlavorFlags rf;
  rf.name = "default";
  ASSERT_TRUE(cmds_.Create("rf", "", *BuildResourceFlavor(rf)).ok());
  ClusterQueueFlags cq;
  cq.name = "cq";
  cq.nominal_quota = "default:cpu=9;memory=36Gi";
  ASSERT_TRUE(cmds_.Create("clusterqueue", "", *BuildClusterQueue(cq)).ok());
  ASSERT_TRUE(cmds_.Create("lq", "default", *BuildLocalQueue("team-a", "default", "cq")).ok());
  EXPECT_THAT(out_.str(), HasSubstr("clusterqueue.kueue.x-k8s.io/cq created"));

  out_.str("");
  ListFlags lf;
  ASSERT_TRUE(cmds_.List("localqueues", lf).ok());
  EXPECT_THAT(out_.str(), HasSubstr("team-a"));
  out_.str("");
  lf.cluster_queue = "other";
  ASSERT_TRUE(cmds_.List("lq", lf).ok());
  EXPECT_THAT(out_.str(), HasSubstr("No resources found"));

  ASSERT_TRUE(cmds_.Stop("cq", "cq", "", /*keep_running=*/false).ok());
  auto got = client_.Get(client_.Kind(kKueueGroup, kKueueVersion, "clusterqueues"), "", "cq");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)["spec"]["stopPolicy"], "HoldAndDrain");
  ASSERT_TRUE(cmds_.Stop("lq", "team-a", "default", /*keep_running=*/true).ok());
  got = client_.Get(client_.Kind(kKueueGroup, kKueueVersion, "localqueues"), "default", "team-a");
  EXPECT_EQ((*got)["spec"]["stopPolicy"], "Hold");
  ASSERT_TRUE(cmds_.Resume("clusterqueue", "cq", "").ok());
  got = client_.Get(client_.Kind(kKueueGroup, kKueueVersion, "clusterqueues"), "", "cq");
  EXPECT_EQ((*got)["spec"]["stopPolicy"], "None");

  EXPECT_FALSE(cmds_.Stop("cq", "missing", "", false).ok());
  EXPECT_FALSE(cmds_.List("pods", lf).ok());
}

}  // namespace
}  // namespace batchd::cli
