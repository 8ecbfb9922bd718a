// Unit tests without a registry: the batch/v1 Job adapter, Workload helpers
// (names, conditions, podSet equivalence, admission -> PodSetInfo) and the
// Job webhook rules.
#include "api/kueue/queue_views.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "api/testing/builders.h"
#include "controllers/workload/internal/batch_job_adapter.h"
#include "controllers/workload/internal/workload_util.h"
#include "controllers/workload/workload_controller.h"
#include "gtest/gtest.h"
#include "registry/errors.h"

namespace batchd::controllers::workload::internal {
namespace {

using api::meta::kConditionFalse;
using api::meta::kConditionTrue;
using api::meta::SetCondition;
using api::meta::ConditionShape::kMeta;
using api::testing::MakeJob;

TEST(WorkloadName, MatchesKueue) {
  struct Case {
    GroupVersionKind gvk;
    std::string name, uid, want;
  };
  // Expected hashes: sha1("<Kind>\n<group>\n<name>\n<uid>")[:5], as Kueue.
  for (const Case& c : std::vector<Case>{
           {{"batch", "v1", "Job", "jobs"},
            "sample-job",
            "3b241101-e2bb-4255-8caf-4136c566a962",
            "job-sample-job-9a3c4"},
           {{"jobset.x-k8s.io", "v1alpha2", "JobSet", "jobsets"}, "x", "uid", "jobset-x-9fee9"},
       }) {
    SCOPED_TRACE(c.want);
    EXPECT_EQ(WorkloadName(c.gvk, c.name, c.uid), c.want);
  }
  std::string long_name(300, 'a');
  std::string n = WorkloadName({"batch", "v1", "Job", "jobs"}, long_name, "u");
  EXPECT_EQ(n.size(), 253u) << "prefix cut so that the name is a valid object name";
}

TEST(BatchJobAdapter, PodSets) {
  struct Case {
    std::string name;
    Json job;
    int want_count;
    Json want_min;  // null: absent.
  };
  std::vector<Case> cases = {
      {"default parallelism", MakeJob("a").Obj(), 1, nullptr},
      {"completions cap", MakeJob("a").Parallelism(5).Completions(2).Obj(), 2, nullptr},
      {"min parallelism", MakeJob("a").Parallelism(5)
                              .Annotation(kMinParallelismAnnotation, "2").Obj(), 5, 2},
      {"bad min ignored", MakeJob("a").Parallelism(5)
                              .Annotation(kMinParallelismAnnotation, "x").Obj(), 5, nullptr},
  };
  BatchJobAdapter a;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto ps = a.PodSets(c.job);
    ASSERT_TRUE(ps.ok()) << ps.status();
    ASSERT_EQ(ps->size(), 1u);
    EXPECT_EQ((*ps)[0]["name"], "main");
    EXPECT_EQ((*ps)[0]["count"], c.want_count);
    EXPECT_EQ((*ps)[0].value("minCount", Json()), c.want_min);
  }
}

TEST(BatchJobAdapter, PodSetTemplateDropsManagedLabelsAndDefaultsRequests) {
  Json job = MakeJob("a")
                 .Set("/spec/template/metadata/labels"_json_pointer,
                      {{"batch.kubernetes.io/job-name", "a"}, {"job-name", "a"}, {"app", "x"}})
                 .Set("/spec/template/spec/containers/0/resources"_json_pointer,
                      {{"limits", {{"cpu", "1"}, {"nvidia.com/gpu", "2"}}},
                       {"requests", {{"cpu", "500m"}}}})
                 .Obj();
  auto ps = BatchJobAdapter().PodSets(job);
  ASSERT_TRUE(ps.ok());
  const Json& tmpl = (*ps)[0]["template"];
  EXPECT_EQ(tmpl["metadata"]["labels"], Json({{"app", "x"}}));
  EXPECT_EQ(tmpl["spec"]["containers"][0]["resources"]["requests"],
            Json({{"cpu", "500m"}, {"nvidia.com/gpu", "2"}}));
}

TEST(BatchJobAdapter, RunThenRestoreRoundTrips) {
  Json job = MakeJob("a").Parallelism(4).Suspend(true)
                 .Annotation(kMinParallelismAnnotation, "1")
                 .Set("/spec/template/spec/nodeSelector"_json_pointer, {{"zone", "a"}})
                 .Obj();
  const Json original = job;
  BatchJobAdapter a;
  PodSetInfo run{"main", 2, {{"instance-type", "spot"}},
                 Json::array({{{"key", "spot"}, {"operator", "Exists"}}})};
  ASSERT_TRUE(a.RunWithPodSetsInfo(job, {run}).ok());
  EXPECT_FALSE(a.IsSuspended(job));
  EXPECT_EQ(job["spec"]["parallelism"], 2);
  EXPECT_EQ(job["spec"]["template"]["spec"]["nodeSelector"],
            Json({{"zone", "a"}, {"instance-type", "spot"}}));
  EXPECT_EQ(job["spec"]["template"]["spec"]["tolerations"].size(), 1u);
  EXPECT_FALSE(a.RunWithPodSetsInfo(job, {run, run}).ok()) << "one podSet only";

  a.Suspend(job);
  PodSetInfo orig{"main", 4, {{"zone", "a"}}, Json::array()};
  EXPECT_TRUE(a.RestorePodSetsInfo(job, {orig}));
  EXPECT_EQ(job, original);
  EXPECT_FALSE(a.RestorePodSetsInfo(job, {orig})) << "nothing left to change";
}

TEST(BatchJobAdapter, StateReads) {
  BatchJobAdapter a;
  Json job = MakeJob("a").Parallelism(3).Obj();
  job["status"] = {{"active", 0}, {"ready", 2}, {"succeeded", 0}};
  EXPECT_FALSE(a.IsActive(job));
  EXPECT_FALSE(a.PodsReady(job));
  job["status"]["terminating"] = 1;
  EXPECT_TRUE(a.IsActive(job)) << "terminating pods still run";
  job["status"]["succeeded"] = 1;
  EXPECT_TRUE(a.PodsReady(job));
  EXPECT_FALSE(a.Finished(job).has_value());
  job["status"]["conditions"] = Json::array(
      {{{"type", "Failed"}, {"status", "True"}, {"message", "backoff"}}});
  auto fin = a.Finished(job);
  ASSERT_TRUE(fin.has_value());
  EXPECT_FALSE(fin->success);
  EXPECT_EQ(fin->message, "backoff");
  Json child = MakeJob("c").Obj();
  api::meta::SetOwnerReference(child, {"jobset.x-k8s.io/v1alpha2", "JobSet", "js", "u", true});
  EXPECT_TRUE(a.Skip(child));
  EXPECT_FALSE(a.Skip(job));
}

TEST(WorkloadUtil, SetConditionKeepsTransitionTimeUnlessStatusChanges) {
  Json wl = {{"metadata", {{"generation", 2}}}};
  absl::Time t0 = absl::FromUnixSeconds(1000);
  EXPECT_TRUE(SetCondition(wl, kMeta, {"PodsReady", kConditionFalse, "WaitForStart", "m"}, t0));
  EXPECT_FALSE(SetCondition(wl, kMeta, {"PodsReady", kConditionFalse, "WaitForStart", "m"},
                            t0 + absl::Seconds(5)));
  EXPECT_TRUE(SetCondition(wl, kMeta, {"PodsReady", kConditionFalse, "WaitForStart", "m2"},
                           t0 + absl::Seconds(5)));
  EXPECT_EQ(wl["status"]["conditions"][0]["lastTransitionTime"], "1970-01-01T00:16:40Z");
  EXPECT_TRUE(SetCondition(wl, kMeta, {"PodsReady", kConditionTrue, "PodsReady", "m"},
                           t0 + absl::Seconds(9)));
  EXPECT_EQ(wl["status"]["conditions"][0]["lastTransitionTime"], "1970-01-01T00:16:49Z");
  EXPECT_EQ(wl["status"]["conditions"][0]["observedGeneration"], 2);
  EXPECT_EQ(wl["status"]["conditions"].size(), 1u);
}

TEST(WorkloadUtil, EquivalentPodSets) {
  auto ps = [](int count, Json node_selector) {
    Json p = {{"name", "main"},
              {"count", count},
              {"template",
               {{"spec",
                 {{"containers",
                   Json::array({{{"name", "c"}, {"image", "i"},
                                 {"resources", {{"limits", {{"cpu", "1"}}}}}}})}}}}}};
    if (!node_selector.is_null()) p["template"]["spec"]["nodeSelector"] = node_selector;
    return p;
  };
  Json stored = Json::array({ps(2, nullptr)});
  // The stored copy went through defaulting: requests filled, extra fields.
  stored[0]["template"]["spec"]["containers"][0]["resources"]["requests"] = {{"cpu", "1"}};
  stored[0]["template"]["spec"]["restartPolicy"] = "Never";
  stored[0]["template"]["spec"]["nodeSelector"] = Json::object();
  EXPECT_TRUE(EquivalentPodSets({ps(2, nullptr)}, stored));
  EXPECT_FALSE(EquivalentPodSets({ps(3, nullptr)}, stored)) << "count";
  EXPECT_FALSE(EquivalentPodSets({ps(2, {{"a", "b"}})}, stored)) << "node selector";
  EXPECT_FALSE(EquivalentPodSets({ps(2, nullptr), ps(2, nullptr)}, stored)) << "podSet number";
}

TEST(WorkloadUtil, EquivalentPodSetsComparesEachTemplateDirective) {
  const Json base = Json::parse(R"({"name": "main", "count": 2, "minCount": 1, "template": {
      "metadata": {"labels": {"app": "x"}},
      "spec": {"priorityClassName": "high",
               "initContainers": [{"name": "init", "image": "i0"}],
               "containers": [{"name": "c", "image": "i",
                               "resources": {"requests": {"cpu": "1"}}}],
               "nodeSelector": {"zone": "a"},
               "tolerations": [{"key": "spot", "operator": "Exists"}],
               "affinity": {"nodeAffinity":
                              {"preferredDuringSchedulingIgnoredDuringExecution": []}}}}})");
  EXPECT_TRUE(EquivalentPodSets({base}, Json::array({base})));
  const Json wl = {{"spec", {{"podSets", Json::array({base})}}}};
  const api::kueue::WorkloadPodSetsView stored = api::kueue::WorkloadPodSetsView::Parse(wl);
  EXPECT_TRUE(EquivalentPodSets({base}, stored.pod_sets)) << "the view form";
  Json relabeled = base;
  relabeled["template"]["metadata"]["labels"]["app"] = "y";
  relabeled["template"]["spec"]["restartPolicy"] = "Never";
  EXPECT_TRUE(EquivalentPodSets({relabeled}, Json::array({base}))) << "labels are not compared";

  for (const std::string ptr : {"/name", "/minCount", "/template/spec/priorityClassName",
                                "/template/spec/initContainers/0/image",
                                "/template/spec/containers/0/name",
                                "/template/spec/containers/0/resources/requests/cpu",
                                "/template/spec/nodeSelector/zone",
                                "/template/spec/tolerations/0/key"}) {
    SCOPED_TRACE(ptr);
    Json changed = base;
    const Json::json_pointer p(ptr);
    changed[p] = changed[p].is_number() ? Json(7) : Json("other");
    EXPECT_FALSE(EquivalentPodSets({changed}, Json::array({base})));
  }
  Json no_affinity = base;
  no_affinity["template"]["spec"].erase("affinity");
  EXPECT_FALSE(EquivalentPodSets({no_affinity}, Json::array({base}))) << "node affinity";
  Json empty_affinity = no_affinity;
  empty_affinity["template"]["spec"]["affinity"] = {{"nodeAffinity", Json::object()}};
  EXPECT_TRUE(EquivalentPodSets({no_affinity}, Json::array({empty_affinity})))
      << "empty and absent are the same";
  EXPECT_FALSE(EquivalentPodSets({base}, Json::object())) << "not a list";
}

TEST(WorkloadUtil, PodSetsInfoFromSpec) {
  const Json ps = Json::parse(R"({"name": "main", "count": 3, "template": {"spec": {
      "nodeSelector": {"zone": "a"}, "tolerations": [{"key": "t", "operator": "Exists"}]}}})");
  const Json bare = Json::parse(R"({"name": "w"})");
  const std::vector<PodSetInfo> want = {
      {"main", 3, {{"zone", "a"}}, Json::array({{{"key", "t"}, {"operator", "Exists"}}})},
      {"w", 1, Json::object(), Json::array()}};
  EXPECT_EQ(PodSetsInfoFromPodSets({ps, bare}), want);
  EXPECT_EQ(PodSetsInfoFromSpec(Json{{"spec", {{"podSets", Json::array({ps, bare})}}}}), want);

  const Json encoded = PodSetsInfoToJson(want);
  EXPECT_EQ(PodSetsInfoFromJson(encoded), want) << "the annotation round-trips";
  EXPECT_FALSE(PodSetsInfoFromJson(Json::array({{{"count", 1}}})).has_value()) << "no name";
}

TEST(WorkloadUtil, PodSetsInfoFromAdmission) {
  Json wl = {{"spec", {{"podSets", Json::array({{{"name", "main"}, {"count", 4}}})}}},
             {"status",
              {{"admission",
                {{"clusterQueue", "cq"},
                 {"podSetAssignments",
                  Json::array({{{"name", "main"},
                                {"flavors", {{"cpu", "a"}, {"memory", "a"}, {"gpu", "b"}}}}})}}}}}};
  auto a = std::make_shared<const Json>(Json{
      {"spec", {{"nodeLabels", {{"x", "1"}}},
                {"tolerations", Json::array({{{"key", "t"}, {"operator", "Exists"}}})}}}});
  auto b = std::make_shared<const Json>(Json{{"spec", {{"nodeLabels", {{"y", "2"}}}}}});
  FlavorLookup lookup = [&](const std::string& n) -> std::shared_ptr<const Json> {
    return n == "a" ? a : n == "b" ? b : nullptr;
  };
  auto infos = PodSetsInfoFromAdmission(wl, lookup);
  ASSERT_TRUE(infos.ok()) << infos.status();
  ASSERT_EQ(infos->size(), 1u);
  EXPECT_EQ((*infos)[0].count, 4) << "no count in the assignment: the spec's";
  EXPECT_EQ((*infos)[0].node_selector, Json({{"x", "1"}, {"y", "2"}}));
  EXPECT_EQ((*infos)[0].tolerations.size(), 1u);
  wl["status"]["admission"]["podSetAssignments"][0]["flavors"]["cpu"] = "missing";
  EXPECT_TRUE(absl::IsNotFound(PodSetsInfoFromAdmission(wl, lookup).status()));
}

// --- The Job webhook ---------------------------------------------------------

const api::KindDef& JobsKind() {
  static const api::KindDef k = [] {
    api::KindDef d;
    d.group = "batch";
    d.version = "v1";
    d.kind = "Job";
    d.plural = "jobs";
    return d;
  }();
  return k;
}

// "field: reason" of each cause, or "" when the hook accepted.
std::vector<std::string> Causes(const absl::Status& s) {
  std::vector<std::string> out;
  if (s.ok()) return out;
  for (const Json& c : registry::GetPayload(s).details.value("causes", Json::array())) {
    out.push_back(c.value("field", "") + ": " + c.value("reason", ""));
  }
  if (out.empty()) out.push_back(std::string(s.message()));
  return out;
}

TEST(JobWebhook, Create) {
  struct Case {
    std::string name;
    Json job;
    bool manage_all;
    bool want_suspend;
    std::vector<std::string> want_causes;
  };
  const std::string kMin = "metadata.annotations[kueue.x-k8s.io/job-min-parallelism]";
  const std::string kSync =
      "metadata.annotations[kueue.x-k8s.io/job-completions-equal-parallelism]";
  std::vector<Case> cases = {
      {"queued job suspended", MakeJob("a").Label("kueue.x-k8s.io/queue-name", "lq").Obj(), false,
       true, {}},
      {"annotation form", MakeJob("a").Annotation("kueue.x-k8s.io/queue-name", "lq").Obj(), false,
       true, {}},
      {"unqueued untouched", MakeJob("a").Obj(), false, false, {}},
      {"manage all", MakeJob("a").Obj(), true, true, {}},
      {"bad queue name", MakeJob("a").Label("kueue.x-k8s.io/queue-name", "Bad_Q").Obj(), false,
       true, {"metadata.labels[kueue.x-k8s.io/queue-name]: FieldValueInvalid"}},
      {"min parallelism ok", MakeJob("a").Parallelism(3)
                                 .Annotation(kMinParallelismAnnotation, "2").Obj(), false, false,
       {}},
      {"min parallelism not below count", MakeJob("a").Parallelism(3)
                                              .Annotation(kMinParallelismAnnotation, "3").Obj(),
       false, false, {kMin + ": FieldValueInvalid"}},
      {"min parallelism zero", MakeJob("a").Parallelism(3)
                                   .Annotation(kMinParallelismAnnotation, "0").Obj(), false,
       false, {kMin + ": FieldValueInvalid"}},
      {"min parallelism not a number", MakeJob("a").Parallelism(3)
                                           .Annotation(kMinParallelismAnnotation, "two").Obj(),
       false, false, {kMin + ": FieldValueInvalid"}},
      {"sync completions needs Indexed", MakeJob("a").Parallelism(2).Completions(2)
                                             .Annotation(kCompletionsEqualParallelismAnnotation,
                                                         "true").Obj(),
       false, false, {kSync + ": FieldValueInvalid"}},
      {"sync completions needs equal counts",
       MakeJob("a").Parallelism(2).Completions(3)
           .Set("/spec/completionMode"_json_pointer, "Indexed")
           .Annotation(kCompletionsEqualParallelismAnnotation, "true").Obj(),
       false, false, {"spec.completions: FieldValueInvalid"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    JobIntegrationOptions opts;
    opts.manage_jobs_without_queue_name = c.manage_all;
    Json job = c.job;
    absl::Status s = MakeJobWebhook(JobsKind(), opts)(job, nullptr);
    EXPECT_EQ(Causes(s), c.want_causes);
    EXPECT_EQ(job["spec"].value("suspend", false), c.want_suspend);
  }
}

TEST(JobWebhook, Update) {
  struct Case {
    std::string name;
    Json old_job, new_job;
    std::vector<std::string> want_causes;
  };
  auto queued = [](const std::string& q, bool suspend) {
    return MakeJob("a").Label("kueue.x-k8s.io/queue-name", q).Suspend(suspend);
  };
  std::vector<Case> cases = {
      {"queue change while suspended", queued("a", true).Obj(), queued("b", true).Obj(), {}},
      {"queue change while running", queued("a", false).Obj(), queued("b", false).Obj(),
       {"metadata.labels[kueue.x-k8s.io/queue-name]: FieldValueInvalid"}},
      {"queue change while stopping", queued("a", false).Obj(),
       queued("b", true).Annotation(kStoppingAnnotation, "true").Obj(),
       {"metadata.labels[kueue.x-k8s.io/queue-name]: FieldValueInvalid"}},
      {"priority class immutable", queued("a", true).Obj(),
       queued("a", true).Label(kPriorityClassLabel, "high").Obj(),
       {"metadata.labels[kueue.x-k8s.io/priority-class]: FieldValueInvalid"}},
      {"parallelism pinned while running with min parallelism",
       queued("a", false).Parallelism(4).Annotation(kMinParallelismAnnotation, "2").Obj(),
       queued("a", false).Parallelism(3).Annotation(kMinParallelismAnnotation, "2").Obj(),
       {"spec.parallelism: FieldValueForbidden"}},
      {"parallelism free while suspended",
       queued("a", true).Parallelism(4).Annotation(kMinParallelismAnnotation, "2").Obj(),
       queued("a", false).Parallelism(3).Annotation(kMinParallelismAnnotation, "2").Obj(), {}},
      {"suspend not forced on update", queued("a", false).Obj(), queued("a", false).Obj(), {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Json job = c.new_job;
    absl::Status s = MakeJobWebhook(JobsKind(), {})(job, &c.old_job);
    EXPECT_EQ(Causes(s), c.want_causes);
    EXPECT_EQ(job["spec"].value("suspend", false), c.new_job["spec"].value("suspend", false));
  }
}

}  // namespace
}  // namespace batchd::controllers::workload::internal
