// One cycle's admissions go to the store as one batch of status patches
// (status_writes.cc): a concurrent write to one Workload of the batch does
// not conflict, a Workload changed meanwhile loses only its own admission, a
// write that fails keeps its quota held until it is written, and a write
// whose acknowledgement is lost is neither counted twice nor lost across a
// restart.
#include <string>
#include <vector>

#include "controllers/queueing/queue_manager_test_env.h"

namespace batchd::controllers::queueing::testing {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

class StatusWritesTest : public QueueManagerTest {
 protected:
  // Basic() with a `cpu` quota and `names` (1 cpu each, in this order) created
  // before the manager starts: its first cycle decides them together.
  void Queue(const std::string& cpu, const std::vector<std::string>& names) {
    Basic();
    Patch("clusterqueues", "", "cq",
          {{"spec", {{"resourceGroups",
                      {{{"coveredResources", {"cpu"}},
                        {"flavors", {{{"name", "default"}, {"resources", {Quota("cpu", cpu)}}}}}}}}}}});
    for (const std::string& n : names) {
      Workload(n, "lq", "1");
      clock_.Advance(absl::Seconds(1));
    }
  }
  static std::string Key(const std::string& name) { return "/workloads/ns/" + name; }
  // The ClusterQueue's status.flavorsReservation cpu total.
  std::string Reserved() {
    Json cq = Get("clusterqueues", "", "cq");
    for (const Json& f : cq["status"].value("flavorsReservation", Json::array())) {
      for (const Json& r : f.value("resources", Json::array())) {
        if (r.value("name", "") == "cpu") return r["total"].get<std::string>();
      }
    }
    return "";
  }
  std::vector<std::string> AdmittedAmong(const std::vector<std::string>& names) {
    std::vector<std::string> out;
    for (const std::string& n : names) {
      if (Admitted(n)) out.push_back(n);
    }
    return out;
  }
  // Workloads holding an admission in the store (whatever their conditions).
  int Holding(const std::vector<std::string>& names) {
    int n = 0;
    for (const std::string& name : names) n += Wl(name)["status"].contains("admission") ? 1 : 0;
    return n;
  }
};

TEST_F(StatusWritesTest, OneCycleAdmitsInOneStoreBatch) {
  Queue("3", {"a", "b", "c", "d"});
  Start();
  EXPECT_EQ(AdmittedAmong({"a", "b", "c", "d"}), (std::vector<std::string>{"a", "b", "c"}));
  // The three admissions and d's pending message: one UpdateMany of 4 writes.
  EXPECT_THAT(faults_.batches, Contains(4u));
  EXPECT_EQ(Cond(Wl("d"), "QuotaReserved"), "False/Pending");
  EXPECT_GE(stack_->qm->stats().status_batches, 1);
  EXPECT_EQ(Reserved(), "3");
}

TEST_F(StatusWritesTest, AConcurrentWriteToOneWorkloadDoesNotConflict) {
  // The Job integration labels b while the batch is being written: b's write
  // lost the race (its revision moved) and is made again on b's new version;
  // a and c are written in the batch. Nothing is lost: b keeps the label.
  Queue("3", {"a", "b", "c"});
  bool written = false;
  faults_.before_update = [&](std::string_view key) {
    if (written || !key.ends_with(Key("b"))) return;
    written = true;
    Patch("workloads", "ns", "b", {{"metadata", {{"labels", {{"job", "x"}}}}}});
  };
  Start();
  ASSERT_TRUE(written);
  EXPECT_EQ(AdmittedAmong({"a", "b", "c"}), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(Wl("b")["metadata"]["labels"]["job"], "x");
  EXPECT_EQ(Reserved(), "3");
}

TEST_F(StatusWritesTest, AWorkloadChangedMeanwhileLosesOnlyItsOwnAdmission) {
  // b is deactivated (a spec change) while the batch is written: the
  // decision no longer holds for it, so its admission is refused and the
  // core's assumption undone; a and c stand, and b's quota is free again.
  Queue("3", {"a", "b", "c"});
  bool changed = false;
  faults_.before_update = [&](std::string_view key) {
    if (changed || !key.ends_with(Key("b"))) return;
    changed = true;
    Patch("workloads", "ns", "b", {{"spec", {{"active", false}}}});
  };
  Start();
  ASSERT_TRUE(changed);
  EXPECT_EQ(AdmittedAmong({"a", "b", "c"}), (std::vector<std::string>{"a", "c"}));
  EXPECT_FALSE(Wl("b")["status"].contains("admission"));
  EXPECT_EQ(Reserved(), "2");
  // The freed quota goes to the next workload.
  Workload("e", "lq", "1");
  Settle();
  EXPECT_TRUE(Admitted("e"));
  EXPECT_EQ(Reserved(), "3");
}

TEST_F(StatusWritesTest, AFailedWriteHoldsItsQuotaUntilItLands) {
  // b's write fails (store unavailable) in the middle of the batch: a and c
  // are admitted, b's quota stays held (d, which would fit in it, waits),
  // and b is written on the retry a second later.
  Queue("3", {"a", "b", "c", "d"});
  faults_.FailUpdates(Key("b"), absl::UnavailableError("disk gone"), TestStore::When::kBefore,
                      /*times=*/1000);
  Start();
  EXPECT_EQ(AdmittedAmong({"a", "b", "c", "d"}), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(Holding({"a", "b", "c", "d"}), 2);
  Advance(absl::Seconds(5));  // Retried, still failing: d still waits.
  EXPECT_EQ(Holding({"a", "b", "c", "d"}), 2);
  EXPECT_FALSE(Admitted("d"));
  faults_.ClearKeyFaults();
  Advance(absl::Seconds(1));
  EXPECT_EQ(AdmittedAmong({"a", "b", "c", "d"}), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(Reserved(), "3");
  EXPECT_THAT(Metrics(), HasSubstr("kueue_admitted_workloads_total{cluster_queue=\"cq\"} 3\n"));
}

TEST_F(StatusWritesTest, AWholeBatchThatFailsIsRetried) {
  // Every write fails for a while (the transaction as a whole, and the
  // queue statuses): nothing is admitted twice or over quota, and once the
  // store is back every admission lands exactly once.
  Queue("2", {"a", "b", "c"});
  faults_.FailAllWrites(absl::UnavailableError("store down"));
  Start();
  EXPECT_EQ(Holding({"a", "b", "c"}), 0);
  Advance(absl::Seconds(1));
  EXPECT_EQ(Holding({"a", "b", "c"}), 0);
  faults_.Clear();
  Advance(absl::Seconds(1));
  EXPECT_EQ(AdmittedAmong({"a", "b", "c"}), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(Reserved(), "2");
  EXPECT_THAT(Metrics(), HasSubstr("kueue_admitted_workloads_total{cluster_queue=\"cq\"} 2\n"));
}

TEST_F(StatusWritesTest, ALostAcknowledgementIsNotCountedTwice) {
  // a and b's writes land but the store answers with an error (a lost
  // acknowledgement): the retry finds the admissions there and counts them
  // once; c never gets their quota.
  Queue("2", {"a", "b", "c"});
  faults_.FailUpdates(Key("a"), absl::UnavailableError("ack lost"), TestStore::When::kAfter);
  faults_.FailUpdates(Key("b"), absl::UnavailableError("ack lost"), TestStore::When::kAfter);
  Start();
  EXPECT_EQ(Holding({"a", "b", "c"}), 2);
  Advance(absl::Seconds(1));
  EXPECT_EQ(AdmittedAmong({"a", "b", "c"}), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(Reserved(), "2");
  Json cq = Get("clusterqueues", "", "cq");
  EXPECT_EQ(cq["status"]["reservingWorkloads"], 2);
  EXPECT_EQ(cq["status"]["pendingWorkloads"], 1);
  EXPECT_THAT(Metrics(), HasSubstr("kueue_admitted_workloads_total{cluster_queue=\"cq\"} 2\n"));
  EXPECT_THAT(Metrics(), Not(HasSubstr("kueue_admitted_workloads_total{cluster_queue=\"cq\"} 4")));
}

TEST_F(StatusWritesTest, ARestartWhileAnAdmissionIsInDoubtCountsWhatTheStoreHolds) {
  // a's write lands but its answer is lost; then the store goes down before
  // b's write, and the process dies with b in doubt. The next process counts
  // a once (from the store) and admits b in the one slot left, never c.
  Queue("2", {"a", "b", "c"});
  faults_.FailUpdates(Key("a"), absl::UnavailableError("ack lost"), TestStore::When::kAfter);
  faults_.before_update = [&](std::string_view key) {
    if (key.ends_with(Key("b"))) faults_.FailAllWrites(absl::UnavailableError("store down"));
  };
  Start();
  ASSERT_EQ(Holding({"a", "b", "c"}), 1);
  EXPECT_TRUE(Wl("a")["status"].contains("admission"));
  faults_.before_update = nullptr;
  faults_.Clear();
  Restart();
  EXPECT_EQ(AdmittedAmong({"a", "b", "c"}), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(Holding({"a", "b", "c"}), 2);
  EXPECT_EQ(Reserved(), "2");
  Json cq = Get("clusterqueues", "", "cq");
  EXPECT_EQ(cq["status"]["reservingWorkloads"], 2);
  EXPECT_EQ(cq["status"]["pendingWorkloads"], 1);
  // a finishes: its quota goes to c, once.
  Patch("workloads", "ns", "a",
        {{"status", {{"conditions", {{{"type", "Finished"},
                                      {"status", "True"},
                                      {"reason", "Succeeded"},
                                      {"message", "done"},
                                      {"lastTransitionTime",
                                       api::meta::FormatRfc3339(clock_.Now())}}}}}}},
        /*status=*/true);
  Settle();
  EXPECT_TRUE(Admitted("c"));
  EXPECT_EQ(Reserved(), "2");
}

// waitForPodsReady: the PodsReady timeouts of one cycle are written with the
// cycle's batch (owed_writes.cc), each on its Workload's latest version: a
// label the Job integration writes meanwhile neither conflicts nor is lost,
// and none goes out as a write of its own.
TEST_F(StatusWritesTest, PodsReadyTimeoutsOfOneCycleGoInOneBatch) {
  QueueingConfig cfg;
  cfg.wait_for_pods_ready.enable = true;
  cfg.wait_for_pods_ready.timeout = absl::Minutes(5);
  cfg.wait_for_pods_ready.requeuing.backoff_base_seconds = 10;
  Queue("3", {"a", "b", "c"});
  Start(cfg);
  ASSERT_EQ(AdmittedAmong({"a", "b", "c"}), (std::vector<std::string>{"a", "b", "c"}));
  Advance(absl::Minutes(5) - absl::Seconds(1));
  bool labelled = false;
  faults_.before_update = [&](std::string_view key) {
    if (labelled || !key.ends_with(Key("b"))) return;
    labelled = true;
    Patch("workloads", "ns", "b", {{"metadata", {{"labels", {{"job", "x"}}}}}});
  };
  const size_t batches_before = faults_.batches.size();
  faults_.single_keys.clear();
  Advance(absl::Seconds(1));
  ASSERT_TRUE(labelled);
  for (const std::string n : {"a", "b", "c"}) {
    SCOPED_TRACE(n);
    Json wl = Wl(n);
    EXPECT_EQ(Cond(wl, "Evicted"), "True/PodsReadyTimeout");
    EXPECT_EQ(CondMessage(wl, "Evicted"), "Exceeded the PodsReady timeout ns/" + n);
    EXPECT_EQ(wl["status"]["requeueState"]["count"], 1);
    EXPECT_EQ(wl["status"]["requeueState"]["requeueAt"],
              api::meta::FormatRfc3339(clock_.Now() + absl::Seconds(10)));
  }
  EXPECT_EQ(Wl("b")["metadata"]["labels"]["job"], "x");
  EXPECT_THAT(std::vector<size_t>(faults_.batches.begin() + batches_before, faults_.batches.end()),
              Contains(3u));
  // Workload writes outside a batch: only b's, the test's own label and
  // b's eviction made again on the labelled version (the registry's retry
  // of a write that lost the race); a and c only in the batch.
  for (const std::string& key : faults_.single_keys) {
    if (key.find("/workloads/") == std::string::npos) continue;
    EXPECT_TRUE(key.ends_with(Key("b"))) << key << " written on its own";
  }
  EXPECT_THAT(Metrics(), HasSubstr("kueue_evicted_workloads_total{cluster_queue=\"cq\","
                                   "reason=\"PodsReadyTimeout\"} 3\n"));
}

// A PodsReady-timeout eviction whose write fails stays owed and is written
// once the store takes it, once (one requeue counted, one metric increment);
// one that no longer applies (PodsReady meanwhile) is not written at all.
TEST_F(StatusWritesTest, APodsReadyTimeoutWriteThatFailsIsRetriedOnce) {
  QueueingConfig cfg;
  cfg.wait_for_pods_ready.enable = true;
  cfg.wait_for_pods_ready.timeout = absl::Minutes(5);
  Queue("3", {"a", "b"});
  Start(cfg);
  ASSERT_EQ(AdmittedAmong({"a", "b"}), (std::vector<std::string>{"a", "b"}));
  Advance(absl::Minutes(5) - absl::Seconds(1));
  faults_.FailUpdates(Key("a"), absl::UnavailableError("disk gone"), TestStore::When::kBefore,
                      /*times=*/1000);
  // b's pods turn ready in the very cycle its timeout is due.
  faults_.before_update = [&, done = false](std::string_view key) mutable {
    if (done || !key.ends_with(Key("b"))) return;
    done = true;
    Json b = Wl("b");
    b["status"]["conditions"].push_back({{"type", "PodsReady"},
                                         {"status", "True"},
                                         {"reason", "PodsReady"},
                                         {"message", "All pods are ready"},
                                         {"lastTransitionTime",
                                          api::meta::FormatRfc3339(clock_.Now())}});
    ASSERT_TRUE(client_.UpdateStatus(Kind("workloads"), b).ok());
  };
  Advance(absl::Seconds(1));
  EXPECT_EQ(Cond(Wl("a"), "Evicted"), "") << "the write failed";
  EXPECT_EQ(Cond(Wl("b"), "Evicted"), "") << "PodsReady before the write";
  EXPECT_EQ(Cond(Wl("b"), "PodsReady"), "True/PodsReady");
  Advance(absl::Seconds(5));  // Retried, still failing.
  EXPECT_EQ(Cond(Wl("a"), "Evicted"), "");
  faults_.ClearKeyFaults();
  Advance(absl::Seconds(1));
  EXPECT_EQ(Cond(Wl("a"), "Evicted"), "True/PodsReadyTimeout");
  EXPECT_EQ(Wl("a")["status"]["requeueState"]["count"], 1);
  EXPECT_EQ(Cond(Wl("b"), "Evicted"), "");
  EXPECT_THAT(Metrics(), HasSubstr("kueue_evicted_workloads_total{cluster_queue=\"cq\","
                                   "reason=\"PodsReadyTimeout\"} 1\n"));
}

}  // namespace
}  // namespace batchd::controllers::queueing::testing
