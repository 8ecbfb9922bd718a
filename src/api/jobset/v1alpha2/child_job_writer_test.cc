#include "api/jobset/v1alpha2/child_job_writer.h"

#include "api/batch/v1/job_view.h"
#include "api/testing/jobset_builders.h"
#include "gtest/gtest.h"

namespace batchd::api::jobset_v1alpha2 {
namespace {

using api::testing::MakeJobSet;

Json Stored() {
  Json js = MakeJobSet("js")
                .ReplicatedJob("leader", 1, 1)
                .ReplicatedJob("workers", 2, 3)
                .ReplicatedJob("io", 2, 1)
                .InReplicatedJob("io", "/groupName", "data")
                .InReplicatedJob("workers", "/template/metadata/labels", {{"team", "a"}})
                .InReplicatedJob("workers", "/template/spec/template/metadata/annotations",
                                 {{"note", "x"}})
                .Coordinator("leader", 0, 0)
                .Set("/spec/network", {{"enableDNSHostnames", true}})
                .Set("/metadata/uid", "uid-1")
                .Obj();
  js["spec"]["replicatedJobs"][0]["groupName"] = "default";
  js["spec"]["replicatedJobs"][1]["groupName"] = "default";
  js["status"]["restarts"] = 2;
  return js;
}

TEST(ChildJobWriterTest, JobKeyIsSha1OfNamespacedName) {
  // python3 -c "import hashlib; print(hashlib.sha1(b'default/js-workers-1').hexdigest())"
  EXPECT_EQ(JobKeyHash("default", "js-workers-1"), "20dc345bc2e84bd8edbf2a3c1e402ea64730add9");
}

TEST(ChildJobWriterTest, LabelsAnnotationsAndSpec) {
  const Json stored = Stored();
  const JobSetView js = JobSetView::Parse(stored);
  const Json job = NewChildJob(stored, js, js.spec.replicated_jobs[1], 1);
  EXPECT_EQ(job["metadata"]["name"], "js-workers-1");
  EXPECT_EQ(job["metadata"]["namespace"], "default");
  const Json want = {{"jobset.sigs.k8s.io/jobset-name", "js"},
                     {"jobset.sigs.k8s.io/jobset-uid", "uid-1"},
                     {"jobset.sigs.k8s.io/replicatedjob-name", "workers"},
                     {"jobset.sigs.k8s.io/restart-attempt", "2"},
                     {"jobset.sigs.k8s.io/replicatedjob-replicas", "2"},
                     {"jobset.sigs.k8s.io/global-replicas", "5"},
                     {"jobset.sigs.k8s.io/job-index", "1"},
                     {"jobset.sigs.k8s.io/job-key", "20dc345bc2e84bd8edbf2a3c1e402ea64730add9"},
                     {"jobset.sigs.k8s.io/job-global-index", "2"},
                     {"jobset.sigs.k8s.io/group-name", "default"},
                     {"jobset.sigs.k8s.io/group-replicas", "3"},
                     {"jobset.sigs.k8s.io/job-group-index", "2"},
                     {"jobset.sigs.k8s.io/coordinator", "js-leader-0-0.js"}};
  Json labels = want;
  labels["team"] = "a";
  EXPECT_EQ(job["metadata"]["labels"], labels);
  EXPECT_EQ(job["metadata"]["annotations"], want);
  const Json& tmpl = job["spec"]["template"];
  EXPECT_EQ(tmpl["metadata"]["labels"], want);
  Json annotations = want;
  annotations["note"] = "x";
  EXPECT_EQ(tmpl["metadata"]["annotations"], annotations);
  EXPECT_EQ(tmpl["spec"]["subdomain"], "js");
  EXPECT_EQ(job["spec"]["completions"], 3);
  EXPECT_EQ(job["spec"]["suspend"], false);
  const Json& owner = job["metadata"]["ownerReferences"][0];
  EXPECT_EQ(owner["kind"], "JobSet");
  EXPECT_EQ(owner["apiVersion"], "jobset.x-k8s.io/v1alpha2");
  EXPECT_EQ(owner["uid"], "uid-1");
  EXPECT_EQ(owner["controller"], true);
  EXPECT_EQ(owner["blockOwnerDeletion"], true);
}

TEST(ChildJobWriterTest, GroupIndexesAndNoSubdomainWithoutDns) {
  Json stored = Stored();
  stored["spec"]["network"]["enableDNSHostnames"] = false;
  stored["spec"]["network"]["subdomain"] = "net";
  stored["spec"]["suspend"] = true;
  const JobSetView js = JobSetView::Parse(stored);
  const Json job = NewChildJob(stored, js, js.spec.replicated_jobs[2], 1);
  const Json& labels = job["metadata"]["labels"];
  EXPECT_EQ(labels["jobset.sigs.k8s.io/job-global-index"], "4");
  EXPECT_EQ(labels["jobset.sigs.k8s.io/group-name"], "data");
  EXPECT_EQ(labels["jobset.sigs.k8s.io/group-replicas"], "2");
  EXPECT_EQ(labels["jobset.sigs.k8s.io/job-group-index"], "1");
  EXPECT_EQ(labels["jobset.sigs.k8s.io/coordinator"], "js-leader-0-0.net");
  EXPECT_FALSE(job["spec"]["template"]["spec"].contains("subdomain"));
  EXPECT_EQ(job["spec"]["suspend"], true);
}

TEST(ChildJobWriterTest, ExclusivePlacementAnnotations) {
  struct Case {
    std::string name;
    Json jobset_annotations;   // On the JobSet.
    Json template_annotations; // On the workers' job template.
    std::string want_topology; // "" when none.
    bool want_node_selector_strategy;
  };
  const std::string kEx = kExclusiveKey, kNs = kNodeSelectorStrategyKey;
  const std::vector<Case> cases = {
      {"none", nullptr, nullptr, "", false},
      {"JobSet level", {{kEx, "rack"}}, nullptr, "rack", false},
      {"template level overrides", {{kEx, "rack"}}, {{kEx, "zone"}}, "zone", false},
      {"node-selector strategy at the JobSet level", {{kEx, "rack"}, {kNs, "true"}}, nullptr,
       "rack", true},
      {"node-selector strategy at the template level", nullptr, {{kEx, "rack"}, {kNs, "true"}},
       "rack", true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Json stored = Stored();
    if (!c.jobset_annotations.is_null()) stored["metadata"]["annotations"] = c.jobset_annotations;
    if (!c.template_annotations.is_null()) {
      stored["spec"]["replicatedJobs"][1]["template"]["metadata"]["annotations"] =
          c.template_annotations;
    }
    const JobSetView js = JobSetView::Parse(stored);
    const Json job = NewChildJob(stored, js, js.spec.replicated_jobs[1], 1);
    const Json& tmpl = job["spec"]["template"];
    for (const Json* obj : {&job, &tmpl}) {
      const Json& annotations = (*obj)["metadata"]["annotations"];
      EXPECT_EQ(annotations.value(kEx, ""), c.want_topology);
      EXPECT_EQ(annotations.contains(kNs), c.want_node_selector_strategy);
      EXPECT_FALSE((*obj)["metadata"]["labels"].contains(kEx));  // Annotation only.
    }
    const Json& spec = tmpl["spec"];
    if (c.want_node_selector_strategy) {
      EXPECT_EQ(spec["nodeSelector"], Json({{kNamespacedJobKey, "default_js-workers-1"}}));
      EXPECT_EQ(spec["tolerations"],
                Json::parse(R"([{"key": "alpha.jobset.sigs.k8s.io/no-schedule",
                                 "operator": "Exists", "effect": "NoSchedule"}])"));
    } else {
      EXPECT_FALSE(spec.contains("nodeSelector"));
      EXPECT_FALSE(spec.contains("tolerations"));
    }
  }
}

TEST(ChildJobWriterTest, HeadlessService) {
  Json stored = Stored();
  stored["spec"]["network"]["publishNotReadyAddresses"] = false;
  const JobSetView js = JobSetView::Parse(stored);
  const Json svc = NewHeadlessService(stored, js);
  EXPECT_EQ(svc["metadata"]["name"], "js");
  EXPECT_EQ(svc["metadata"]["namespace"], "default");
  EXPECT_EQ(svc["spec"], Json({{"clusterIP", "None"},
                               {"selector", {{"jobset.sigs.k8s.io/jobset-name", "js"}}},
                               {"publishNotReadyAddresses", false}}));
  EXPECT_EQ(svc["metadata"]["ownerReferences"][0]["uid"], "uid-1");
  stored["spec"]["network"]["subdomain"] = "net";
  EXPECT_EQ(NewHeadlessService(stored, JobSetView::Parse(stored))["metadata"]["name"], "net");
}

}  // namespace
}  // namespace batchd::api::jobset_v1alpha2
