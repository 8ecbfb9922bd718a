#include "api/batch/v1/job_writers.h"

#include "api/batch/v1/job_view.h"
#include "gtest/gtest.h"

namespace batchd::api::batch_v1 {
namespace {

Json Job() {
  return Json::parse(R"({
    "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "a", "namespace": "ns"},
    "spec": {"template": {"spec": {"restartPolicy": "Never",
                                   "nodeSelector": {"zone": "a"},
                                   "containers": [{"name": "main", "image": "busybox"}]}}}})");
}

const Json& TemplateSpec(const Json& job) { return job["spec"]["template"]["spec"]; }

TEST(JobWritersTest, SuspendAndCountsReadBackThroughTheView) {
  Json job = Job();
  SetSuspend(job, true);
  SetParallelism(job, 3);
  SetCompletions(job, 5);
  JobSpecView spec = JobSpecView::Parse(job);
  EXPECT_TRUE(spec.suspend);
  EXPECT_EQ(spec.parallelism, 3);
  EXPECT_EQ(spec.completions, 5);
  SetSuspend(job, false);
  EXPECT_FALSE(JobSpecView::Parse(job).suspend);
  EXPECT_EQ(job["spec"]["suspend"], false) << "written, not removed";

  Json bare;  // null: made an object.
  SetSuspend(bare, true);
  EXPECT_EQ(bare, Json::parse(R"({"spec": {"suspend": true}})"));
}

TEST(JobWritersTest, MergeTemplateNodeSelector) {
  Json job = Job();
  MergeTemplateNodeSelector(job, {{"zone", "b"}, {"instance-type", "spot"}});
  EXPECT_EQ(TemplateSpec(job)["nodeSelector"], Json({{"zone", "b"}, {"instance-type", "spot"}}))
      << "a key it had is replaced";

  const Json before = job;
  MergeTemplateNodeSelector(job, Json::object());
  MergeTemplateNodeSelector(job, nullptr);
  EXPECT_EQ(job, before) << "nothing to merge: unchanged";

  Json none = Job();
  none["spec"]["template"]["spec"].erase("nodeSelector");
  MergeTemplateNodeSelector(none, {{"x", "1"}});
  EXPECT_EQ(TemplateSpec(none)["nodeSelector"], Json({{"x", "1"}}));

  Json no_template = {{"spec", {{"parallelism", 1}}}};
  MergeTemplateNodeSelector(no_template, {{"x", "1"}});
  EXPECT_EQ(no_template["spec"]["template"]["spec"]["nodeSelector"], Json({{"x", "1"}}));
}

TEST(JobWritersTest, MergeTemplateTolerations) {
  Json job = Job();
  const Json spot = {{"key", "spot"}, {"operator", "Exists"}};
  const Json gpu = {{"key", "gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}};
  MergeTemplateTolerations(job, Json::array({spot}));
  MergeTemplateTolerations(job, Json::array({spot, gpu, gpu}));
  EXPECT_EQ(TemplateSpec(job)["tolerations"], Json::array({spot, gpu})) << "each once, in order";

  const Json before = job;
  MergeTemplateTolerations(job, Json::array());
  EXPECT_EQ(job, before);
}

TEST(JobWritersTest, ReplaceTemplateDirectives) {
  Json job = Job();
  const Json original = job;
  EXPECT_FALSE(ReplaceTemplateNodeSelector(job, {{"zone", "a"}})) << "already so";
  EXPECT_TRUE(ReplaceTemplateNodeSelector(job, {{"zone", "b"}}));
  EXPECT_EQ(TemplateSpec(job)["nodeSelector"], Json({{"zone", "b"}}));
  EXPECT_TRUE(ReplaceTemplateNodeSelector(job, Json::object()));
  EXPECT_FALSE(TemplateSpec(job).contains("nodeSelector")) << "empty: removed";
  EXPECT_FALSE(ReplaceTemplateNodeSelector(job, nullptr)) << "nothing to remove";

  const Json t = {{"key", "spot"}, {"operator", "Exists"}};
  EXPECT_TRUE(ReplaceTemplateTolerations(job, Json::array({t})));
  EXPECT_FALSE(ReplaceTemplateTolerations(job, Json::array({t})));
  EXPECT_TRUE(ReplaceTemplateTolerations(job, Json::array()));
  EXPECT_FALSE(TemplateSpec(job).contains("tolerations"));

  EXPECT_TRUE(ReplaceTemplateNodeSelector(job, {{"zone", "a"}}));
  EXPECT_EQ(job, original) << "back where it started";

  Json no_template = {{"spec", {{"parallelism", 1}}}};
  EXPECT_FALSE(ReplaceTemplateTolerations(no_template, Json::array()));
  EXPECT_EQ(no_template, Json({{"spec", {{"parallelism", 1}}}})) << "removing creates nothing";
}

}  // namespace
}  // namespace batchd::api::batch_v1
