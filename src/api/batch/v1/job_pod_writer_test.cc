#include "api/batch/v1/job_pod_writer.h"

#include "api/batch/v1/batch_v1.h"
#include "api/core/v1/pod_view.h"
#include "gtest/gtest.h"

namespace batchd::api::batch_v1 {
namespace {

TEST(JobPodWriterTest, CopiesTheTemplate) {
  const Json tmpl = Json::parse(R"({
    "metadata": {"labels": {"app": "x"}, "annotations": {"a": "b"}, "finalizers": ["f"],
                 "name": "ignored"},
    "spec": {"restartPolicy": "Never", "containers": [{"name": "main"}]}})");
  const Json pod = NewPodFromTemplate(&tmpl, "ns", "job-");
  const core_v1::PodView v = core_v1::PodView::Parse(pod);
  EXPECT_EQ(pod["apiVersion"], "v1");
  EXPECT_EQ(pod["kind"], "Pod");
  EXPECT_EQ(v.meta.namespace_, "ns");
  EXPECT_EQ(v.meta.generate_name, "job-");
  EXPECT_EQ(v.meta.name, "");
  EXPECT_EQ(v.meta.Label("app"), "x");
  EXPECT_EQ(v.meta.Annotation("a"), "b");
  EXPECT_TRUE(v.meta.HasFinalizer("f"));
  EXPECT_EQ(pod["spec"], tmpl["spec"]);
}

TEST(JobPodWriterTest, AnEmptyTemplateGivesAnEmptySpec) {
  const Json pod = NewPodFromTemplate(nullptr, "ns", "j-");
  EXPECT_EQ(pod["spec"], Json::object());
  EXPECT_EQ(pod["metadata"], Json::parse(R"({"generateName": "j-", "namespace": "ns"})"));
}

TEST(JobPodWriterTest, CompletionIndexLabelsHostnameAndEnv) {
  const Json tmpl = Json::parse(R"({"spec": {
    "initContainers": [{"name": "init"}],
    "containers": [{"name": "main", "env": [{"name": "A", "value": "1"}]},
                   {"name": "side", "env": [{"name": "JOB_COMPLETION_INDEX", "value": "x"}]}]}})");
  Json pod = NewPodFromTemplate(&tmpl, "ns", "job-3-");
  SetPodCompletionIndex(pod, "job", 3);
  const core_v1::PodView v = core_v1::PodView::Parse(pod);
  EXPECT_EQ(v.meta.Label(kJobCompletionIndexAnnotation), "3");
  EXPECT_EQ(v.meta.Annotation(kJobCompletionIndexAnnotation), "3");
  EXPECT_EQ(pod["spec"]["hostname"], "job-3");
  const Json index_env = Json::parse(R"({"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef":
    {"apiVersion": "v1",
     "fieldPath": "metadata.labels['batch.kubernetes.io/job-completion-index']"}}})");
  EXPECT_EQ(pod["spec"]["initContainers"][0]["env"], Json::array({index_env}));
  EXPECT_EQ(pod["spec"]["containers"][0]["env"].size(), 2u);
  EXPECT_EQ(pod["spec"]["containers"][0]["env"][1], index_env);
  // A container that sets it keeps its own.
  EXPECT_EQ(pod["spec"]["containers"][1]["env"],
            Json::parse(R"([{"name": "JOB_COMPLETION_INDEX", "value": "x"}])"));
}

TEST(JobPodWriterTest, IndexFailureCounts) {
  Json pod = NewPodFromTemplate(nullptr, "ns", "j-0-");
  SetPodIndexFailureCounts(pod, 0, 0);
  EXPECT_EQ(pod["metadata"]["annotations"],
            Json({{kJobIndexFailureCountAnnotation, "0"}}));
  SetPodIndexFailureCounts(pod, 2, 1);
  EXPECT_EQ(pod["metadata"]["annotations"],
            Json({{kJobIndexFailureCountAnnotation, "2"},
                  {kJobIndexIgnoredFailureCountAnnotation, "1"}}));
}

}  // namespace
}  // namespace batchd::api::batch_v1
