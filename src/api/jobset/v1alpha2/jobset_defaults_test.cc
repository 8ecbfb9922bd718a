#include "api/jobset/v1alpha2/jobset_v1alpha2.h"
#include "api/testing/jobset_builders.h"
#include "gtest/gtest.h"

namespace batchd::api::jobset_v1alpha2 {
namespace {

using api::testing::MakeJobSet;

TEST(JobSetDefaultsTest, WebhookAndCrdDefaults) {
  Json js = MakeJobSet("js").ReplicatedJob("w", 2).Obj();
  Json& rjob = js["spec"]["replicatedJobs"][0];
  rjob.erase("replicas");
  rjob["template"]["spec"].erase("completionMode");
  rjob["template"]["spec"]["template"]["spec"].erase("restartPolicy");
  SetDefaultsJobSet(js);
  const Json& spec = js["spec"];
  EXPECT_EQ(spec["successPolicy"], Json({{"operator", "All"}}));
  EXPECT_EQ(spec["startupPolicy"], Json({{"startupPolicyOrder", "AnyOrder"}}));
  EXPECT_EQ(spec["network"],
            Json({{"enableDNSHostnames", true}, {"publishNotReadyAddresses", true}}));
  EXPECT_FALSE(spec.contains("failurePolicy"));
  EXPECT_EQ(rjob["groupName"], "default");
  EXPECT_EQ(rjob["replicas"], 1);
  EXPECT_EQ(rjob["template"]["spec"]["completionMode"], "Indexed");
  EXPECT_EQ(rjob["template"]["spec"]["template"]["spec"]["restartPolicy"], "OnFailure");
  // The rest of the template is stored as written (no Job / pod defaults).
  EXPECT_FALSE(rjob["template"]["spec"].contains("backoffLimitPerIndex"));
  EXPECT_FALSE(rjob["template"]["spec"]["template"]["spec"].contains("dnsPolicy"));
}

TEST(JobSetDefaultsTest, KeepsWhatIsSet) {
  Json js = MakeJobSet("js")
                .ReplicatedJob("w", 3)
                .SuccessPolicy("Any", {"w"})
                .InOrder()
                .Set("/spec/network", {{"enableDNSHostnames", false}, {"subdomain", "net"}})
                .InReplicatedJob("w", "/groupName", "g")
                .InReplicatedJob("w", "/template/spec/completionMode", "NonIndexed")
                .Obj();
  Json before = js;
  SetDefaultsJobSet(js);
  EXPECT_EQ(js["spec"]["successPolicy"], before["spec"]["successPolicy"]);
  EXPECT_EQ(js["spec"]["startupPolicy"]["startupPolicyOrder"], "InOrder");
  EXPECT_EQ(js["spec"]["network"]["enableDNSHostnames"], false);
  EXPECT_EQ(js["spec"]["network"]["publishNotReadyAddresses"], true);
  EXPECT_EQ(js["spec"]["replicatedJobs"][0], before["spec"]["replicatedJobs"][0]);
}

TEST(JobSetDefaultsTest, FailurePolicyRuleNamesAndRestartStrategy) {
  Json js = MakeJobSet("js")
                .ReplicatedJob("w", 1)
                .Rule("", "FailJobSet")
                .Rule("mine", "RestartJobSet")
                .Rule("", "RestartJobSet")
                .Obj();
  SetDefaultsJobSet(js);
  const Json& policy = js["spec"]["failurePolicy"];
  EXPECT_EQ(policy["restartStrategy"], "Recreate");
  EXPECT_EQ(policy["rules"][0]["name"], "failurePolicyRule0");
  EXPECT_EQ(policy["rules"][1]["name"], "mine");
  EXPECT_EQ(policy["rules"][2]["name"], "failurePolicyRule2");
}

TEST(JobSetDefaultsTest, IdempotentAndToleratesEmpty) {
  Json empty = {{"metadata", {{"name", "x"}}}};
  SetDefaultsJobSet(empty);
  EXPECT_EQ(empty["spec"]["successPolicy"]["operator"], "All");
  Json js = MakeJobSet("js").ReplicatedJob("w", 1).Rule("", "FailJobSet").Obj();
  SetDefaultsJobSet(js);
  Json again = js;
  SetDefaultsJobSet(again);
  EXPECT_EQ(again, js);
}

}  // namespace
}  // namespace batchd::api::jobset_v1alpha2
