// Test-only fixture for the gc folder: an in-memory API server on a
// FakeClock with the garbage collector and/or TTL controller, plus object
// builders and finish helpers. Single-threaded; not for production use.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "api/meta/object_meta.h"
#include "api/meta/time_util.h"
#include "api/testing/builders.h"
#include "client/in_process_client.h"
#include "common/testing/fake_clock.h"
#include "controllers/gc/gc_controller.h"
#include "gtest/gtest.h"
#include "registry/registry.h"
#include "store/memory/memory_store.h"

namespace batchd::controllers::testing {

using api::Json;

class GcEnv {
 public:
  explicit GcEnv(bool gc = true, bool ttl = false) {
    EXPECT_TRUE(reg_.Start().ok());
    if (gc) AddGarbageCollector(ctx_);
    if (ttl) AddTtlAfterFinishedController(ctx_);
    EXPECT_TRUE(mgr_.SyncAll().ok());
  }

  const api::KindDef& Jobs() { return client_.Kind("batch", "v1", "jobs"); }
  const api::KindDef& Pods() { return client_.Kind("", "v1", "pods"); }
  const api::KindDef& CronJobs() { return client_.Kind("batch", "v1", "cronjobs"); }

  Json MustCreate(const api::KindDef& k, const Json& obj) {
    auto r = client_.Create(k, "default", obj);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : Json::object();
  }
  Json Job(const std::string& name) {
    return MustCreate(Jobs(), api::testing::MakeJob(name).Obj());
  }
  // A pod owned by `owners` (controller ref to the first), optional finalizer.
  Json Pod(const std::string& name, const std::vector<api::meta::OwnerReference>& owners,
           const std::string& finalizer = "") {
    Json pod = {
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata", {{"name", name}, {"namespace", "default"}}},
        {"spec",
         {{"restartPolicy", "Never"}, {"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}};
    for (const auto& o : owners) api::meta::SetOwnerReference(pod, o);
    if (!finalizer.empty()) api::meta::AddFinalizer(pod, finalizer);
    return MustCreate(Pods(), pod);
  }
  static api::meta::OwnerReference Ref(const Json& owner, bool block = true) {
    api::meta::OwnerReference r = api::meta::NewControllerRef(owner);
    r.block_owner_deletion = block;
    return r;
  }

  bool Exists(const api::KindDef& k, const std::string& name) {
    return client_.Get(k, "default", name).ok();
  }
  Json Get(const api::KindDef& k, const std::string& name) {
    auto r = client_.Get(k, "default", name);
    return r.ok() ? *r : Json();
  }
  absl::Status Delete(const api::KindDef& k, const std::string& name, const std::string& policy) {
    client::DeleteOptions opts;
    opts.propagation_policy = policy;
    return client_.Delete(k, "default", name, opts);
  }
  // Removes `finalizer` from an object through the API, as its owner would.
  void DropFinalizer(const api::KindDef& k, const std::string& name, const std::string& f) {
    Json obj = Get(k, name);
    ASSERT_TRUE(api::meta::RemoveFinalizer(obj, f));
    auto r = client_.Update(k, obj);
    ASSERT_TRUE(r.ok()) << r.status();
  }
  // Marks a Job Complete (or Failed) now, as the Job controller would.
  void FinishJob(const std::string& name, bool failed = false) {
    Json job = Get(Jobs(), name);
    std::string now = api::meta::FormatRfc3339(clock_.Now());
    auto cond = [&now](const char* t) {
      return Json{{"type", t},
                  {"status", "True"},
                  {"lastTransitionTime", now},
                  {"lastProbeTime", now},
                  {"reason", "Test"},
                  {"message", "test"}};
    };
    Json& st = job["status"];
    st["startTime"] = now;
    if (failed) {
      st["conditions"] = Json::array({cond("FailureTarget"), cond("Failed")});
      st["failed"] = 1;
    } else {
      st["conditions"] = Json::array({cond("SuccessCriteriaMet"), cond("Complete")});
      st["completionTime"] = now;
      st["succeeded"] = 1;
    }
    auto r = client_.UpdateStatus(Jobs(), job);
    ASSERT_TRUE(r.ok()) << r.status();
  }

  FakeClock clock_;
  store::MemoryStore store_;
  registry::Registry reg_{store_, api::BuiltinScheme(), clock_};
  client::InProcessClient client_{reg_};
  reconcile::Manager mgr_{clock_};
  reconcile::InformerFactory informers_{client_, mgr_};
  reconcile::FakeEventRecorder events_;
  reconcile::ControllerContext ctx_{client_, informers_, mgr_, clock_, events_};
};

}  // namespace batchd::controllers::testing
