// Test-only fixture for the JobSet controller: an in-memory registry on a
// FakeClock, the JobSet controller and the garbage collector (which carries
// out the foreground deletions of child Jobs) in a restartable stack (to
// simulate a controller crash over the same store), a client decorator that
// can fail Job writes, and a fake Job controller that moves child Jobs
// through ready / complete / failed by writing their status.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "api/meta/object_meta.h"
#include "api/meta/time_util.h"
#include "api/testing/jobset_builders.h"
#include "client/in_process_client.h"
#include "common/testing/fake_clock.h"
#include "controllers/gc/gc_controller.h"
#include "controllers/jobset/jobset_controller.h"
#include "gtest/gtest.h"
#include "registry/errors.h"
#include "store/memory/memory_store.h"

namespace batchd::controllers::jobset::testing {

using api::Json;
using api::testing::MakeJobSet;

// Forwards to another Client, counting Job creates and recording Job
// deletes' propagation; it can make Job deletes
// fail, and Job creates once `job_create_budget` of them succeeded (as if
// the controller died before making them).
class FaultClient : public client::Client {
 public:
  explicit FaultClient(client::Client& base) : base_(base) {}
  bool fail_job_deletes = false;
  int job_create_budget = -1;  // < 0: unlimited.
  int job_creates = 0;
  std::vector<std::string> job_delete_policies;  // Propagation of each Job delete.

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
    if (k.plural == "jobs") {
      if (job_create_budget == 0) return absl::UnavailableError("injected");
      if (job_create_budget > 0) --job_create_budget;
      ++job_creates;
    }
    return base_.Create(k, ns, std::move(obj));
  }
  absl::StatusOr<Json> Update(const api::KindDef& k, Json obj) override {
    return base_.Update(k, std::move(obj));
  }
  absl::StatusOr<Json> UpdateStatus(const api::KindDef& k, Json obj) override {
    return base_.UpdateStatus(k, std::move(obj));
  }
  absl::StatusOr<Json> MergePatch(const api::KindDef& k, const std::string& ns,
                                  const std::string& name, const Json& patch,
                                  bool status) override {
    return base_.MergePatch(k, ns, name, patch, status);
  }
  absl::Status Delete(const api::KindDef& k, const std::string& ns, const std::string& name,
                      const client::DeleteOptions& opts) override {
    if (k.plural == "jobs") {
      if (fail_job_deletes) return absl::UnavailableError("injected");
      job_delete_policies.push_back(opts.propagation_policy);
    }
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

class JobSetControllerTest : public ::testing::Test {
 protected:
  struct Stack {
    Stack(client::Client& c, Clock& clock)
        : mgr(clock), inf(c, mgr), ctx{c, inf, mgr, clock, ev} {
      AddJobSetController(ctx);
      AddGarbageCollector(ctx);
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
    stack_ = std::make_unique<Stack>(fault_, clock_);
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

  void Create(const Json& js) {
    auto r = base_.Create(jobsets_, "default", js);
    ASSERT_TRUE(r.ok()) << r.status();
    Settle();
  }
  Json GetJobSet(const std::string& name = "js") {
    auto r = base_.Get(jobsets_, "default", name);
    return r.ok() ? *r : Json();
  }
  void PatchJobSetSpec(const Json& spec_patch, const std::string& name = "js") {
    auto r = base_.MergePatch(jobsets_, "default", name, {{"spec", spec_patch}}, false);
    ASSERT_TRUE(r.ok()) << r.status();
    Settle();
  }
  Json Status(const std::string& name = "js") {
    return GetJobSet(name).value("status", Json::object());
  }
  // "Type=Status/Reason" for each condition, in order.
  std::vector<std::string> Conditions(const std::string& name = "js") {
    std::vector<std::string> out;
    for (const Json& c : Status(name).value("conditions", Json::array())) {
      out.push_back(c.value("type", "") + "=" + c.value("status", "") + "/" +
                    c.value("reason", ""));
    }
    return out;
  }
  std::string ConditionMessage(const std::string& type, const std::string& name = "js") {
    for (const Json& c : Status(name).value("conditions", Json::array())) {
      if (c.value("type", "") == type) return c.value("message", "");
    }
    return "";
  }

  std::vector<Json> Jobs() {
    auto r = base_.List(jobs_, "default", {});
    EXPECT_TRUE(r.ok());
    std::vector<Json> out = r.ok() ? r->items : std::vector<Json>{};
    std::sort(out.begin(), out.end(), [](const Json& a, const Json& b) {
      return api::meta::GetName(a) < api::meta::GetName(b);
    });
    return out;
  }
  // Names of the Jobs that exist, with "@<restart-attempt>" appended.
  std::vector<std::string> JobNames() {
    std::vector<std::string> out;
    for (const Json& j : Jobs()) {
      out.push_back(api::meta::GetName(j) + "@" +
                    api::meta::GetLabel(j, "jobset.sigs.k8s.io/restart-attempt").value_or("?"));
    }
    return out;
  }
  Json GetJob(const std::string& name) {
    auto r = base_.Get(jobs_, "default", name);
    EXPECT_TRUE(r.ok()) << name << ": " << r.status();
    return r.ok() ? *r : Json();
  }
  void DeleteJob(const std::string& name) {
    ASSERT_TRUE(base_.Delete(jobs_, "default", name, {}).ok());
    Settle();
  }

  // The fake Job controller: every pod of Job `name` is ready.
  void SetReady(const std::string& name) {
    Json j = GetJob(name);
    const int pods = j["spec"].value("parallelism", 1);
    j["status"]["startTime"] = api::meta::FormatRfc3339(clock_.Now());
    j["status"]["active"] = pods;
    j["status"]["ready"] = pods;
    WriteJobStatus(j);
  }
  void Complete(const std::string& name) {
    Json j = GetJob(name);
    const std::string now = api::meta::FormatRfc3339(clock_.Now());
    if (!j["status"].contains("startTime")) j["status"]["startTime"] = now;
    j["status"]["completionTime"] = now;
    j["status"]["active"] = 0;
    j["status"]["ready"] = 0;
    j["status"]["succeeded"] = j["spec"].value("completions", 1);
    j["status"]["conditions"] = {
        {{"type", "SuccessCriteriaMet"}, {"status", "True"}, {"lastTransitionTime", now}},
        {{"type", "Complete"}, {"status", "True"}, {"lastTransitionTime", now}}};
    WriteJobStatus(j);
  }
  void Fail(const std::string& name, const std::string& reason = "BackoffLimitExceeded",
            const std::string& message = "Job has reached the specified backoff limit") {
    Json j = GetJob(name);
    const std::string now = api::meta::FormatRfc3339(clock_.Now());
    if (!j["status"].contains("startTime")) j["status"]["startTime"] = now;
    j["status"]["active"] = 0;
    j["status"]["ready"] = 0;
    j["status"]["failed"] = 1;
    j["status"]["conditions"] = {{{"type", "FailureTarget"}, {"status", "True"},
                                  {"reason", reason}, {"message", message},
                                  {"lastTransitionTime", now}},
                                 {{"type", "Failed"}, {"status", "True"}, {"reason", reason},
                                  {"message", message}, {"lastTransitionTime", now}}};
    WriteJobStatus(j);
  }
  void WriteJobStatus(const Json& j) {
    auto r = base_.UpdateStatus(jobs_, j);
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
  std::unique_ptr<Stack> stack_;
  const api::KindDef& jobs_ = base_.Kind("batch", "v1", "jobs");
  const api::KindDef& jobsets_ = base_.Kind("jobset.x-k8s.io", "v1alpha2", "jobsets");
};

}  // namespace batchd::controllers::jobset::testing
