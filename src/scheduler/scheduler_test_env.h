// Test support shared by scheduler_test, gang_scheduler_test and
// preemption_scheduler_test: node and pod builders and a fixture that runs
// the whole scheduler (registry on the in-memory store, informers, the
// injected FakeClock, a FakeEventRecorder) with readers for what the tests
// assert on. Test-only; included by the scheduler's test targets alone.
#pragma once

#include <optional>
#include <string>

#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "client/in_process_client.h"
#include "common/testing/fake_clock.h"
#include "gtest/gtest.h"
#include "scheduler/scheduler.h"
#include "store/memory/memory_store.h"

namespace batchd::scheduler::testing {

using api::Json;

// A Ready node with `cpu` cores, 16Gi and 110 pod slots.
inline Json MakeNode(const std::string& name, const std::string& cpu) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}}},
          {"status",
           {{"allocatable", {{"cpu", cpu}, {"memory", "16Gi"}, {"pods", "110"}}},
            {"capacity", {{"cpu", cpu}, {"memory", "16Gi"}, {"pods", "110"}}},
            {"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
}

// A pod in "default" requesting `cpu`, with `spec.priority` when given.
inline Json MakePod(const std::string& name, const std::string& cpu = "1",
                    std::optional<int32_t> priority = std::nullopt) {
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"namespace", "default"}}},
              {"spec",
               {{"restartPolicy", "Never"},
                {"containers", Json::array({{{"name", "c"},
                                             {"image", "busybox"},
                                             {"resources", {{"requests", {{"cpu", cpu}}}}}}})}}}};
  if (priority.has_value()) pod["spec"]["priority"] = *priority;
  return pod;
}

// A member of PodGroup `group`.
inline Json GangPod(const std::string& name, const std::string& group,
                    const std::string& cpu = "1",
                    std::optional<int32_t> priority = std::nullopt) {
  Json p = MakePod(name, cpu, priority);
  p["spec"]["schedulingGroup"] = {{"podGroupName", group}};
  return p;
}

// {gang: {minCount}} for min_count > 0, else {basic: {}}.
inline Json Policy(int min_count) {
  return min_count > 0 ? Json{{"gang", {{"minCount", min_count}}}}
                       : Json{{"basic", Json::object()}};
}

class SchedulerTestEnv : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(reg_.Start().ok());
    SchedulerOptions opts;
    opts.binder = std::make_shared<RegistryBinder>(reg_);
    AddScheduler(ctx_, opts);
    ASSERT_TRUE(mgr_.SyncAll().ok());
  }

  void CreateNode(const std::string& name, const std::string& cpu) {
    CreateNodeObj(MakeNode(name, cpu));
  }
  // Node status is written separately: the registry resets status on create.
  void CreateNodeObj(const Json& node) {
    ASSERT_TRUE(c_.Create(nodes_, "", node).ok());
    ASSERT_TRUE(c_.MergePatch(nodes_, "", node["metadata"]["name"], {{"status", node["status"]}},
                              /*status=*/true)
                    .ok());
  }
  void CreatePod(Json pod) { ASSERT_TRUE(c_.Create(pods_, "default", std::move(pod)).ok()); }
  // A PodGroup with Policy(min_count) and, when set, `disruptionMode`.
  void CreatePodGroup(const std::string& name, int min_count,
                      const std::string& disruption_mode = "") {
    Json pg = {{"apiVersion", "scheduling.k8s.io/v1alpha2"},
               {"kind", "PodGroup"},
               {"metadata", {{"name", name}, {"namespace", "default"}}},
               {"spec", {{"schedulingPolicy", Policy(min_count)}}}};
    if (!disruption_mode.empty()) pg["spec"]["disruptionMode"] = disruption_mode;
    ASSERT_TRUE(c_.Create(pod_groups_, "default", pg).ok());
  }
  // Pods prefix0..prefix{size-1} of PodGroup `group`.
  void CreateGang(const std::string& group, int size, const std::string& prefix = "g",
                  const std::string& cpu = "1", std::optional<int32_t> priority = std::nullopt) {
    for (int i = 0; i < size; ++i) {
      CreatePod(GangPod(prefix + std::to_string(i), group, cpu, priority));
    }
  }
  void Finish(const std::string& pod) {
    ASSERT_TRUE(c_.MergePatch(pods_, "default", pod,
                              Json::parse(R"({"status":{"phase":"Succeeded"}})"), true)
                    .ok());
  }
  // What the kubelet does for a terminating pod: the final delete.
  void FinishDelete(const std::string& pod) {
    client::DeleteOptions opts;
    opts.grace_period_seconds = 0;
    ASSERT_TRUE(c_.Delete(pods_, "default", pod, opts).ok());
  }

  Json Get(const std::string& pod) {
    auto p = c_.Get(pods_, "default", pod);
    return p.ok() ? *p : Json(nullptr);
  }
  std::string NodeOf(const std::string& pod) {
    Json p = Get(pod);
    return p.is_null() ? "<missing>" : p["spec"].value("nodeName", "");
  }
  std::string NominatedNode(const std::string& pod) {
    Json p = Get(pod);
    return p.is_null() ? "<missing>" : p["status"].value("nominatedNodeName", "");
  }
  // How many of prefix0..prefix{size-1} have a node.
  int Bound(const std::string& prefix, int size) {
    int n = 0;
    for (int i = 0; i < size; ++i) n += NodeOf(prefix + std::to_string(i)).empty() ? 0 : 1;
    return n;
  }
  bool Terminating(const std::string& pod) {
    Json p = Get(pod);
    return !p.is_null() && api::meta::IsBeingDeleted(p);
  }
  Json Condition(const std::string& pod, const std::string& type) {
    Json p = Get(pod);
    if (p.is_null()) return nullptr;
    for (const Json& c : p["status"].value("conditions", Json::array())) {
      if (c.value("type", "") == type) return c;
    }
    return nullptr;
  }
  // "status/reason: message" of the pod's PodScheduled condition.
  std::string PodMessage(const std::string& pod) {
    auto p = c_.Get(pods_, "default", pod);
    if (!p.ok()) return "<missing>";
    auto c = api::meta::GetCondition(*p, "PodScheduled");
    return c ? c->status + "/" + c->reason + ": " + c->message : "<none>";
  }
  // "status/reason: message" of the PodGroup's condition `type`.
  std::string GroupCondition(const std::string& pg, const std::string& type = "PodGroupScheduled") {
    auto p = c_.Get(pod_groups_, "default", pg);
    if (!p.ok()) return "<missing>";
    auto c = api::meta::GetCondition(*p, type);
    return c ? c->status + "/" + c->reason + ": " + c->message : "<none>";
  }
  int CountEvents(const std::string& reason) {
    int n = 0;
    for (const auto& e : ev_.events()) n += e.reason == reason;
    return n;
  }

  FakeClock clock_;
  store::MemoryStore store_;
  registry::Registry reg_{store_, api::BuiltinScheme(), clock_};
  client::InProcessClient c_{reg_};
  reconcile::Manager mgr_{clock_};
  reconcile::InformerFactory inf_{c_, mgr_};
  reconcile::FakeEventRecorder ev_;
  reconcile::ControllerContext ctx_{c_, inf_, mgr_, clock_, ev_};
  const api::KindDef& pods_ = c_.Kind("", "v1", "pods");
  const api::KindDef& nodes_ = c_.Kind("", "v1", "nodes");
  const api::KindDef& pod_groups_ = c_.Kind("scheduling.k8s.io", "v1alpha2", "podgroups");
};

}  // namespace batchd::scheduler::testing
