// volumeClaimPolicies: claim volumes in the child Jobs; with retention
// Delete, the finalizer, the recorded nodes and the cleanup pods that run
// once the JobSet is deleted and its pods are gone.
#include "controllers/jobset/jobset_test_env.h"

namespace batchd::controllers::jobset::testing {
namespace {

constexpr char kFinalizer[] = "batchd.io/jobset-volume-claims";

class JobSetClaimsTest : public JobSetControllerTest {
 protected:
  // A JobSet whose workers mount the claim "ckpt" (retention `retention`).
  Json WithClaim(const std::string& retention) {
    Json js = MakeJobSet("js").ReplicatedJob("leader", 1, 1).ReplicatedJob("workers", 1, 2).Obj();
    js["spec"]["volumeClaimPolicies"] = {
        {{"templates", Json::array({{{"metadata", {{"name", "ckpt"}}}}})},
         {"retentionPolicy", {{"whenDeleted", retention}}}}};
    js["spec"]["replicatedJobs"][1]["template"]["spec"]["template"]["spec"]["containers"][0]
      ["volumeMounts"] = {{{"name", "ckpt"}, {"mountPath", "/ckpt"}}};
    return js;
  }
  void CreateNode(const std::string& name, bool simulated = false) {
    Json node = {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", name}}}};
    if (simulated) node["metadata"]["annotations"] = {{"batchd.io/simulated", "true"}};
    ASSERT_TRUE(base_.Create(nodes_, "", node).ok());
  }
  // A pod of the JobSet (as the Job controller would make it) bound to `node`.
  void CreatePod(const std::string& name, const std::string& node) {
    Json js = GetJobSet();
    Json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata",
                 {{"name", name},
                  {"labels", {{"jobset.sigs.k8s.io/jobset-name", "js"},
                              {"jobset.sigs.k8s.io/jobset-uid", js["metadata"]["uid"]}}}}},
                {"spec",
                 {{"nodeName", node},
                  {"restartPolicy", "Never"},
                  {"volumes", {{{"name", "ckpt"},
                                {"persistentVolumeClaim", {{"claimName", "ckpt-js"}}}}}},
                  {"containers", {{{"name", "c"}, {"image", "x"},
                                   {"volumeMounts", {{{"name", "ckpt"}, {"mountPath", "/ckpt"}}}}}}}}}};
    ASSERT_TRUE(base_.Create(pods_, "default", pod).ok());
    Settle();
  }
  void DeletePod(const std::string& name) {
    client::DeleteOptions opts;
    opts.grace_period_seconds = 0;
    ASSERT_TRUE(base_.Delete(pods_, "default", name, opts).ok());
    Settle();
  }
  Json GetPod(const std::string& name) {
    auto r = base_.Get(pods_, "default", name);
    return r.ok() ? *r : Json();
  }
  void Succeed(const std::string& pod) {
    ASSERT_TRUE(base_.MergePatch(pods_, "default", pod,
                                 {{"status", {{"phase", "Succeeded"}}}}, /*status=*/true)
                    .ok());
    Advance(absl::Seconds(1));
  }

  const api::KindDef& pods_ = base_.Kind("", "v1", "pods");
  const api::KindDef& nodes_ = base_.Kind("", "v1", "nodes");
};

TEST_F(JobSetClaimsTest, ClaimVolumeInTheJobsThatMountIt) {
  Create(WithClaim("Retain"));
  const Json workers = GetJob("js-workers-0");
  EXPECT_EQ(workers["spec"]["template"]["spec"]["volumes"],
            Json::parse(R"([{"name": "ckpt", "persistentVolumeClaim": {"claimName": "ckpt-js"}}])"));
  EXPECT_FALSE(GetJob("js-leader-0")["spec"]["template"]["spec"].contains("volumes"));
  // Retain: no finalizer, nothing recorded.
  EXPECT_FALSE(api::meta::HasFinalizer(GetJobSet(), kFinalizer));
}

TEST_F(JobSetClaimsTest, DeleteRetentionEmptiesTheClaimsOnTheNodesThatHadThem) {
  CreateNode("n1");
  CreateNode("n2");
  CreateNode("sim", /*simulated=*/true);
  Create(WithClaim("Delete"));
  EXPECT_TRUE(api::meta::HasFinalizer(GetJobSet(), kFinalizer));
  CreatePod("w0", "n2");
  CreatePod("w1", "sim");
  CreatePod("w2", "n2");
  EXPECT_EQ(api::meta::GetAnnotation(GetJobSet(), "batchd.io/volume-claim-nodes"), "n2,sim");

  // Deleted: held by the finalizer until its pods are gone.
  ASSERT_TRUE(base_.Delete(jobsets_, "default", "js", {}).ok());
  Advance(absl::Seconds(1));
  EXPECT_FALSE(GetJobSet().is_null());
  EXPECT_TRUE(Jobs().empty() || api::meta::IsBeingDeleted(Jobs()[0]));
  EXPECT_TRUE(GetPod("js-claims-0").is_null());  // Pods still there: no cleanup yet.
  for (const char* p : {"w0", "w1", "w2"}) DeletePod(p);
  Advance(absl::Seconds(1));

  // One cleanup pod, on n2 (recorded index 0); none on the simulated node.
  const Json cleanup = GetPod("js-claims-0");
  ASSERT_FALSE(cleanup.is_null());
  EXPECT_EQ(cleanup["spec"]["nodeName"], "n2");
  EXPECT_EQ(cleanup["metadata"]["annotations"]["batchd.io/delete-claims"], "true");
  EXPECT_EQ(cleanup["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"], "ckpt-js");
  EXPECT_TRUE(GetPod("js-claims-1").is_null());
  EXPECT_FALSE(GetJobSet().is_null());

  // Its success lets the JobSet go, and the cleanup pod with it.
  Succeed("js-claims-0");
  Advance(absl::Seconds(1));
  EXPECT_TRUE(GetJobSet().is_null());
  const Json gone = GetPod("js-claims-0");
  EXPECT_TRUE(gone.is_null() || api::meta::IsBeingDeleted(gone)) << gone.dump();
}

}  // namespace
}  // namespace batchd::controllers::jobset::testing
