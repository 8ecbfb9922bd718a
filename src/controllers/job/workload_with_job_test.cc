// WorkloadWithJob: the Job controller's Workload and PodGroup for Indexed
// Jobs with parallelism == completions > 1 (creation order, owner
// references, the pods' schedulingGroup), the Jobs it skips, Kueue-style
// suspension, replacement pods, the refusal of parallelism changes, and the
// gate off.
#include "controllers/job/workload_with_job.h"

#include "absl/strings/numbers.h"
#include "controllers/job/job_test_env.h"

namespace batchd::controllers::job::testing {
namespace {

using api::testing::MakeJob;

Json Indexed(const std::string& name, int completions, int parallelism) {
  return MakeJob(name)
      .Completions(completions)
      .Parallelism(parallelism)
      .Set(Json::json_pointer("/spec/completionMode"), "Indexed")
      .Obj();
}

int64_t Revision(const Json& obj) {
  int64_t rv = 0;
  EXPECT_TRUE(absl::SimpleAtoi(api::meta::GetResourceVersion(obj), &rv));
  return rv;
}

class WorkloadWithJobTest : public JobControllerTest {
 protected:
  void SetUp() override {
    options_.workload_with_job = true;
    JobControllerTest::SetUp();
    ASSERT_TRUE(AddParallelismValidation(reg_).ok());
  }
  std::vector<Json> List(const api::KindDef& kind) {
    auto r = base_.List(kind, "default", {});
    EXPECT_TRUE(r.ok());
    return r.ok() ? r->items : std::vector<Json>{};
  }
  std::vector<Json> Workloads() { return List(workloads_); }
  std::vector<Json> PodGroups() { return List(pod_groups_); }
  static std::string GroupOf(const Json& pod) {
    return pod["spec"].value("schedulingGroup", Json::object()).value("podGroupName", "");
  }
  const api::KindDef& workloads_ = base_.Kind("scheduling.k8s.io", "v1alpha2", "workloads");
  const api::KindDef& pod_groups_ = base_.Kind("scheduling.k8s.io", "v1alpha2", "podgroups");
};

TEST_F(WorkloadWithJobTest, WorkloadThenPodGroupThenPods) {
  Json job = CreateJob(Indexed("train", 4, 4));
  const std::string uid = api::meta::GetUid(job);

  std::vector<Json> wls = Workloads();
  ASSERT_EQ(wls.size(), 1u);
  const Json& wl = wls[0];
  EXPECT_EQ(api::meta::GetName(wl), WorkloadNameForJob("train", uid));
  EXPECT_EQ(wl["spec"]["controllerRef"],
            Json({{"apiGroup", "batch"}, {"kind", "Job"}, {"name", "train"}}));
  EXPECT_TRUE(api::meta::IsControlledBy(wl, uid));
  ASSERT_EQ(wl["spec"]["podGroupTemplates"].size(), 1u);
  EXPECT_EQ(wl["spec"]["podGroupTemplates"][0]["name"], "train-pgt-0");
  EXPECT_EQ(wl["spec"]["podGroupTemplates"][0]["schedulingPolicy"],
            Json({{"gang", {{"minCount", 4}}}}));

  std::vector<Json> pgs = PodGroups();
  ASSERT_EQ(pgs.size(), 1u);
  const Json& pg = pgs[0];
  const std::string pg_name = api::meta::GetName(pg);
  EXPECT_EQ(pg_name, PodGroupNameFor(api::meta::GetName(wl), "train-pgt-0"));
  EXPECT_EQ(pg["spec"]["podGroupTemplateRef"]["workload"],
            Json({{"workloadName", api::meta::GetName(wl)},
                  {"podGroupTemplateName", "train-pgt-0"}}));
  EXPECT_EQ(pg["spec"]["schedulingPolicy"], Json({{"gang", {{"minCount", 4}}}}));
  // Owned by the Job (the garbage collector deletes it with it) and by the Workload.
  EXPECT_TRUE(api::meta::IsControlledBy(pg, uid));
  std::vector<api::meta::OwnerReference> owners = api::meta::GetOwnerReferences(pg);
  ASSERT_EQ(owners.size(), 2u);
  EXPECT_EQ(owners[1].kind, "Workload");
  EXPECT_EQ(owners[1].uid, api::meta::GetUid(wl));
  EXPECT_FALSE(owners[1].controller);

  // Workload, PodGroup, then pods, each naming the PodGroup.
  std::vector<Json> pods = ActivePods("train");
  ASSERT_EQ(pods.size(), 4u);
  EXPECT_LT(Revision(wl), Revision(pg));
  for (const Json& p : pods) {
    EXPECT_EQ(GroupOf(p), pg_name);
    EXPECT_LT(Revision(pg), Revision(p));
  }
  EXPECT_EQ(CountEvents("WorkloadCreated"), 1);
}

TEST_F(WorkloadWithJobTest, JobsThatGetNoGang) {
  CreateJob(Indexed("fewer", 4, 2));                           // parallelism != completions
  CreateJob(MakeJob("plain").Completions(4).Parallelism(4).Obj());  // NonIndexed
  CreateJob(Indexed("single", 1, 1));                          // parallelism 1
  Json own = Indexed("own-group", 2, 2);
  own["spec"]["template"]["spec"]["schedulingGroup"] = {{"podGroupName", "mine"}};
  CreateJob(own);
  Json child = Indexed("child", 2, 2);
  child["metadata"]["ownerReferences"] = Json::array(
      {{{"apiVersion", "jobset.x-k8s.io/v1alpha2"}, {"kind", "JobSet"}, {"name", "js"},
        {"uid", "0f4a6a8e-1111-4222-8333-944455556666"}, {"controller", true}}});
  CreateJob(child);
  EXPECT_TRUE(Workloads().empty());
  EXPECT_TRUE(PodGroups().empty());
  for (const char* j : {"fewer", "plain", "single", "child"}) {
    for (const Json& p : ActivePods(j)) EXPECT_EQ(GroupOf(p), "") << j;
  }
  ASSERT_EQ(ActivePods("own-group").size(), 2u);
  for (const Json& p : ActivePods("own-group")) EXPECT_EQ(GroupOf(p), "mine");

  // A CronJob's Jobs are standalone: they do get one.
  Json cron_job = Indexed("nightly", 2, 2);
  cron_job["metadata"]["ownerReferences"] = Json::array(
      {{{"apiVersion", "batch/v1"}, {"kind", "CronJob"}, {"name", "cron"},
        {"uid", "0f4a6a8e-1111-4222-8333-944455557777"}, {"controller", true}}});
  CreateJob(cron_job);
  EXPECT_EQ(Workloads().size(), 1u);
  for (const Json& p : ActivePods("nightly")) EXPECT_NE(GroupOf(p), "");
}

// Kueue creates queued Jobs suspended: no pods, so no Workload yet; it comes
// with the first pods, and stays across a suspension (one PodGroup).
TEST_F(WorkloadWithJobTest, SuspendedJobGetsItsGangWhenResumed) {
  CreateJob(MakeJob("queued")
                .Completions(3)
                .Parallelism(3)
                .Set(Json::json_pointer("/spec/completionMode"), "Indexed")
                .Set(Json::json_pointer("/spec/suspend"), true)
                .Obj());
  EXPECT_TRUE(Workloads().empty());
  UpdateJobSpec("queued", {{"suspend", false}});
  ASSERT_EQ(PodGroups().size(), 1u);
  const std::string pg = api::meta::GetName(PodGroups()[0]);
  ASSERT_EQ(ActivePods("queued").size(), 3u);
  UpdateJobSpec("queued", {{"suspend", true}});
  EXPECT_TRUE(ActivePods("queued").empty());
  UpdateJobSpec("queued", {{"suspend", false}});
  std::vector<Json> pods = ActivePods("queued");
  ASSERT_EQ(pods.size(), 3u);
  for (const Json& p : pods) EXPECT_EQ(GroupOf(p), pg);
  EXPECT_EQ(Workloads().size(), 1u);
  EXPECT_EQ(PodGroups().size(), 1u);
}

TEST_F(WorkloadWithJobTest, ReplacementPodsJoinTheSameGroup) {
  CreateJob(Indexed("retry", 2, 2));
  std::vector<Json> pods = ActivePods("retry");
  ASSERT_EQ(pods.size(), 2u);
  const std::string pg = GroupOf(pods[0]);
  Finish(pods[0], 1);
  Advance(absl::Seconds(20));  // The failure backoff.
  pods = ActivePods("retry");
  ASSERT_EQ(pods.size(), 2u);
  for (const Json& p : pods) EXPECT_EQ(GroupOf(p), pg);
  EXPECT_EQ(Workloads().size(), 1u);
  EXPECT_EQ(PodGroups().size(), 1u);
}

TEST_F(WorkloadWithJobTest, ParallelismOfAGangJobCannotChange) {
  CreateJob(Indexed("gang", 4, 4));
  auto r = base_.MergePatch(jobs_, "default", "gang", {{"spec", {{"parallelism", 2}}}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(registry::GetPayload(r.status()).reason, "Invalid");
  EXPECT_NE(std::string(r.status().message())
                .find("spec.parallelism: Forbidden: cannot be changed for an Indexed Job with "
                      "parallelism equal to completions"),
            std::string::npos)
      << r.status();
  EXPECT_EQ(GetJob("gang")["spec"]["parallelism"], 4);
  // Into the shape is refused too; other Jobs scale as before.
  CreateJob(Indexed("elastic", 4, 2));
  EXPECT_FALSE(base_.MergePatch(jobs_, "default", "elastic", {{"spec", {{"parallelism", 4}}}})
                   .ok());
  EXPECT_TRUE(base_.MergePatch(jobs_, "default", "elastic", {{"spec", {{"parallelism", 3}}}})
                  .ok());
}

TEST_F(WorkloadWithJobTest, JobThatStartedWithoutAGangGetsNone) {
  // Started with the gate off (a server upgraded with pods running) ...
  options_.workload_with_job = false;
  Restart();
  CreateJob(Indexed("old", 2, 2));
  options_.workload_with_job = true;
  Restart();
  // ... its replacement pods stay pod by pod: a gang of the rest would never form.
  Finish(ActivePods("old")[0], 1);
  Advance(absl::Seconds(20));
  std::vector<Json> pods = ActivePods("old");
  ASSERT_EQ(pods.size(), 2u);
  for (const Json& p : pods) EXPECT_EQ(GroupOf(p), "");
  EXPECT_TRUE(Workloads().empty());
}

TEST(WorkloadWithJobNamesTest, NamesFitTheirLimits) {
  const std::string long_name(63, 'j');
  EXPECT_EQ(PodGroupTemplateNameForJob(long_name).size(), 63u);
  const std::string wl = WorkloadNameForJob(long_name, "uid");
  EXPECT_EQ(wl.rfind(long_name + "-", 0), 0u);
  EXPECT_EQ(wl, WorkloadNameForJob(long_name, "uid"));  // Deterministic.
  EXPECT_NE(wl, WorkloadNameForJob(long_name, "other-uid"));
  EXPECT_LE(PodGroupNameFor(std::string(250, 'w'), std::string(63, 't')).size(), 253u);
}

// The gate off (the library default, Kubernetes' default): no gang.
TEST_F(JobControllerTest, WorkloadWithJobOffCreatesNoWorkload) {
  CreateJob(Indexed("train", 4, 4));
  auto wls = base_.List(base_.Kind("scheduling.k8s.io", "v1alpha2", "workloads"), "default", {});
  ASSERT_TRUE(wls.ok());
  EXPECT_TRUE(wls->items.empty());
  for (const Json& p : ActivePods("train")) EXPECT_FALSE(p["spec"].contains("schedulingGroup"));
}

}  // namespace
}  // namespace batchd::controllers::job::testing
