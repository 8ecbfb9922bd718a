#include <string>
#include <vector>

#include "controllers/gc/gc_test_env.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace batchd::controllers {
namespace {

using api::Json;
using testing::GcEnv;

std::vector<std::string> OwnerUidsOf(const Json& obj) {
  std::vector<std::string> uids;
  for (const auto& r : api::meta::GetOwnerReferences(obj)) uids.push_back(r.uid);
  return uids;
}

TEST(GarbageCollectorTest, PropagationPolicies) {
  struct Case {
    std::string name, policy;
    bool want_pods;        // Pods still exist after the owner is gone.
    bool want_owner_refs;  // ... and still reference it.
  };
  std::vector<Case> cases = {
      {"background deletes the pods", "Background", false, false},
      {"foreground deletes the pods first", "Foreground", false, false},
      {"orphan keeps the pods, unowned", "Orphan", true, false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    GcEnv e;
    Json job = e.Job("j");
    e.Pod("p1", {GcEnv::Ref(job)});
    e.Pod("p2", {GcEnv::Ref(job)});
    e.mgr_.RunUntilIdle();
    ASSERT_TRUE(e.Exists(e.Pods(), "p1"));  // Live owner: nothing collected.
    ASSERT_TRUE(e.Delete(e.Jobs(), "j", c.policy).ok());
    e.mgr_.RunUntilIdle();
    EXPECT_FALSE(e.Exists(e.Jobs(), "j"));
    for (const char* p : {"p1", "p2"}) {
      EXPECT_EQ(e.Exists(e.Pods(), p), c.want_pods) << p;
      if (c.want_pods) {
        EXPECT_EQ(OwnerUidsOf(e.Get(e.Pods(), p)).empty(), !c.want_owner_refs);
      }
    }
  }
}

TEST(GarbageCollectorTest, ForegroundWaitsForBlockingDependents) {
  GcEnv e;
  Json job = e.Job("j");
  e.Pod("blocking1", {GcEnv::Ref(job)}, "test.batchd.io/hold");
  e.Pod("blocking2", {GcEnv::Ref(job)}, "test.batchd.io/hold");
  e.Pod("nonblocking", {GcEnv::Ref(job, /*block=*/false)}, "test.batchd.io/hold");
  e.mgr_.RunUntilIdle();
  ASSERT_TRUE(e.Delete(e.Jobs(), "j", "Foreground").ok());
  e.mgr_.RunUntilIdle();
  // Every dependent is being deleted; the Job waits for them.
  for (const char* p : {"blocking1", "blocking2", "nonblocking"}) {
    EXPECT_TRUE(api::meta::IsBeingDeleted(e.Get(e.Pods(), p))) << p;
  }
  ASSERT_TRUE(e.Exists(e.Jobs(), "j"));
  EXPECT_TRUE(api::meta::HasFinalizer(e.Get(e.Jobs(), "j"), "foregroundDeletion"));

  e.DropFinalizer(e.Pods(), "blocking1", "test.batchd.io/hold");
  e.mgr_.RunUntilIdle();
  EXPECT_FALSE(e.Exists(e.Pods(), "blocking1"));
  EXPECT_TRUE(e.Exists(e.Jobs(), "j"));  // blocking2 still holds it.

  e.DropFinalizer(e.Pods(), "blocking2", "test.batchd.io/hold");
  e.mgr_.RunUntilIdle();
  EXPECT_FALSE(e.Exists(e.Jobs(), "j"));  // The non-blocking pod does not hold it.
  EXPECT_TRUE(e.Exists(e.Pods(), "nonblocking"));
}

TEST(GarbageCollectorTest, DependentWithAnotherLiveOwnerOnlyLosesTheDanglingRef) {
  GcEnv e;
  Json a = e.Job("a");
  Json b = e.Job("b");
  api::meta::OwnerReference second = GcEnv::Ref(b);
  second.controller = false;
  e.Pod("shared", {GcEnv::Ref(a), second});
  e.mgr_.RunUntilIdle();
  ASSERT_TRUE(e.Delete(e.Jobs(), "a", "Background").ok());
  e.mgr_.RunUntilIdle();
  ASSERT_TRUE(e.Exists(e.Pods(), "shared"));
  EXPECT_THAT(OwnerUidsOf(e.Get(e.Pods(), "shared")), ::testing::ElementsAre(api::meta::GetUid(b)));
  ASSERT_TRUE(e.Delete(e.Jobs(), "b", "Background").ok());
  e.mgr_.RunUntilIdle();
  EXPECT_FALSE(e.Exists(e.Pods(), "shared"));
}

TEST(GarbageCollectorTest, DependentsOfLiveOwnersDoNotWakeItUntilTheOwnerGoes) {
  GcEnv e;
  e.Job("j");
  e.mgr_.RunUntilIdle();  // The owner is in the cache before its dependents come.
  auto gc_reconciles = [&e] {
    int64_t n = 0;
    for (const auto& [name, count] : e.mgr_.ProcessedByController()) n += count;
    return n;
  };
  const int64_t before = gc_reconciles();
  e.Pod("p1", {GcEnv::Ref(e.Get(e.Jobs(), "j"))});
  e.Pod("p2", {GcEnv::Ref(e.Get(e.Jobs(), "j"))});
  Json p1 = e.Get(e.Pods(), "p1");
  p1["status"]["phase"] = "Running";
  ASSERT_TRUE(e.client_.UpdateStatus(e.Pods(), p1).ok());
  e.mgr_.RunUntilIdle();
  EXPECT_EQ(gc_reconciles(), before) << "a new pod of a live Job, and its status write";
  // The owner's deletion still collects them.
  ASSERT_TRUE(e.Delete(e.Jobs(), "j", "Background").ok());
  e.mgr_.RunUntilIdle();
  EXPECT_FALSE(e.Exists(e.Pods(), "p1"));
  EXPECT_FALSE(e.Exists(e.Pods(), "p2"));
}

TEST(GarbageCollectorTest, OwnerCheckedLiveNotOnlyInTheCache) {
  struct Case {
    std::string name;
    bool owner_exists;  // The referenced name exists ...
    bool same_uid;      // ... with the referenced uid.
    bool want_kept;
  };
  std::vector<Case> cases = {
      {"owner alive", true, true, true},
      {"owner never existed", false, false, false},
      {"namesake with another uid", true, false, false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    GcEnv e;
    Json owner = {{"apiVersion", "batch/v1"},
                  {"kind", "Job"},
                  {"metadata", {{"name", "j"}, {"uid", "00000000-0000-4000-8000-000000000001"}}}};
    if (c.owner_exists) {
      Json created = e.Job("j");
      if (c.same_uid) owner = created;
    }
    e.Pod("p", {GcEnv::Ref(owner)});
    e.mgr_.RunUntilIdle();
    EXPECT_EQ(e.Exists(e.Pods(), "p"), c.want_kept);
  }
}

TEST(GarbageCollectorTest, CascadesThroughCronJobToJobToPods) {
  GcEnv e;
  Json cj = {{"apiVersion", "batch/v1"},
             {"kind", "CronJob"},
             {"metadata", {{"name", "cj"}, {"namespace", "default"}}},
             {"spec",
              {{"schedule", "* * * * *"},
               {"jobTemplate", {{"spec", api::testing::MakeJob("x").Obj()["spec"]}}}}}};
  cj = e.MustCreate(e.CronJobs(), cj);
  Json job = api::testing::MakeJob("cj-1").Obj();
  api::meta::SetOwnerReference(job, GcEnv::Ref(cj));
  job = e.MustCreate(e.Jobs(), job);
  e.Pod("p", {GcEnv::Ref(job)});
  e.mgr_.RunUntilIdle();
  ASSERT_TRUE(e.Delete(e.CronJobs(), "cj", "Background").ok());
  e.mgr_.RunUntilIdle();
  EXPECT_FALSE(e.Exists(e.Jobs(), "cj-1"));
  EXPECT_FALSE(e.Exists(e.Pods(), "p"));
}

}  // namespace
}  // namespace batchd::controllers
