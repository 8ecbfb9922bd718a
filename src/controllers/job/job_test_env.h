// Test-only fixture for the Job controller: an in-memory registry on a
// FakeClock, the controller in a restartable stack (to simulate a
// controller crash/restart over the same store), a client decorator that
// can fail pod writes, and a fake node that moves pods through phases.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "api/meta/object_meta.h"
#include "api/meta/time_util.h"
#include "api/testing/builders.h"
#include "client/in_process_client.h"
#include "common/testing/fake_clock.h"
#include "controllers/job/job_controller.h"
#include "gtest/gtest.h"
#include "registry/errors.h"
#include "store/memory/memory_store.h"

namespace batchd::controllers::job::testing {

using api::Json;

// podFailurePolicy rule builders.
inline Json ExitCodeRule(const std::string& action, const std::string& op,
                         std::vector<int> values, const std::string& container = "") {
  Json req = {{"operator", op}, {"values", values}};
  if (!container.empty()) req["containerName"] = container;
  return {{"action", action}, {"onExitCodes", req}};
}
inline Json ConditionRule(const std::string& action, const std::string& type) {
  Json pattern = {{"type", type}};
  return {{"action", action}, {"onPodConditions", Json::array({pattern})}};
}

// Forwards to another Client; `fail_pod_updates` makes pod PUTs fail (as if
// the controller died right before removing a finalizer), `fail_pod_creates`
// pod creates. With a fault on, write chains go one by one through them.
class FaultClient : public client::Client {
 public:
  explicit FaultClient(client::Client& base) : base_(base) {}
  bool fail_pod_updates = false;
  bool fail_pod_creates = false;

  const api::Scheme& scheme() const override { return base_.scheme(); }
  absl::StatusOr<Json> Get(const api::KindDef& k, const std::string& ns,
                           const std::string& name) override {
    return base_.Get(k, ns, name);
  }
  absl::StatusOr<client::ListResult> List(const api::KindDef& k, const std::string& ns,
                                          const client::Selector& sel) override {
    return base_.List(k, ns, sel);
  }
  absl::StatusOr<Json> Create(const api::KindDef& k, const std::string& ns, Json obj) override {
    if (fail_pod_creates && k.plural == "pods") return absl::UnavailableError("injected");
    return base_.Create(k, ns, std::move(obj));
  }
  absl::StatusOr<Json> Update(const api::KindDef& k, Json obj) override {
    if (fail_pod_updates && k.plural == "pods") return absl::UnavailableError("injected");
    return base_.Update(k, std::move(obj));
  }
  absl::StatusOr<Json> UpdateStatus(const api::KindDef& k, Json obj) override {
    return base_.UpdateStatus(k, std::move(obj));
  }
  std::vector<absl::StatusOr<Json>> WriteChain(std::vector<ChainedWrite> writes) override {
    // With faults on, one by one through Update (which fails for pods).
    if (fail_pod_updates || fail_pod_creates) return client::Client::WriteChain(std::move(writes));
    if (before_chain) std::exchange(before_chain, nullptr)();
    ++write_chains;
    return base_.WriteChain(std::move(writes));
  }
  int write_chains = 0;  // Chains forwarded to the in-process client.
  std::function<void()> before_chain;  // Runs once, before the next chain.
  absl::StatusOr<Json> MergePatch(const api::KindDef& k, const std::string& ns,
                                  const std::string& name, const Json& patch,
                                  bool status) override {
    return base_.MergePatch(k, ns, name, patch, status);
  }
  absl::Status Delete(const api::KindDef& k, const std::string& ns, const std::string& name,
                      const client::DeleteOptions& opts) override {
    return base_.Delete(k, ns, name, opts);
  }
  absl::StatusOr<std::unique_ptr<client::WatchStream>> Watch(
      const api::KindDef& k, const std::string& ns, const client::Selector& sel,
      const std::string& rv) override {
    return base_.Watch(k, ns, sel, rv);
  }

 private:
  client::Client& base_;
};

class JobControllerTest : public ::testing::Test {
 protected:
  struct Stack {
    Stack(client::Client& c, Clock& clock, JobControllerOptions opts)
        : mgr(clock), inf(c, mgr), ctx{c, inf, mgr, clock, ev} {
      AddJobController(ctx, opts);
    }
    reconcile::Manager mgr;
    reconcile::InformerFactory inf;
    reconcile::FakeEventRecorder ev;
    reconcile::ControllerContext ctx;
  };

  void SetUp() override {
    ASSERT_TRUE(reg_.Start().ok());
    Restart();
  }

  // A fresh controller over the same store (a controller restart).
  void Restart() {
    stack_.reset();
    stack_ = std::make_unique<Stack>(fault_, clock_, options_);
    ASSERT_TRUE(stack_->mgr.SyncAll().ok());
    Settle();
  }

  void Settle() {
    int steps = stack_->mgr.RunUntilIdle(20000);
    ASSERT_LT(steps, 20000) << "controller did not converge";
  }
  void Advance(absl::Duration d) {
    clock_.Advance(d);
    Settle();
  }

  Json CreateJob(Json job) {
    auto r = base_.Create(jobs_, "default", std::move(job));
    EXPECT_TRUE(r.ok()) << r.status();
    Settle();
    return r.ok() ? *r : Json();
  }
  Json GetJob(const std::string& name) {
    auto r = base_.Get(jobs_, "default", name);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : Json();
  }
  void UpdateJobSpec(const std::string& name, Json spec_patch) {
    auto r = base_.MergePatch(jobs_, "default", name, {{"spec", spec_patch}});
    ASSERT_TRUE(r.ok()) << r.status();
    Settle();
  }
  Json Status(const std::string& name) { return GetJob(name).value("status", Json::object()); }
  int Count(const std::string& name, const char* field) {
    return Status(name).value(field, 0);
  }
  // "Type=Status/Reason" for each condition, in order.
  std::vector<std::string> Conditions(const std::string& name) {
    std::vector<std::string> out;
    for (const Json& c : Status(name).value("conditions", Json::array())) {
      out.push_back(c.value("type", "") + "=" + c.value("status", "") + "/" +
                    c.value("reason", ""));
    }
    return out;
  }

  std::vector<Json> Pods(const std::string& job) {
    auto r = base_.List(pods_, "default", {"batch.kubernetes.io/job-name=" + job, ""});
    EXPECT_TRUE(r.ok());
    std::vector<Json> out = r.ok() ? r->items : std::vector<Json>{};
    std::sort(out.begin(), out.end(), [](const Json& a, const Json& b) {
      return api::meta::GetName(a) < api::meta::GetName(b);
    });
    return out;
  }
  std::vector<Json> ActivePods(const std::string& job) {
    std::vector<Json> out;
    for (Json& p : Pods(job)) {
      std::string phase = p["status"].value("phase", "");
      if (phase != "Succeeded" && phase != "Failed" && !api::meta::IsBeingDeleted(p)) {
        out.push_back(std::move(p));
      }
    }
    return out;
  }

  // The fake node: container `main` terminates with `exit_code`.
  void Finish(const Json& pod, int exit_code, Json conditions = Json::array(),
              bool settle = true) {
    Json p = pod;
    std::string now = api::meta::FormatRfc3339(clock_.Now());
    p["status"]["phase"] = exit_code == 0 ? "Succeeded" : "Failed";
    p["status"]["conditions"] = conditions;
    p["status"]["containerStatuses"] = Json::array(
        {{{"name", "main"},
          {"ready", false},
          {"restartCount", 0},
          {"image", "busybox"},
          {"imageID", ""},
          {"state",
           {{"terminated",
             {{"exitCode", exit_code}, {"startedAt", now}, {"finishedAt", now},
              {"reason", exit_code == 0 ? "Completed" : "Error"}}}}}}});
    auto r = base_.UpdateStatus(pods_, p);
    ASSERT_TRUE(r.ok()) << r.status();
    if (settle) Settle();
  }
  void FinishAll(const std::string& job, int exit_code) {
    for (const Json& p : ActivePods(job)) Finish(p, exit_code);
  }
  // The scheduler: binds the pod to node n1 (so deletion becomes graceful).
  void Bind(const Json& pod) {
    Json binding = {{"apiVersion", "v1"},
                    {"kind", "Binding"},
                    {"metadata", {{"name", api::meta::GetName(pod)}}},
                    {"target", {{"kind", "Node"}, {"name", "n1"}}}};
    auto r = reg_.Bind("default", api::meta::GetName(pod), binding, registry::WriteOptions{});
    ASSERT_TRUE(r.ok()) << r.status();
    Settle();
  }
  void SetRunning(const Json& pod, bool ready) {
    Json p = pod;
    p["status"]["phase"] = "Running";
    p["status"]["conditions"] = Json::array({{{"type", "Ready"},
                                              {"status", ready ? "True" : "False"}}});
    auto r = base_.UpdateStatus(pods_, p);
    ASSERT_TRUE(r.ok()) << r.status();
    Settle();
  }

  std::vector<std::string> EventReasons() { return stack_->ev.Reasons(); }
  int CountEvents(const std::string& reason) {
    auto r = EventReasons();
    return static_cast<int>(std::count(r.begin(), r.end(), reason));
  }

  FakeClock clock_;
  store::MemoryStore store_;
  registry::Registry reg_{store_, api::BuiltinScheme(), clock_};
  client::InProcessClient base_{reg_};
  FaultClient fault_{base_};
  JobControllerOptions options_;  // Set before Restart() to change the controller's.
  std::unique_ptr<Stack> stack_;
  const api::KindDef& jobs_ = base_.Kind("batch", "v1", "jobs");
  const api::KindDef& pods_ = base_.Kind("", "v1", "pods");
};

}  // namespace batchd::controllers::job::testing
