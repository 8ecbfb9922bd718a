// Test-only fixture for the queue manager: an in-memory registry on a
// FakeClock, Kueue objects created directly (no Jobs), the manager driven by
// Manager::RunUntilIdle; Restart() replaces the manager, its informers and
// its in-memory state with fresh ones over the same store (a process
// restart). Not thread-safe; one test thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/meta/object_meta.h"
#include "api/meta/time_util.h"
#include "client/in_process_client.h"
#include "common/testing/fake_clock.h"
#include "controllers/queueing/queue_manager.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "registry/registry.h"
#include "store/memory/memory_store.h"
#include "store/testing/fault_store.h"

namespace batchd::controllers::queueing::testing {

using api::Json;
using ::testing::HasSubstr;

inline constexpr char kGroup[] = "kueue.x-k8s.io";
inline constexpr char kVersion[] = "v1beta2";

inline Json Quota(const std::string& name, const std::string& nominal) {
  return {{"name", name}, {"nominalQuota", nominal}};
}

// Between the registry and the memory store: records the size of every
// UpdateMany batch, fails the updates of chosen keys (before the write, or
// after it like a lost acknowledgement) and runs a hook before each update
// (a concurrent writer). FaultStore's faults apply too.
class TestStore : public store::testing::FaultStore {
 public:
  using FaultStore::FaultStore;
  enum class When { kBefore, kAfter };

  // The next `times` updates of a key ending in `suffix` fail with `st`.
  void FailUpdates(const std::string& suffix, absl::Status st, When when, int times = 1) {
    key_faults_.push_back({suffix, std::move(st), when, times});
  }
  void ClearKeyFaults() { key_faults_.clear(); }
  // Runs before each update (not re-entered by the updates it makes).
  std::function<void(std::string_view key)> before_update;
  // Sizes of the UpdateMany batches so far.
  std::vector<size_t> batches;
  int64_t single_updates = 0;  // Updates outside a batch.
  std::vector<std::string> single_keys;  // Their keys, in order.

  std::vector<absl::StatusOr<store::KeyValue>> UpdateMany(std::vector<UpdateOp> ops) override {
    batches.push_back(ops.size());
    in_batch_ = true;
    std::vector<absl::StatusOr<store::KeyValue>> out = Store::UpdateMany(std::move(ops));
    in_batch_ = false;
    return out;
  }
  absl::StatusOr<store::KeyValue> Update(std::string_view key, std::string value,
                                         int64_t expected_mod_revision) override {
    if (!in_batch_) {
      ++single_updates;
      single_keys.emplace_back(key);
    }
    if (before_update && !in_hook_) {
      in_hook_ = true;
      const bool batch = in_batch_;
      in_batch_ = false;
      before_update(key);
      in_batch_ = batch;
      in_hook_ = false;
    }
    for (auto it = key_faults_.begin(); it != key_faults_.end(); ++it) {
      if (key.size() < it->suffix.size() ||
          key.substr(key.size() - it->suffix.size()) != it->suffix) {
        continue;
      }
      absl::Status st = it->status;
      const When when = it->when;
      if (--it->times == 0) key_faults_.erase(it);
      if (when == When::kAfter) {
        FaultStore::Update(key, std::move(value), expected_mod_revision).IgnoreError();
      }
      return st;
    }
    return FaultStore::Update(key, std::move(value), expected_mod_revision);
  }

 private:
  struct KeyFault {
    std::string suffix;
    absl::Status status;
    When when;
    int times;
  };
  std::vector<KeyFault> key_faults_;
  bool in_batch_ = false;
  bool in_hook_ = false;
};

class QueueManagerTest : public ::testing::Test {
 protected:
  struct Stack {
    Stack(client::Client& c, Clock& clock, const QueueingConfig& cfg)
        : mgr(clock), inf(c, mgr), ctx{c, inf, mgr, clock, ev} {
      qm = AddQueueManager(ctx, cfg);
    }
    reconcile::Manager mgr;
    reconcile::InformerFactory inf;
    reconcile::FakeEventRecorder ev;
    reconcile::ControllerContext ctx;
    std::shared_ptr<QueueManager> qm;
  };

  void SetUp() override { ASSERT_TRUE(reg_.Start().ok()); }

  void Start(QueueingConfig cfg = {}) {
    stack_ = std::make_unique<Stack>(client_, clock_, cfg);
    ASSERT_TRUE(stack_->mgr.SyncAll().ok());
    Settle();
  }
  // A process restart: the old manager, informers and all in-memory state
  // go; a fresh stack lists the store and converges.
  void Restart(QueueingConfig cfg = {}) {
    stack_.reset();
    Start(std::move(cfg));
  }
  void Settle() {
    int steps = stack_->mgr.RunUntilIdle(20000);
    ASSERT_LT(steps, 20000) << "queue manager did not converge";
  }
  void Advance(absl::Duration d) {
    clock_.Advance(d);
    Settle();
  }

  const api::KindDef& Kind(const char* plural) { return client_.Kind(kGroup, kVersion, plural); }

  void Create(const char* plural, const std::string& ns, Json obj) {
    obj["apiVersion"] = std::string(kGroup) + "/" + kVersion;
    obj["kind"] = Kind(plural).kind;
    auto r = client_.Create(Kind(plural), ns, std::move(obj));
    ASSERT_TRUE(r.ok()) << r.status();
  }
  void Patch(const char* plural, const std::string& ns, const std::string& name, Json patch,
             bool status = false) {
    auto r = client_.MergePatch(Kind(plural), ns, name, patch, status);
    ASSERT_TRUE(r.ok()) << r.status();
  }
  Json Get(const char* plural, const std::string& ns, const std::string& name) {
    auto r = client_.Get(Kind(plural), ns, name);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : Json();
  }

  void Namespace(const std::string& name) {
    Json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}};
    auto r = client_.Create(client_.Kind("", "v1", "namespaces"), "", ns);
    ASSERT_TRUE(r.ok()) << r.status();
  }
  void Flavor(const std::string& name) {
    Create("resourceflavors", "", {{"metadata", {{"name", name}}}, {"spec", Json::object()}});
  }
  // A ClusterQueue with one flavor `default` and `cpu` quota.
  void ClusterQueue(const std::string& name, const std::string& cpu, Json extra = Json::object()) {
    Json spec = {{"namespaceSelector", Json::object()},
                 {"resourceGroups",
                  {{{"coveredResources", {"cpu"}},
                    {"flavors", {{{"name", "default"}, {"resources", {Quota("cpu", cpu)}}}}}}}}};
    spec.update(extra);
    Create("clusterqueues", "", {{"metadata", {{"name", name}}}, {"spec", spec}});
  }
  void LocalQueue(const std::string& ns, const std::string& name, const std::string& cq) {
    Create("localqueues", ns, {{"metadata", {{"name", name}}}, {"spec", {{"clusterQueue", cq}}}});
  }
  void Workload(const std::string& name, const std::string& lq, const std::string& cpu,
                int priority = 0, int count = 1) {
    Json container = {{"name", "c"},
                      {"image", "busybox"},
                      {"resources", {{"requests", {{"cpu", cpu}}}}}};
    Create("workloads", "ns",
           {{"metadata", {{"name", name}}},
            {"spec",
             {{"queueName", lq},
              {"priority", priority},
              {"podSets",
               {{{"name", "main"},
                 {"count", count},
                 {"template", {{"spec", {{"containers", {container}}}}}}}}}}}});
  }
  Json Wl(const std::string& name) { return Get("workloads", "ns", name); }
  bool Admitted(const std::string& name) {
    Json w = Wl(name);
    return w["status"].contains("admission") && Cond(w, "Admitted") == "True/Admitted";
  }
  static std::string Cond(const Json& obj, const std::string& type) {
    for (const Json& c : obj.value("status", Json::object()).value("conditions", Json::array())) {
      if (c.value("type", "") == type) {
        return c.value("status", "") + "/" + c.value("reason", "");
      }
    }
    return "";
  }
  static std::string CondMessage(const Json& obj, const std::string& type) {
    for (const Json& c : obj.value("status", Json::object()).value("conditions", Json::array())) {
      if (c.value("type", "") == type) return c.value("message", "");
    }
    return "";
  }
  // What kjob does once the evicted job is suspended: clear the reservation.
  void ClearAdmission(const std::string& name) {
    Json w = Wl(name);
    w["status"].erase("admission");
    for (Json& c : w["status"]["conditions"]) {
      if (c["type"] == "QuotaReserved" || c["type"] == "Admitted") {
        c["status"] = "False";
        c["reason"] = "Pending";
      }
    }
    auto r = client_.UpdateStatus(Kind("workloads"), w);
    ASSERT_TRUE(r.ok()) << r.status();
    Settle();
  }
  void SetPodsReady(const std::string& name) {
    Json w = Wl(name);
    w["status"]["conditions"].push_back({{"type", "PodsReady"},
                                         {"status", "True"},
                                         {"reason", "PodsReady"},
                                         {"message", "All pods are ready"},
                                         {"lastTransitionTime",
                                          api::meta::FormatRfc3339(clock_.Now())}});
    auto r = client_.UpdateStatus(Kind("workloads"), w);
    ASSERT_TRUE(r.ok()) << r.status();
    Settle();
  }
  std::string Metrics() {
    std::string out;
    stack_->qm->AppendPrometheus(&out);
    return out;
  }

  // The seeds' basic setup: flavor `default`, ClusterQueue `cq` (cpu 3),
  // LocalQueue ns/lq.
  void Basic(Json cq_extra = Json::object()) {
    Namespace("ns");
    Flavor("default");
    ClusterQueue("cq", "3", cq_extra);
    LocalQueue("ns", "lq", "cq");
  }

  FakeClock clock_;
  store::MemoryStore store_;
  TestStore faults_{store_};  // What the registry writes through.
  registry::Registry reg_{faults_, api::BuiltinScheme(), clock_};
  client::InProcessClient client_{reg_};
  std::unique_ptr<Stack> stack_;
};

}  // namespace batchd::controllers::queueing::testing
