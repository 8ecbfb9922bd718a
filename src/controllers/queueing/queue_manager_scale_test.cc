// The queue manager's work follows what changed (issue #14): its own status
// writes convert nothing, a namespace / ClusterQueue change re-converts only
// the workloads it can affect, a quiet cycle recomputes no queue status; and
// a randomized run that deletes and re-creates ClusterQueues and LocalQueues,
// changes quotas and namespace labels mid-run, checked after every step
// against counts recomputed from the store.
#include <map>
#include <random>
#include <set>

#include "absl/strings/str_cat.h"

#include "controllers/queueing/queue_manager_test_env.h"

namespace batchd::controllers::queueing {
namespace {

using api::Json;
using testing::QueueManagerTest;
using ::testing::HasSubstr;

class QueueManagerScaleTest : public QueueManagerTest {
 protected:
  QueueManager::Stats Stats() { return stack_->qm->stats(); }
  void Annotate(const std::string& name, const std::string& value) {
    Patch("workloads", "ns", name, {{"metadata", {{"annotations", {{"note", value}}}}}});
    Settle();
  }
  void Labels(const std::string& ns, Json labels) {
    auto r = client_.MergePatch(client_.Kind("", "v1", "namespaces"), "", ns,
                                {{"metadata", {{"labels", labels}}}});
    ASSERT_TRUE(r.ok()) << r.status();
    Settle();
  }
  // A workload in namespace `ns` (the fixture's Workload() uses "ns").
  void WorkloadIn(const std::string& ns, const std::string& name, const std::string& lq,
                  const std::string& cpu) {
    Json container = {{"name", "c"}, {"image", "busybox"},
                      {"resources", {{"requests", {{"cpu", cpu}}}}}};
    Create("workloads", ns,
           {{"metadata", {{"name", name}}},
            {"spec",
             {{"queueName", lq},
              {"podSets",
               {{{"name", "main"},
                 {"count", 1},
                 {"template", {{"spec", {{"containers", {container}}}}}}}}}}}});
  }
};

TEST_F(QueueManagerScaleTest, OwnPendingStatusWritesConvertNothingAndQuietCyclesWriteNothing) {
  Start();
  Basic();
  for (int i = 0; i < 6; ++i) {
    Workload("w" + std::to_string(i), "lq", "1");
    clock_.Advance(absl::Seconds(1));
  }
  Settle();
  // 3 admitted, 3 pending with a QuotaReserved=False message the manager wrote.
  EXPECT_EQ(Cond(Wl("w5"), "QuotaReserved"), "False/Pending");
  QueueManager::Stats before = Stats();
  // 6 workloads: each converted once on creation and once more on admission,
  // never again for the manager's own pending-status write.
  EXPECT_LE(before.conversions, 9);
  Annotate("w5", "x");  // Nothing the core reads.
  QueueManager::Stats after = Stats();
  EXPECT_EQ(after.conversions, before.conversions);
  EXPECT_GT(after.cycles, before.cycles);
  // Only w5's ClusterQueue and LocalQueue are looked at, and neither changed.
  EXPECT_LE(after.queue_statuses - before.queue_statuses, 2);
  Json w5 = Wl("w5");
  EXPECT_EQ(w5["metadata"]["annotations"]["note"], "x");
  EXPECT_EQ(Cond(w5, "QuotaReserved"), "False/Pending");
}

TEST_F(QueueManagerScaleTest, NamespaceLabelChangeReconvertsOnlyThatNamespace) {
  Start();
  Namespace("ns");
  Namespace("other");
  Flavor("default");
  // cq admits only namespaces labelled team=a.
  ClusterQueue("cq", "10",
               {{"namespaceSelector", {{"matchLabels", {{"team", "a"}}}}}});
  LocalQueue("ns", "lq", "cq");
  LocalQueue("other", "lq", "cq");
  for (int i = 0; i < 4; ++i) WorkloadIn("other", "o" + std::to_string(i), "lq", "1");
  Workload("w", "lq", "1");
  Settle();
  EXPECT_FALSE(Admitted("w"));
  EXPECT_THAT(CondMessage(Wl("w"), "QuotaReserved"), HasSubstr("namespace"));
  QueueManager::Stats before = Stats();
  Labels("ns", {{"team", "a"}});
  EXPECT_TRUE(Admitted("w"));
  // w re-converted with its namespace's labels (and once more as admitted);
  // the 4 workloads of `other` untouched.
  EXPECT_LE(Stats().conversions - before.conversions, 2);
  EXPECT_FALSE(Get("workloads", "other", "o0")["status"].contains("admission"));
}

TEST_F(QueueManagerScaleTest, DeletedAndRecreatedClusterQueue) {
  Start();
  Basic();
  Namespace("x");
  ClusterQueue("cq2", "5");
  LocalQueue("x", "lq2", "cq2");
  for (int i = 0; i < 3; ++i) WorkloadIn("x", "x" + std::to_string(i), "lq2", "1");
  Workload("a", "lq", "4");  // Never fits cq (3 cpu).
  Settle();
  EXPECT_FALSE(Admitted("a"));
  ASSERT_TRUE(client_.Delete(Kind("clusterqueues"), "", "cq").ok());
  Settle();
  EXPECT_EQ(Cond(Wl("a"), "QuotaReserved"), "False/Inadmissible");
  EXPECT_EQ(CondMessage(Wl("a"), "QuotaReserved"), "ClusterQueue cq doesn't exist");
  EXPECT_EQ(Get("localqueues", "ns", "lq")["status"]["pendingWorkloads"], 1);
  QueueManager::Stats before = Stats();
  ClusterQueue("cq", "8");  // Back, bigger.
  Settle();
  EXPECT_TRUE(Admitted("a"));
  // Only `a` (and nothing of cq2) was converted again.
  EXPECT_LE(Stats().conversions - before.conversions, 2);
  Json cq = Get("clusterqueues", "", "cq");
  EXPECT_EQ(cq["status"]["admittedWorkloads"], 1);
  EXPECT_EQ(cq["status"]["pendingWorkloads"], 0);
  EXPECT_EQ(Get("clusterqueues", "", "cq2")["status"]["admittedWorkloads"], 3);
}

TEST_F(QueueManagerScaleTest, PendingWorkloadsSummaryRanksAsTheQueueDoes) {
  Start();
  Basic();
  Namespace("x");
  LocalQueue("x", "lq", "cq");
  Workload("run", "lq", "3");  // Takes the whole quota.
  Settle();
  clock_.Advance(absl::Seconds(1));
  Workload("low-old", "lq", "1", /*priority=*/1);
  clock_.Advance(absl::Seconds(1));
  WorkloadIn("x", "x-mid", "lq", "1");  // priority 0
  clock_.Advance(absl::Seconds(1));
  Workload("high", "lq", "1", /*priority=*/5);
  clock_.Advance(absl::Seconds(1));
  Workload("low-new", "lq", "1", /*priority=*/1);
  Settle();
  ASSERT_TRUE(Admitted("run"));
  auto cq = stack_->qm->PendingWorkloadsSummary("visibility.kueue.x-k8s.io/v1beta2", "", "cq", 0,
                                                1000);
  ASSERT_TRUE(cq.ok()) << cq.status();
  EXPECT_EQ((*cq)["kind"], "PendingWorkloadsSummary");
  EXPECT_EQ((*cq)["apiVersion"], "visibility.kueue.x-k8s.io/v1beta2");
  std::vector<std::string> got;
  for (const Json& i : (*cq)["items"]) {
    got.push_back(absl::StrCat(i["metadata"]["namespace"].get<std::string>(), "/",
                               i["metadata"]["name"].get<std::string>(), ":",
                               i["priority"].get<int>(), ":", i["positionInClusterQueue"].get<int>(),
                               ":", i["positionInLocalQueue"].get<int>()));
    EXPECT_EQ(i["localQueueName"], "lq");
    EXPECT_TRUE(i["metadata"].contains("creationTimestamp"));
  }
  EXPECT_THAT(got, ::testing::ElementsAre("ns/high:5:0:0", "ns/low-old:1:1:1", "ns/low-new:1:2:2",
                                          "x/x-mid:0:3:0"));
  // The LocalQueue x/lq: its one workload, still ranked in the ClusterQueue.
  auto lq = stack_->qm->PendingWorkloadsSummary("v", "x", "lq", 0, 1000);
  ASSERT_TRUE(lq.ok());
  ASSERT_EQ((*lq)["items"].size(), 1u);
  EXPECT_EQ((*lq)["items"][0]["positionInClusterQueue"], 3);
  EXPECT_EQ((*lq)["items"][0]["positionInLocalQueue"], 0);
  // limit / offset.
  auto page = stack_->qm->PendingWorkloadsSummary("v", "", "cq", 1, 2);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ((*page)["items"].size(), 2u);
  EXPECT_EQ((*page)["items"][0]["positionInClusterQueue"], 1);
  EXPECT_EQ((*page)["items"][1]["positionInClusterQueue"], 2);
  // Missing queues.
  EXPECT_TRUE(absl::IsNotFound(stack_->qm->PendingWorkloadsSummary("v", "", "nope", 0, 10).status()));
  EXPECT_TRUE(
      absl::IsNotFound(stack_->qm->PendingWorkloadsSummary("v", "ns", "nope", 0, 10).status()));
}

// Many seeds, thousands of steps: after every step the queue statuses the
// manager keeps incrementally equal counts recomputed from the store, and no
// ClusterQueue's admitted usage exceeds its quota unless that quota was
// lowered (admitted workloads keep running, as in Kueue).
class QueueManagerRandomTest : public QueueManagerScaleTest,
                               public ::testing::WithParamInterface<int> {};

TEST_P(QueueManagerRandomTest, CountsAndQuotaHoldUnderConfigChurn) {
  std::mt19937 rng(GetParam());
  auto pick = [&rng](int n) { return static_cast<int>(rng() % n); };
  Start();
  Flavor("default");
  const std::vector<std::string> nss = {"ns", "team"};
  for (const auto& n : nss) Namespace(n);
  constexpr int kCqs = 3;
  std::map<std::string, int> quota;        // live ClusterQueues -> cpu
  std::map<std::string, bool> lowered;     // quota lowered (or re-created) while in use
  auto cq_name = [](int i) { return "cq" + std::to_string(i); };
  auto make_cq = [&](int i, int cpu) {
    Json extra = Json::object();
    if (i == 2) extra = {{"namespaceSelector", {{"matchLabels", {{"team", "a"}}}}}};
    ClusterQueue(cq_name(i), std::to_string(cpu), extra);
    quota[cq_name(i)] = cpu;
  };
  for (int i = 0; i < kCqs; ++i) make_cq(i, 4);
  std::set<std::string> lqs;  // "ns/lq<i>" -> points at cq<i>
  for (const auto& n : nss) {
    for (int i = 0; i < kCqs; ++i) {
      LocalQueue(n, "lq" + std::to_string(i), cq_name(i));
      lqs.insert(n + "/lq" + std::to_string(i));
    }
  }
  int next = 0;
  const int kSteps = 150;
  for (int step = 0; step < kSteps; ++step) {
    int op = pick(100);
    const std::string ns = nss[pick(2)];
    if (op < 40) {  // A new workload (sometimes naming a missing LocalQueue).
      WorkloadIn(ns, "w" + std::to_string(next++), "lq" + std::to_string(pick(kCqs + 1)),
                 std::to_string(1 + pick(3)));
    } else if (op < 60) {  // One finishes (or is deleted).
      auto list = client_.List(Kind("workloads"), ns);
      ASSERT_TRUE(list.ok());
      if (!list->items.empty()) {
        const Json& w = list->items[pick(static_cast<int>(list->items.size()))];
        std::string name = w["metadata"]["name"];
        if (pick(2) == 0) {
          ASSERT_TRUE(client_.Delete(Kind("workloads"), ns, name).ok());
        } else {
          Patch("workloads", ns, name,
                {{"status", {{"conditions", Json::array({{{"type", "Finished"},
                                                          {"status", "True"},
                                                          {"reason", "Succeeded"},
                                                          {"message", "done"},
                                                          {"lastTransitionTime",
                                                           api::meta::FormatRfc3339(
                                                               clock_.Now())}}})}}}},
                true);
        }
      }
    } else if (op < 72) {  // A quota change.
      int i = pick(kCqs);
      if (quota.contains(cq_name(i))) {
        int cpu = pick(7);
        if (cpu < quota[cq_name(i)]) lowered[cq_name(i)] = true;
        Json cq = Get("clusterqueues", "", cq_name(i));
        cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] =
            std::to_string(cpu);
        ASSERT_TRUE(client_.Update(Kind("clusterqueues"), cq).ok());
        quota[cq_name(i)] = cpu;
      }
    } else if (op < 82) {  // A ClusterQueue deleted, or re-created.
      int i = pick(kCqs);
      if (quota.contains(cq_name(i))) {
        ASSERT_TRUE(client_.Delete(Kind("clusterqueues"), "", cq_name(i)).ok());
        quota.erase(cq_name(i));
      } else {
        make_cq(i, 1 + pick(6));
        lowered[cq_name(i)] = true;  // Its old admitted workloads count again.
      }
    } else if (op < 90) {  // A LocalQueue deleted, or re-created.
      int i = pick(kCqs);
      std::string key = ns + "/lq" + std::to_string(i);
      if (lqs.contains(key)) {
        ASSERT_TRUE(client_.Delete(Kind("localqueues"), ns, "lq" + std::to_string(i)).ok());
        lqs.erase(key);
      } else {
        LocalQueue(ns, "lq" + std::to_string(i), cq_name(i));
        lqs.insert(key);
      }
    } else {  // A namespace label flips (cq2 admits only team=a).
      auto r = client_.MergePatch(client_.Kind("", "v1", "namespaces"), "", ns,
                                  {{"metadata", {{"labels", {{"team", pick(2) ? "a" : "b"}}}}}});
      ASSERT_TRUE(r.ok());
    }
    clock_.Advance(absl::Seconds(1));
    Settle();
    if (HasFatalFailure()) return;

    // Recompute from the store.
    std::map<std::string, int64_t> cq_pending, cq_admitted, cq_usage, lq_pending, lq_admitted;
    for (const auto& n : nss) {
      auto list = client_.List(Kind("workloads"), n);
      ASSERT_TRUE(list.ok());
      for (const Json& w : list->items) {
        if (Cond(w, "Finished") == "True/Succeeded") continue;
        const std::string lq = w["spec"]["queueName"];
        const std::string lq_key = n + "/" + lq;
        if (w["status"].contains("admission")) {
          std::string cq = w["status"]["admission"]["clusterQueue"];
          ++cq_admitted[cq];
          ++lq_admitted[lq_key];
          std::string cpu = w["status"]["admission"]["podSetAssignments"][0]["resourceUsage"]["cpu"];
          cq_usage[cq] += std::stoll(cpu);
          continue;
        }
        ++lq_pending[lq_key];
        if (lqs.contains(lq_key)) {
          std::string cq = cq_name(lq.back() - '0');
          if (quota.contains(cq)) ++cq_pending[cq];
        }
      }
    }
    for (const auto& [cq, cpu] : quota) {
      Json st = Get("clusterqueues", "", cq)["status"];
      SCOPED_TRACE(absl::StrCat("seed ", GetParam(), " step ", step, " ", cq, " ", st.dump()));
      ASSERT_EQ(st.value("pendingWorkloads", -1), cq_pending[cq]);
      ASSERT_EQ(st.value("admittedWorkloads", -1), cq_admitted[cq]);
      std::string total = st["flavorsReservation"][0]["resources"][0]["total"];
      ASSERT_EQ(std::stoll(total), cq_usage[cq]);
      if (!lowered[cq]) {
        ASSERT_LE(cq_usage[cq], cpu);
      }
      if (cq_usage[cq] <= cpu) lowered[cq] = false;  // Back within quota: checked again.
    }
    for (const std::string& key : lqs) {
      size_t slash = key.find('/');
      Json st = Get("localqueues", key.substr(0, slash), key.substr(slash + 1))["status"];
      SCOPED_TRACE(absl::StrCat("seed ", GetParam(), " step ", step, " ", key, " ", st.dump()));
      ASSERT_EQ(st.value("pendingWorkloads", -1), lq_pending[key]);
      ASSERT_EQ(st.value("admittedWorkloads", -1), lq_admitted[key]);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, QueueManagerRandomTest, ::testing::Range(1, 21));

}  // namespace
}  // namespace batchd::controllers::queueing
