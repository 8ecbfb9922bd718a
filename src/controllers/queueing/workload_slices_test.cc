// Workload slices through the queue manager (Kueue's elastic Jobs): a slice
// that names an admitted Workload in kueue.x-k8s.io/workload-slice-replacement-for
// is admitted with that Workload's quota counted as its own, which is then
// marked Finished (WorkloadSliceReplaced); a slice whose growth does not fit
// waits while its predecessor keeps running; a restart between the two
// writes finishes the predecessor then.
#include <algorithm>

#include "controllers/queueing/queue_manager_test_env.h"

namespace batchd::controllers::queueing::testing {
namespace {

class WorkloadSlicesTest : public QueueManagerTest {
 protected:
  std::string CpuUsed() {
    Json cq = Get("clusterqueues", "", "cq");
    for (const Json& f : cq["status"].value("flavorsUsage", Json::array())) {
      for (const Json& r : f.value("resources", Json::array())) {
        if (r.value("name", "") == "cpu") return r["total"].get<std::string>();
      }
    }
    return "";
  }
  void Slice(const std::string& name, int count, const std::string& replaces, int priority = 0) {
    Workload(name, "lq", "1", priority, count);
    Patch("workloads", "ns", name,
          {{"metadata",
            {{"annotations",
              {{"kueue.x-k8s.io/elastic-job", "true"},
               {"kueue.x-k8s.io/workload-slice-replacement-for", replaces}}}}}});
  }
};

TEST_F(WorkloadSlicesTest, ScaleUpReplacesTheAdmittedSlice) {
  Basic();  // cq: 3 cpu
  Start();
  Workload("old", "lq", "1", 0, /*count=*/1);
  Workload("other", "lq", "1", 0, /*count=*/1);
  Settle();
  ASSERT_TRUE(Admitted("old"));
  ASSERT_TRUE(Admitted("other"));

  // 1 -> 2 pods: 2 + 1 fits in 3 only because old's 1 cpu counts as the slice's.
  Slice("s2", 2, "ns/old");
  Settle();
  ASSERT_TRUE(Admitted("s2")) << Wl("s2").dump();
  EXPECT_EQ(Wl("s2")["status"]["admission"]["podSetAssignments"][0]["count"], 2);
  EXPECT_EQ(Cond(Wl("old"), "Finished"), "True/WorkloadSliceReplaced");
  EXPECT_EQ(CpuUsed(), "3");

  // 2 -> 4 pods: 4 + 1 > 3, the slice waits and s2 keeps its admission.
  Slice("s4", 4, "ns/s2");
  Settle();
  EXPECT_FALSE(Admitted("s4"));
  EXPECT_EQ(Cond(Wl("s4"), "QuotaReserved"), "False/Pending");
  EXPECT_TRUE(Admitted("s2"));
  EXPECT_EQ(Cond(Wl("s2"), "Finished"), "");
  EXPECT_EQ(CpuUsed(), "3");

  // Room appears: the other workload finishes... but 4 > 3 still; a 3-pod slice fits.
  Patch("workloads", "ns", "other",
        {{"status",
          {{"conditions",
            {{{"type", "Finished"}, {"status", "True"}, {"reason", "Succeeded"},
              {"message", "done"}, {"lastTransitionTime", "2026-01-01T00:00:00Z"}}}}}}},
        true);
  Settle();
  EXPECT_FALSE(Admitted("s4"));
  ASSERT_TRUE(client_.Delete(Kind("workloads"), "ns", "s4").ok());
  Slice("s3", 3, "ns/s2");
  Settle();
  EXPECT_TRUE(Admitted("s3"));
  EXPECT_EQ(Cond(Wl("s2"), "Finished"), "True/WorkloadSliceReplaced");
  EXPECT_EQ(CpuUsed(), "3");

  Restart();
  EXPECT_TRUE(Admitted("s3"));
  EXPECT_EQ(CpuUsed(), "3");
}

TEST_F(WorkloadSlicesTest, RestartBetweenTheWritesFinishesThePredecessor) {
  Basic();
  Start();
  Workload("old", "lq", "1", 0, 1);
  Settle();
  Slice("new", 3, "ns/old");
  Settle();
  ASSERT_TRUE(Admitted("new"));
  ASSERT_EQ(Cond(Wl("old"), "Finished"), "True/WorkloadSliceReplaced");
  // As if the server died after the admission and before the Finished write.
  Json old = Wl("old");
  Json kept = Json::array();
  for (const Json& c : old["status"]["conditions"]) {
    if (c["type"] != "Finished") kept.push_back(c);
  }
  old["status"]["conditions"] = kept;
  ASSERT_TRUE(client_.UpdateStatus(Kind("workloads"), old).ok());
  Restart();
  EXPECT_EQ(Cond(Wl("old"), "Finished"), "True/WorkloadSliceReplaced");
  EXPECT_TRUE(Admitted("new"));
  EXPECT_EQ(CpuUsed(), "3");  // not 4: the predecessor is not counted again
}

TEST_F(WorkloadSlicesTest, AGrowingSlicePreemptsLikeAnyWorkloadButNotItsPredecessor) {
  // cq: 3 cpu, withinClusterQueue LowerPriority. old (1 pod) grows to 2
  // pods, as a slice of a higher priority, while `low` (2 pods) holds the
  // rest: both are below the slice's priority and old, admitted last, is
  // the first candidate, but the slice preempts low and replaces old once
  // low's quota is free.
  Basic({{"preemption", {{"withinClusterQueue", "LowerPriority"}}}});
  Start();
  Workload("low", "lq", "1", 0, 2);
  Settle();
  clock_.Advance(absl::Seconds(1));
  Workload("old", "lq", "1", 0, 1);
  Settle();
  ASSERT_TRUE(Admitted("old"));
  ASSERT_TRUE(Admitted("low"));
  Slice("s2", 2, "ns/old", /*priority=*/10);
  Settle();
  EXPECT_EQ(Cond(Wl("low"), "Evicted"), "True/Preempted");
  EXPECT_EQ(Cond(Wl("low"), "Preempted"), "True/InClusterQueue");
  EXPECT_EQ(Cond(Wl("old"), "Evicted"), "");
  EXPECT_FALSE(Admitted("s2"));
  EXPECT_TRUE(Admitted("old"));
  EXPECT_EQ(CpuUsed(), "3");
  ClearAdmission("low");  // low's job stopped
  EXPECT_TRUE(Admitted("s2"));
  EXPECT_EQ(Cond(Wl("old"), "Finished"), "True/WorkloadSliceReplaced");
  EXPECT_FALSE(Admitted("low"));
  EXPECT_EQ(CpuUsed(), "2");
}

TEST_F(WorkloadSlicesTest, ASliceWhoseWriteFailsKeepsItsPredecessorUntilItLands) {
  // The slice's admission write fails (store unavailable): old is neither
  // finished nor counted twice meanwhile, and is replaced once the write lands.
  Basic();  // cq: 3 cpu
  Start();
  Workload("old", "lq", "1", 0, 1);
  Workload("other", "lq", "1", 0, 1);
  Settle();
  Slice("s2", 2, "ns/old");
  faults_.FailUpdates("/workloads/ns/s2", absl::UnavailableError("disk gone"),
                      TestStore::When::kBefore, /*times=*/1000);
  Settle();
  EXPECT_FALSE(Admitted("s2"));
  EXPECT_TRUE(Admitted("old"));
  EXPECT_EQ(Cond(Wl("old"), "Finished"), "");
  EXPECT_EQ(CpuUsed(), "3");  // s2's 2 in place of old's 1, and other's 1
  faults_.ClearKeyFaults();
  Advance(absl::Seconds(1));
  EXPECT_TRUE(Admitted("s2"));
  EXPECT_EQ(Cond(Wl("old"), "Finished"), "True/WorkloadSliceReplaced");
  EXPECT_EQ(CpuUsed(), "3");
}

TEST_F(WorkloadSlicesTest, ReplacedSlicesFinishTogetherInOneBatch) {
  // Two elastic jobs grow in the same cycle: both slices are admitted in the
  // cycle's batch, then both predecessors' Finished writes go out together
  // in one more (owed_writes.cc), neither as a write of its own.
  Basic();
  Patch("clusterqueues", "", "cq",
        {{"spec", {{"resourceGroups",
                    {{{"coveredResources", {"cpu"}},
                      {"flavors", {{{"name", "default"}, {"resources", {Quota("cpu", "4")}}}}}}}}}}});
  Start();
  Workload("old1", "lq", "1", 0, 1);
  Workload("old2", "lq", "1", 0, 1);
  Settle();
  ASSERT_TRUE(Admitted("old1"));
  ASSERT_TRUE(Admitted("old2"));
  Slice("s1", 2, "ns/old1");
  Slice("s2", 2, "ns/old2");
  const size_t before = faults_.batches.size();
  faults_.single_keys.clear();
  Settle();
  EXPECT_TRUE(Admitted("s1"));
  EXPECT_TRUE(Admitted("s2"));
  EXPECT_EQ(Cond(Wl("old1"), "Finished"), "True/WorkloadSliceReplaced");
  EXPECT_EQ(Cond(Wl("old2"), "Finished"), "True/WorkloadSliceReplaced");
  EXPECT_EQ(CpuUsed(), "4");
  std::vector<size_t> batches(faults_.batches.begin() + before, faults_.batches.end());
  EXPECT_GE(std::count(batches.begin(), batches.end(), 2u), 2) << "admissions, then finishes";
  for (const std::string& key : faults_.single_keys) {
    EXPECT_FALSE(key.ends_with("/workloads/ns/old1") || key.ends_with("/workloads/ns/old2"))
        << key << " written on its own";
  }
}

}  // namespace
}  // namespace batchd::controllers::queueing::testing
