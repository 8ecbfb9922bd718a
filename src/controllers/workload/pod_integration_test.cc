// Kueue's plain pod integration in process: the pod webhook (defaulting and
// validation with field paths) and the controller for single pods and pod
// groups on one registry; the test writes Workload status as kctl would and
// moves pods as a node would.
#include "controllers/workload/pod_integration.h"

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "api/testing/builders.h"
#include "client/in_process_client.h"
#include "common/testing/fake_clock.h"
#include "controllers/gc/gc_controller.h"
#include "controllers/workload/internal/pod_adapter.h"
#include "controllers/workload/internal/pod_reconciler.h"
#include "controllers/workload/internal/workload_util.h"
#include "gtest/gtest.h"
#include "registry/errors.h"
#include "store/memory/memory_store.h"

namespace batchd::controllers {
namespace {

using api::Json;
using api::testing::MakePod;
namespace wi = workload::internal;

constexpr char kQueue[] = "kueue.x-k8s.io/queue-name";
constexpr char kGroup[] = "kueue.x-k8s.io/pod-group-name";
constexpr char kTotal[] = "kueue.x-k8s.io/pod-group-total-count";

Json Cond(const std::string& type, const std::string& status, const std::string& reason,
          const std::string& message = "m") {
  return {{"type", type},
          {"status", status},
          {"reason", reason},
          {"message", message},
          {"lastTransitionTime", "2026-01-01T00:00:00Z"}};
}

std::vector<std::string> Gates(const Json& pod) {
  std::vector<std::string> out;
  for (const Json& g : pod["spec"].value("schedulingGates", Json::array())) {
    out.push_back(g.value("name", ""));
  }
  return out;
}

class PodIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(reg_.Start().ok());
    ASSERT_TRUE(RegisterPodWebhooks(reg_, options_).ok());
    AddGarbageCollector(ctx_);
    AddPodIntegration(ctx_, options_);
    ASSERT_TRUE(mgr_.SyncAll().ok());
    Json rf = {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
               {"kind", "ResourceFlavor"},
               {"metadata", {{"name", "spot"}}},
               {"spec",
                {{"nodeLabels", {{"instance-type", "spot"}}},
                 {"tolerations", Json::array({{{"key", "spot"},
                                               {"operator", "Exists"},
                                               {"effect", "NoSchedule"}}})}}}};
    ASSERT_TRUE(client_.Create(flavors_, "", rf).ok());
    Settle();
  }

  void Settle() {
    int steps = mgr_.RunUntilIdle(20000);
    ASSERT_LT(steps, 20000) << "controllers did not converge";
  }

  absl::StatusOr<Json> TryCreate(Json pod, const std::string& ns = "default") {
    auto r = client_.Create(pods_, ns, std::move(pod));
    Settle();
    return r;
  }
  Json Create(Json pod, const std::string& ns = "default") {
    auto r = TryCreate(std::move(pod), ns);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : Json();
  }
  Json Pod(const std::string& name) {
    auto r = client_.Get(pods_, "default", name);
    return r.ok() ? *r : Json();
  }
  std::vector<Json> Workloads() {
    auto r = client_.List(workloads_, "default");
    return r.ok() ? r->items : std::vector<Json>{};
  }
  Json Workload(const std::string& name) {
    auto r = client_.Get(workloads_, "default", name);
    return r.ok() ? *r : Json();
  }

  // kctl: reserves quota and admits `wl` with every pod set on "spot" (and,
  // with `topology`, a topology assignment).
  void Admit(const std::string& name, bool topology = false) {
    Json wl = Workload(name);
    Json assignments = Json::array();
    for (const Json& ps : wl["spec"]["podSets"]) {
      Json a = {{"name", ps["name"]},
                {"flavors", {{"cpu", "spot"}}},
                {"resourceUsage", {{"cpu", "1"}}},
                {"count", ps.value("count", 1)}};
      if (topology) {
        a["topologyAssignment"] = {
            {"levels", Json::array({"kubernetes.io/hostname"})},
            {"slices", Json::array({{{"domainCount", 1},
                                     {"valuesPerLevel", Json::array({{{"universalValue", "n1"}}})},
                                     {"podCounts", Json::array({ps.value("count", 1)})}}})}};
      }
      assignments.push_back(a);
    }
    wl["status"]["admission"] = {{"clusterQueue", "cq"}, {"podSetAssignments", assignments}};
    wl["status"]["conditions"] = Json::array({Cond("QuotaReserved", "True", "QuotaReserved"),
                                             Cond("Admitted", "True", "Admitted")});
    auto r = client_.UpdateStatus(workloads_, wl);
    ASSERT_TRUE(r.ok()) << r.status();
    Settle();
  }
  void Evict(const std::string& name) {
    Json wl = Workload(name);
    wl["status"]["conditions"].push_back(Cond("Evicted", "True", "Preempted", "preempted by x"));
    auto r = client_.UpdateStatus(workloads_, wl);
    ASSERT_TRUE(r.ok()) << r.status();
    Settle();
  }
  // The node: the pod runs (Ready) or ends.
  void SetPhase(const std::string& name, const std::string& phase) {
    Json p = Pod(name);
    if (p["spec"].value("nodeName", "").empty()) {
      auto bound = reg_.Bind("default", name, {{"target", {{"name", "n1"}}}}, {});
      ASSERT_TRUE(bound.ok()) << bound.status();
      p = Pod(name);
    }
    p["status"]["phase"] = phase;
    p["status"]["conditions"] =
        Json::array({{{"type", "Ready"}, {"status", phase == "Running" ? "True" : "False"}}});
    auto r = client_.UpdateStatus(pods_, p);
    ASSERT_TRUE(r.ok()) << r.status();
    Settle();
  }
  // The kubelet confirms a deleted pod's end (grace 0).
  void ConfirmDeletion(const std::string& name) {
    client::DeleteOptions opts;
    opts.grace_period_seconds = 0;
    (void)client_.Delete(pods_, "default", name, opts);
    Settle();
  }

  Json GroupPod(const std::string& name, const std::string& group, int total,
                const std::string& cpu = "1") {
    return MakePod(name)
        .Label(kQueue, "lq")
        .Label(kGroup, group)
        .Annotation(kTotal, std::to_string(total))
        .Request("cpu", cpu)
        .Obj();
  }

  PodIntegrationOptions options_;
  FakeClock clock_;
  store::MemoryStore store_;
  registry::Registry reg_{store_, api::BuiltinScheme(), clock_};
  client::InProcessClient client_{reg_};
  reconcile::Manager mgr_{clock_};
  reconcile::InformerFactory informers_{client_, mgr_};
  reconcile::FakeEventRecorder events_;
  reconcile::ControllerContext ctx_{client_, informers_, mgr_, clock_, events_};
  const api::KindDef& pods_ = client_.Kind("", "v1", "pods");
  const api::KindDef& jobs_ = client_.Kind("batch", "v1", "jobs");
  const api::KindDef& workloads_ = client_.Kind("kueue.x-k8s.io", "v1beta2", "workloads");
  const api::KindDef& flavors_ = client_.Kind("kueue.x-k8s.io", "v1beta2", "resourceflavors");
};

// ---- The webhook ------------------------------------------------------------

TEST_F(PodIntegrationTest, AQueuedPodIsGatedLabelledAndHeldByTheFinalizer) {
  Json pod = Create(MakePod("p").Label(kQueue, "lq").Request("cpu", "1").Obj());
  EXPECT_EQ(api::meta::GetLabel(pod, "kueue.x-k8s.io/managed"), "true");
  EXPECT_TRUE(api::meta::HasFinalizer(pod, "kueue.x-k8s.io/managed"));
  EXPECT_EQ(Gates(pod), (std::vector<std::string>{"kueue.x-k8s.io/admission",
                                                  "kueue.x-k8s.io/topology"}));
  EXPECT_EQ(api::meta::GetAnnotation(pod, "kueue.x-k8s.io/role-hash")->size(), 8u);
  auto scheduled = api::meta::GetCondition(pod, "PodScheduled");
  ASSERT_TRUE(scheduled.has_value());
  EXPECT_EQ(scheduled->reason, "SchedulingGated");
}

TEST_F(PodIntegrationTest, PodsOutsideTheQueueingSystemAreLeftAlone) {
  struct Case {
    std::string name;
    Json pod;
    std::string ns;
  };
  Json queued_job = api::testing::MakeJob("j").Label(kQueue, "lq").Obj();
  auto job = client_.Create(jobs_, "default", queued_job);
  ASSERT_TRUE(job.ok()) << job.status();
  const Json owner = {{"apiVersion", "batch/v1"}, {"kind", "Job"},  {"name", "j"},
                      {"uid", (*job)["metadata"]["uid"]}, {"controller", true}};
  const std::vector<Case> cases = {
      {"no queue name", MakePod("plain").Obj(), "default"},
      {"kube-system", MakePod("system", "kube-system").Label(kQueue, "lq").Obj(), "kube-system"},
      {"owned by a queued Job", MakePod("job-pod").Label(kQueue, "lq").Owner(owner).Obj(),
       "default"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Json pod = Create(c.pod, c.ns);
    EXPECT_FALSE(api::meta::GetLabel(pod, "kueue.x-k8s.io/managed").has_value());
    EXPECT_TRUE(Gates(pod).empty());
    EXPECT_FALSE(api::meta::HasFinalizer(pod, "kueue.x-k8s.io/managed"));
  }
  EXPECT_TRUE(Workloads().empty());
}

TEST_F(PodIntegrationTest, BadGroupMetadataIsRefusedWithFieldPaths) {
  const std::string group_path = "metadata.labels[kueue.x-k8s.io/pod-group-name]";
  const std::string total_path = "metadata.annotations[kueue.x-k8s.io/pod-group-total-count]";
  const std::string both =
      "both the 'kueue.x-k8s.io/pod-group-total-count' annotation and the "
      "'kueue.x-k8s.io/pod-group-name' label should be set";
  struct Case {
    std::string name;
    Json pod;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"total count without a group", MakePod("a").Annotation(kTotal, "2").Obj(),
       group_path + ": Required value: " + both},
      {"group without a total count", MakePod("b").Label(kGroup, "g").Obj(),
       total_path + ": Required value: " + both},
      {"total count zero", MakePod("c").Label(kGroup, "g").Annotation(kTotal, "0").Obj(),
       total_path + ": Invalid value: \"0\": incorrect annotation value "
                    "'kueue.x-k8s.io/pod-group-total-count=0': group total count should be "
                    "greater than zero"},
      {"total count not a number", MakePod("d").Label(kGroup, "g").Annotation(kTotal, "two").Obj(),
       total_path + ": Invalid value: \"two\": strconv.Atoi: parsing \"two\": invalid syntax"},
      {"group name not a name",
       MakePod("e").Label(kGroup, "Bad_Name").Annotation(kTotal, "2").Obj(),
       group_path + ": Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist "
                    "of lower case alphanumeric characters, '-' or '.', and must start and end "
                    "with an alphanumeric character (e.g. 'example.com', regex used for "
                    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"},
      {"managed label not true", MakePod("f").Label("kueue.x-k8s.io/managed", "yes").Obj(),
       "metadata.labels[kueue.x-k8s.io/managed]: Forbidden: managed label value can only be "
       "'true'"},
      {"topology annotations",
       MakePod("g").Label(kQueue, "lq")
           .Annotation("kueue.x-k8s.io/podset-required-topology", "rack")
           .Annotation("kueue.x-k8s.io/podset-preferred-topology", "rack").Obj(),
       "metadata.annotations: Invalid value: null: must not contain more than one topology "
       "annotation: [kueue.x-k8s.io/podset-required-topology, "
       "kueue.x-k8s.io/podset-preferred-topology]"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto r = TryCreate(c.pod);
    ASSERT_FALSE(r.ok());
    const registry::ErrorPayload p = registry::GetPayload(r.status());
    EXPECT_EQ(p.reason, "Invalid");
    const Json& causes = p.details["causes"];
    ASSERT_EQ(causes.size(), 1u) << r.status();
    EXPECT_EQ(causes[0].value("field", "") + ": " + causes[0].value("message", ""), c.want);
  }
  EXPECT_FALSE(client_.Get(pods_, "default", "a").ok()) << "nothing was written";
}

TEST_F(PodIntegrationTest, GroupAndQueueAreImmutableOnceSet) {
  Create(GroupPod("p", "g", 2));
  Json renamed = Pod("p");
  renamed["metadata"]["labels"][kGroup] = "h";
  auto r = client_.Update(pods_, renamed);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("field is immutable"), std::string::npos);

  Json unretriable = Pod("p");
  unretriable["metadata"]["annotations"]["kueue.x-k8s.io/retriable-in-group"] = "false";
  ASSERT_TRUE(client_.Update(pods_, unretriable).ok());
  Json retriable = Pod("p");
  retriable["metadata"]["annotations"].erase("kueue.x-k8s.io/retriable-in-group");
  r = client_.Update(pods_, retriable);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("can't be converted to retriable"),
            std::string::npos);

  // The queue may change while the pod waits behind the gate.
  Json moved = Pod("p");
  moved["metadata"]["labels"][kQueue] = "other";
  EXPECT_TRUE(client_.Update(pods_, moved).ok());
}

// ---- A single pod ------------------------------------------------------------

TEST_F(PodIntegrationTest, ASinglePodGetsAWorkloadRunsWhenAdmittedAndFinishes) {
  Json pod = Create(MakePod("p").Label(kQueue, "lq").Request("cpu", "1").Obj());
  ASSERT_EQ(Workloads().size(), 1u);
  Json wl = Workloads()[0];
  const std::string name = api::meta::GetName(wl);
  EXPECT_EQ(name, wi::WorkloadName({"", "v1", "Pod", "pods"}, "p", api::meta::GetUid(pod)));
  EXPECT_EQ(name.rfind("pod-p-", 0), 0u);
  EXPECT_EQ(wl["spec"]["queueName"], "lq");
  EXPECT_EQ(wl["spec"]["podSets"][0]["name"], "main");
  EXPECT_EQ(wl["spec"]["podSets"][0]["count"], 1);
  EXPECT_TRUE(api::meta::IsControlledBy(wl, api::meta::GetUid(pod)));
  EXPECT_EQ(Gates(Pod("p")).size(), 2u) << "still gated before admission";

  Admit(name);
  pod = Pod("p");
  EXPECT_TRUE(Gates(pod).empty()) << "admission and (not TAS) topology gates lifted";
  EXPECT_EQ(pod["spec"]["nodeSelector"]["instance-type"], "spot");
  EXPECT_EQ(pod["spec"]["tolerations"][0]["key"], "spot");

  SetPhase("p", "Running");
  // waitForPodsReady is off: no PodsReady condition, as in Kueue.
  EXPECT_EQ(api::meta::ConditionStatus(Workload(name), "PodsReady"), "");
  SetPhase("p", "Succeeded");
  EXPECT_TRUE(api::meta::IsConditionTrue(Workload(name), "Finished"));
  EXPECT_FALSE(api::meta::HasFinalizer(Pod("p"), "kueue.x-k8s.io/managed"));
}

// With waitForPodsReady on, the pod's Workload is PodsReady once it runs.
class PodWaitForPodsReadyTest : public PodIntegrationTest {
 protected:
  PodWaitForPodsReadyTest() { options_.wait_for_pods_ready = true; }
};

TEST_F(PodWaitForPodsReadyTest, ThePodsWorkloadIsPodsReadyOnceItRuns) {
  Create(MakePod("p").Label(kQueue, "lq").Request("cpu", "1").Obj());
  const std::string name = api::meta::GetName(Workloads()[0]);
  Admit(name);
  EXPECT_EQ(api::meta::ConditionStatus(Workload(name), "PodsReady"), "False");
  SetPhase("p", "Running");
  EXPECT_EQ(api::meta::ConditionStatus(Workload(name), "PodsReady"), "True");
}

TEST_F(PodIntegrationTest, AnEvictedPodIsStoppedAndItsWorkloadGoesWithIt) {
  Create(MakePod("p").Label(kQueue, "lq").Request("cpu", "1").Obj());
  const std::string name = api::meta::GetName(Workloads()[0]);
  Admit(name);
  SetPhase("p", "Running");
  Evict(name);
  Json pod = Pod("p");
  ASSERT_FALSE(pod.is_null());
  EXPECT_TRUE(api::meta::IsBeingDeleted(pod)) << "stopped: deleted";
  auto target = api::meta::GetCondition(pod, "TerminationTarget");
  ASSERT_TRUE(target.has_value());
  EXPECT_EQ(target->reason, "WorkloadEvictedDueToPreempted");
  EXPECT_FALSE(api::meta::HasFinalizer(pod, "kueue.x-k8s.io/managed"));
  ConfirmDeletion("p");
  EXPECT_TRUE(Pod("p").is_null());
  EXPECT_TRUE(Workloads().empty());
}

TEST_F(PodIntegrationTest, ADeletedGatedPodLosesItsFinalizerAndWorkload) {
  Create(MakePod("p").Label(kQueue, "lq").Obj());
  ASSERT_EQ(Workloads().size(), 1u);
  ASSERT_TRUE(client_.Delete(pods_, "default", "p").ok());
  Settle();
  EXPECT_TRUE(Pod("p").is_null()) << "an unbound pod goes at once once its finalizer is removed";
  EXPECT_TRUE(Workloads().empty());
}

TEST_F(PodIntegrationTest, TopologyAwareAdmissionKeepsTheTopologyGate) {
  Create(MakePod("p").Label(kQueue, "lq")
             .Annotation("kueue.x-k8s.io/podset-required-topology", "kubernetes.io/hostname")
             .Request("cpu", "1").Obj());
  Json wl = Workloads()[0];
  EXPECT_EQ(wl["spec"]["podSets"][0]["topologyRequest"]["required"], "kubernetes.io/hostname");
  EXPECT_EQ(wl["spec"]["podSets"][0]["topologyRequest"]["podIndexLabel"],
            "kueue.x-k8s.io/pod-group-pod-index");
  Admit(api::meta::GetName(wl), /*topology=*/true);
  Json pod = Pod("p");
  EXPECT_EQ(Gates(pod), std::vector<std::string>{"kueue.x-k8s.io/topology"})
      << "the topology ungater lifts the rest";
  EXPECT_EQ(api::meta::GetLabel(pod, "kueue.x-k8s.io/tas"), "true");
  EXPECT_EQ(api::meta::GetLabel(pod, "kueue.x-k8s.io/podset"), "main");
  EXPECT_EQ(api::meta::GetAnnotation(pod, "kueue.x-k8s.io/workload"), api::meta::GetName(wl));
}

// ---- Pod groups --------------------------------------------------------------

TEST_F(PodIntegrationTest, AGroupGetsOneWorkloadOnceAllItsPodsExist) {
  Create(GroupPod("a", "g", 3));
  Create(GroupPod("b", "g", 3));
  EXPECT_TRUE(Workloads().empty()) << "2 of 3 pods";
  Create(GroupPod("c", "g", 3, "2"));  // a second role
  ASSERT_EQ(Workloads().size(), 1u);
  Json wl = Workload("g");
  ASSERT_FALSE(wl.is_null());
  EXPECT_EQ(api::meta::GetAnnotation(wl, "kueue.x-k8s.io/is-group-workload"), "true");
  ASSERT_EQ(wl["spec"]["podSets"].size(), 2u);
  std::multiset<int> counts;
  for (const Json& ps : wl["spec"]["podSets"]) {
    counts.insert(ps["count"].get<int>());
    EXPECT_EQ(ps["name"].get<std::string>().size(), 8u) << "named by the role hash";
  }
  EXPECT_EQ(counts, (std::multiset<int>{1, 2}));
  EXPECT_EQ(api::meta::GetOwnerReferences(wl).size(), 3u);

  Admit("g");
  for (const char* p : {"a", "b", "c"}) {
    SCOPED_TRACE(p);
    EXPECT_TRUE(Gates(Pod(p)).empty());
    EXPECT_EQ(Pod(p)["spec"]["nodeSelector"]["instance-type"], "spot");
  }
}

TEST_F(PodIntegrationTest, ExcessPodsAreDeleted) {
  for (const char* p : {"a", "b", "c"}) Create(GroupPod(p, "g", 2));
  Json wl = Workload("g");
  ASSERT_FALSE(wl.is_null());
  EXPECT_EQ(wl["spec"]["podSets"][0]["count"], 2);
  EXPECT_TRUE(Pod("c").is_null()) << "the newest pod beyond the count is deleted";
  Create(GroupPod("d", "g", 2));
  EXPECT_TRUE(Pod("d").is_null()) << "and so is one that comes later";
  const std::vector<std::string> reasons = events_.Reasons();
  EXPECT_EQ(std::count(reasons.begin(), reasons.end(), "ExcessPodDeleted"), 2);
}

TEST_F(PodIntegrationTest, AReplacementForAFailedPodJoinsTheAdmittedGroup) {
  for (const char* p : {"a", "b"}) Create(GroupPod(p, "g", 2));
  Admit("g");
  SetPhase("a", "Running");
  SetPhase("b", "Failed");
  EXPECT_FALSE(api::meta::IsConditionTrue(Workload("g"), "Finished"));
  EXPECT_EQ(api::meta::ConditionStatus(Workload("g"), "WaitingForReplacementPods"), "True");
  Create(GroupPod("b2", "g", 2));
  EXPECT_TRUE(Gates(Pod("b2")).empty()) << "admitted with the group";
  EXPECT_FALSE(api::meta::HasFinalizer(Pod("b"), "kueue.x-k8s.io/managed"))
      << "the failed pod it replaces is let go";
  EXPECT_EQ(api::meta::ConditionStatus(Workload("g"), "WaitingForReplacementPods"), "False");
  SetPhase("a", "Succeeded");
  SetPhase("b2", "Succeeded");
  auto finished = api::meta::GetCondition(Workload("g"), "Finished");
  ASSERT_TRUE(finished.has_value());
  EXPECT_EQ(finished->reason, "Succeeded");
  EXPECT_EQ(finished->message, "Pods succeeded: 2/2.");
}

TEST_F(PodIntegrationTest, AnUnretriableGroupEndsWhenNoPodRuns) {
  for (const char* p : {"a", "b"}) {
    Json pod = GroupPod(p, "g", 2);
    pod["metadata"]["annotations"]["kueue.x-k8s.io/retriable-in-group"] = "false";
    Create(pod);
  }
  Admit("g");
  SetPhase("a", "Failed");
  EXPECT_FALSE(api::meta::IsConditionTrue(Workload("g"), "Finished")) << "b still runs";
  SetPhase("b", "Succeeded");
  auto finished = api::meta::GetCondition(Workload("g"), "Finished");
  ASSERT_TRUE(finished.has_value());
  EXPECT_EQ(finished->reason, "Failed");
  EXPECT_EQ(finished->message, "Pods succeeded: 1/2.");
  EXPECT_FALSE(api::meta::HasFinalizer(Pod("a"), "kueue.x-k8s.io/managed"));
}

TEST_F(PodIntegrationTest, AnEvictedGroupIsStopped) {
  for (const char* p : {"a", "b"}) Create(GroupPod(p, "g", 2));
  Admit("g");
  SetPhase("a", "Running");
  SetPhase("b", "Running");
  Evict("g");
  for (const char* p : {"a", "b"}) {
    SCOPED_TRACE(p);
    EXPECT_TRUE(api::meta::IsBeingDeleted(Pod(p)));
    EXPECT_TRUE(api::meta::GetCondition(Pod(p), "TerminationTarget").has_value());
  }
  for (const char* p : {"a", "b"}) {
    Json pod = Pod(p);
    pod["status"]["phase"] = "Failed";
    ASSERT_TRUE(client_.UpdateStatus(pods_, pod).ok());
    Settle();
    ConfirmDeletion(p);
  }
  EXPECT_TRUE(Pod("a").is_null());
  EXPECT_TRUE(Workload("g").is_null()) << "the group is gone, and its Workload with it";
}

// The reconciler's indexes (pods per group, Workloads per single pod) hold
// entries only while their objects exist.
TEST(PodReconcilerIndexTest, IndexesShrinkWithTheirObjects) {
  FakeClock clock;
  store::MemoryStore store;
  registry::Registry reg(store, api::BuiltinScheme(), clock);
  ASSERT_TRUE(reg.Start().ok());
  ASSERT_TRUE(RegisterPodWebhooks(reg, PodIntegrationOptions{}).ok());
  client::InProcessClient client(reg);
  reconcile::Manager mgr(clock);
  reconcile::InformerFactory informers(client, mgr);
  reconcile::FakeEventRecorder events;
  reconcile::ControllerContext ctx{client, informers, mgr, clock, events};
  const api::KindDef& pods = client.Kind("", "v1", "pods");
  auto reconciler = std::make_shared<wi::PodReconciler>(
      ctx, pods, client.Kind("kueue.x-k8s.io", "v1beta2", "workloads"),
      client.Kind("kueue.x-k8s.io", "v1beta2", "resourceflavors"),
      /*wait_for_pods_ready=*/false);
  reconcile::Controller& c = mgr.AddController(
      std::make_unique<reconcile::Controller>("pod-workload-integration", *reconciler, clock));
  reconciler->Wire(c, reconciler);
  ASSERT_TRUE(mgr.SyncAll().ok());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(client.Create(pods, "default",
                              MakePod("single-" + std::to_string(i)).Label(kQueue, "lq").Obj())
                    .ok());
    ASSERT_TRUE(client.Create(pods, "default",
                              MakePod("member-" + std::to_string(i)).Label(kQueue, "lq")
                                  .Label(kGroup, "g").Annotation(kTotal, "3").Obj())
                    .ok());
  }
  mgr.RunUntilIdle(20000);
  EXPECT_EQ(reconciler->IndexSizesForTest(), (std::pair<size_t, size_t>{1, 3}));
  for (int i = 0; i < 3; ++i) {
    for (const std::string name : {"single-", "member-"}) {
      ASSERT_TRUE(client.Delete(pods, "default", name + std::to_string(i)).ok());
    }
  }
  mgr.RunUntilIdle(20000);
  auto left = client.List(pods, "default");
  ASSERT_TRUE(left.ok());
  EXPECT_TRUE(left->items.empty()) << "finalizers released";
  EXPECT_EQ(reconciler->IndexSizesForTest(), (std::pair<size_t, size_t>{0, 0}));
}

}  // namespace
}  // namespace batchd::controllers
