// The Job integration's side of issue #14: podSetUpdates of admission checks
// reach the started Job's pod template, and `integrations.frameworks` decides
// whether a JobSet's child Job is its parent's or a plain queued Job.
#include "api/testing/jobset_builders.h"
#include "controllers/workload/integration_test_env.h"

namespace batchd::controllers::workload::testing {
namespace {

Json QueuedJob(const std::string& name) {
  return MakeJob(name)
      .Label(kQueue, "lq")
      .Set("/spec/template/spec/containers/0/resources"_json_pointer,
           {{"requests", {{"cpu", "1"}}}})
      .Obj();
}

void SetChecks(Json& wl, Json updates) {
  wl["status"]["admissionChecks"] = Json::array(
      {{{"name", "prov"}, {"state", "Ready"}, {"message", ""},
        {"lastTransitionTime", "2024-01-01T00:00:00Z"}, {"podSetUpdates", std::move(updates)}}});
}

TEST_F(IntegrationTest, PodSetUpdatesOfChecksReachThePodTemplate) {
  EnsureFlavor();
  Create(jobs_, QueuedJob("j"));
  Json wl = OnlyWorkload();
  SetChecks(wl, Json::array({{{"name", "main"},
                              {"labels", {{"checked", "yes"}}},
                              {"annotations", {{"a/b", "c"}}},
                              {"nodeSelector", {{"pool", "p1"}}},
                              {"tolerations", {{{"key", "pool"}, {"operator", "Exists"}}}}}}));
  ASSERT_TRUE(client_.UpdateStatus(workloads_, wl).ok());
  Admit("spot", 1);
  Json job = GetJob("j");
  EXPECT_FALSE(job["spec"].value("suspend", true));
  const Json& tmpl = job["spec"]["template"];
  EXPECT_EQ(tmpl["metadata"]["labels"]["checked"], "yes");
  EXPECT_EQ(tmpl["metadata"]["annotations"]["a/b"], "c");
  EXPECT_EQ(tmpl["spec"]["nodeSelector"]["pool"], "p1");
  EXPECT_EQ(tmpl["spec"]["nodeSelector"]["instance-type"], "spot");  // The flavor's, kept.
  bool tolerated = false;
  for (const Json& t : tmpl["spec"]["tolerations"]) tolerated |= t.value("key", "") == "pool";
  EXPECT_TRUE(tolerated);
}

TEST_F(IntegrationTest, ConflictingPodSetUpdatesKeepTheJobSuspended) {
  EnsureFlavor();
  Create(jobs_, QueuedJob("j"));
  Json wl = OnlyWorkload();
  // The flavor selects instance-type=spot; the check asks for another.
  SetChecks(wl, Json::array({{{"name", "main"}, {"nodeSelector", {{"instance-type", "ondemand"}}}}}));
  ASSERT_TRUE(client_.UpdateStatus(workloads_, wl).ok());
  Admit("spot", 1);
  EXPECT_TRUE(GetJob("j")["spec"].value("suspend", false));
}

// A Job controlled by a JobSet that exists (else the garbage collector would
// take the orphan).
Json ChildOfJobSet(IntegrationTest* t, client::Client& c, const std::string& name) {
  auto js = c.Create(c.Kind("jobset.x-k8s.io", "v1alpha2", "jobsets"), "default",
                     api::testing::MakeJobSet("js").ReplicatedJob("w", 1, 1).Obj());
  EXPECT_TRUE(js.ok()) << js.status();
  (void)t;
  Json job = QueuedJob(name);
  api::meta::SetOwnerReference(job, {"jobset.x-k8s.io/v1alpha2", "JobSet", "js",
                                     js.ok() ? api::meta::GetUid(*js) : "", true});
  return job;
}

TEST_F(IntegrationTest, AJobSetChildBelongsToItsParentWithTheJobSetFramework) {
  Json job = Create(jobs_, ChildOfJobSet(this, client_, "child"));
  EXPECT_FALSE(job["spec"].value("suspend", false));  // Not suspended by the Job webhook.
  EXPECT_FALSE(GetJob("child").is_null());
  EXPECT_TRUE(Workloads().empty());
}

class PlainFrameworksTest : public IntegrationTest {
 protected:
  PlainFrameworksTest() { options_.jobset_integrated = false; }
};

TEST_F(PlainFrameworksTest, AJobSetChildIsAPlainJobWithoutTheJobSetFramework) {
  Json job = Create(jobs_, ChildOfJobSet(this, client_, "child"));
  EXPECT_TRUE(job["spec"].value("suspend", false));  // Queued: created suspended.
  EXPECT_FALSE(GetJob("child").is_null());
  Json wl = OnlyWorkload();
  auto owner = api::meta::GetControllerRef(wl);
  ASSERT_TRUE(owner.has_value());
  EXPECT_EQ(owner->kind, "Job");
  EXPECT_EQ(owner->name, "child");
}

}  // namespace
}  // namespace batchd::controllers::workload::testing
