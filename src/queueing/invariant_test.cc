// Randomized operations against AdmissionCore: after every cycle no
// ClusterQueue holds more than nominal + what borrowing allows and no cohort
// lends more than it has (Options::check_invariants aborts otherwise), and
// every admission decision matches the status the core reports. And the
// inadmissible groups across priorities (Options::group_across_priorities)
// leave every admission and preemption, and their order, as they were.
#include <algorithm>
#include <map>
#include <random>

#include "gtest/gtest.h"
#include "queueing/admission.h"
#include "queueing/internal/test_util.h"

namespace batchd::queueing {
namespace {

using namespace batchd::queueing::testing;  // NOLINT

TEST(InvariantTest, RandomWorkloadsNeverExceedQuota) {
  for (bool fair : {false, true}) {
    SCOPED_TRACE(fair ? "fair sharing" : "classic");
    std::mt19937 rng(fair ? 7 : 3);
    Scenario s;
    s.opts.fair_sharing = fair;
    s.flavors = {Rf("one"), Rf("two")};
    s.cohorts = {MakeCohort("root"), MakeCohort("left", "root"), MakeCohort("right", "root")};
    s.cohorts[1].resource_groups = {{{"cpu"}, {{"one", {{"cpu", {U(2), U(1)}}}}}}};
    const char* cohort_of[] = {"left", "left", "right", "right", ""};
    for (int i = 0; i < 5; ++i) {
      CqBuilder b("cq" + std::to_string(i));
      if (*cohort_of[i]) b.Cohort(cohort_of[i]);
      b.Flavor("one", 3 + i, i % 2 ? std::optional<int64_t>(2) : std::nullopt,
               i == 2 ? std::optional<int64_t>(1) : std::nullopt);
      if (!*cohort_of[i]) b = CqBuilder("cq4").Flavor("one", 3);
      b.Flavor("two", 2);
      b.Within(PreemptionPolicy::kLowerPriority).Reclaim(PreemptionPolicy::kAny);
      if (i == 1) b.Strict();
      s.cqs.push_back(b.Obj());
    }
    auto core = Load(s);
    std::vector<std::string> admitted;
    int next = 0, preempted = 0;
    for (int step = 0; step < 300; ++step) {
      int op = rng() % 10;
      if (op < 5) {
        Workload w = WlBuilder("w" + std::to_string(next++), "cq" + std::to_string(rng() % 5))
                         .Cpu(1 + rng() % 3).Priority(rng() % 3).At(step).Obj();
        if (rng() % 4 == 0) w.pod_sets[0].count = 2, w.pod_sets[0].min_count = 1;
        core->UpsertPending(w);
      } else if (op < 7 && !admitted.empty()) {
        size_t i = rng() % admitted.size();
        core->Remove(admitted[i]);
        admitted.erase(admitted.begin() + i);
      } else {
        for (const Decision& d : core->RunCycle(absl::FromUnixSeconds(step))) {
          if (d.kind == Decision::Kind::kAdmit) {
            admitted.push_back(d.key);
            EXPECT_TRUE(core->IsAdmitted(d.key));
          }
          if (d.kind == Decision::Kind::kPreempt) {
            // The caller evicts: the victim becomes pending again.
            auto it = std::find(admitted.begin(), admitted.end(), d.key);
            ASSERT_NE(it, admitted.end());
            admitted.erase(it);
            core->Remove(d.key);
            ++preempted;
          }
        }
      }
      ASSERT_TRUE(core->CheckInvariants().ok()) << core->CheckInvariants();
    }
    EXPECT_EQ(core->AdmittedCount(), admitted.size());
    EXPECT_GT(admitted.size(), 5u);
    EXPECT_GT(preempted, 0);
  }
}

// The same random operations against two cores, one grouping inadmissible
// workloads across priorities and one per priority (each workload its own
// priority, so one group each there): every cycle's admissions and
// preemptions are the same decisions in the same order. Preemption policies,
// cohorts, strategies and fair sharing vary by seed; a few request shapes
// make large groups.
TEST(InvariantTest, GroupingAcrossPrioritiesKeepsDecisionsAndOrder) {
  int64_t admissions = 0, preemptions = 0, seeds_with_preemption = 0;
  uint64_t evaluated_grouped = 0, evaluated_per_priority = 0;

  for (uint32_t seed = 1; seed <= 60; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    std::mt19937 rng(seed);
    Scenario s;
    s.opts.fair_sharing = seed % 3 == 0;
    s.flavors = {Rf("one"), Rf("two")};
    s.cohorts = {MakeCohort("root"), MakeCohort("left", "root")};
    const PreemptionPolicy policies[] = {PreemptionPolicy::kNever, PreemptionPolicy::kLowerPriority,
                                         PreemptionPolicy::kLowerOrNewerEqualPriority,
                                         PreemptionPolicy::kAny};
    const int cqs = 2 + static_cast<int>(rng() % 3);
    std::map<std::string, std::string> tree_of;  // CQ -> its quota tree
    for (int i = 0; i < cqs; ++i) {
      const std::string name = "cq" + std::to_string(i);
      CqBuilder b(name);
      tree_of[name] = name;
      if (rng() % 2 != 0) b.Cohort(rng() % 2 ? "left" : "root"), tree_of[name] = "root";
      b.Flavor("one", 2 + rng() % 4, rng() % 2 ? std::optional<int64_t>(rng() % 3) : std::nullopt);
      if (rng() % 2) b.Flavor("two", 1 + rng() % 3);
      b.Within(policies[rng() % 3]).Reclaim(policies[rng() % 4]);
      if (rng() % 4 == 0) b.BorrowWithin(PreemptionPolicy::kLowerPriority, 5);
      if (rng() % 5 == 0) b.Strict();
      s.cqs.push_back(b.Obj());
    }
    Scenario grouped = s, per_priority = s;
    grouped.opts.group_across_priorities = true;
    per_priority.opts.group_across_priorities = false;
    auto a = Load(grouped), b = Load(per_priority);
    std::vector<std::string> admitted, pending;
    std::map<std::string, Workload> created;
    int next = 0, preempted_here = 0;
    for (int step = 0; step < 400; ++step) {
      const int op = static_cast<int>(rng() % 12);
      if (op < 5) {
        // Distinct priorities mostly (a tie now and then), 3 shapes.
        Workload w = WlBuilder("w" + std::to_string(next++), "cq" + std::to_string(rng() % cqs))
                         .Cpu(1 + rng() % 3)
                         .Priority(static_cast<int32_t>(rng() % 1000))
                         .At(step)
                         .Obj();
        a->UpsertPending(w);
        b->UpsertPending(w);
        pending.push_back(w.key);
        created[w.key] = w;
      } else if (op < 8 && !admitted.empty()) {
        const size_t i = rng() % admitted.size();  // finishes
        a->Remove(admitted[i]);
        b->Remove(admitted[i]);
        admitted.erase(admitted.begin() + static_cast<std::ptrdiff_t>(i));
      } else if (op == 8 && !pending.empty()) {
        const size_t i = rng() % pending.size();  // deleted while pending
        a->Remove(pending[i]);
        b->Remove(pending[i]);
        pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        // Per quota tree (a cohort tree, or a ClusterQueue without one): the
        // trees share nothing here (no topology), so only the order within
        // one is meaningful; the core's list interleaves trees by round.
        auto decisions = [&](const std::vector<Decision>& ds) {
          std::map<std::string, std::vector<std::string>> out;
          for (const Decision& d : ds) {
            const std::string& cq = created[d.key].cluster_queue;
            const std::string& tree = tree_of[cq];
            if (d.kind == Decision::Kind::kAdmit) out[tree].push_back("admit " + d.key);
            if (d.kind == Decision::Kind::kPreempt) out[tree].push_back("preempt " + d.key);
          }
          return out;
        };
        const std::vector<Decision> da = a->RunCycle(absl::FromUnixSeconds(step));
        const std::vector<Decision> db = b->RunCycle(absl::FromUnixSeconds(step));
        ASSERT_EQ(decisions(da), decisions(db)) << "step " << step;

        for (const Decision& d : da) {
          if (d.kind == Decision::Kind::kAdmit) {
            admitted.push_back(d.key);
            pending.erase(std::find(pending.begin(), pending.end(), d.key));
            ++admissions;
          } else if (d.kind == Decision::Kind::kPreempt) {
            // The caller evicts: the victim is pending again (every other
            // time; or it is gone).
            admitted.erase(std::find(admitted.begin(), admitted.end(), d.key));
            if (preemptions % 2 == 0) {
              a->UpsertPending(created[d.key]);
              b->UpsertPending(created[d.key]);
              pending.push_back(d.key);
            } else {
              a->Remove(d.key);
              b->Remove(d.key);
            }
            ++preemptions;
            ++preempted_here;
          }
        }
      }
    }
    ASSERT_EQ(a->AdmittedCount(), b->AdmittedCount());
    ASSERT_EQ(a->PendingCount(), b->PendingCount());
    if (preempted_here > 0) ++seeds_with_preemption;
    evaluated_grouped += a->HeadsEvaluated();
    evaluated_per_priority += b->HeadsEvaluated();
  }
  // The comparison covered admissions and preemptions, not just idle queues.
  EXPECT_GT(admissions, 1000);
  EXPECT_GT(preemptions, 50);
  EXPECT_GT(seeds_with_preemption, 10);
  // And the groups did save evaluations (here mostly cohorts and preemption
  // candidates, where they don't apply; cycle_test shows the flat case).
  EXPECT_LT(evaluated_grouped * 21 / 20, evaluated_per_priority)
      << evaluated_grouped << " vs " << evaluated_per_priority;
}

}  // namespace
}  // namespace batchd::queueing
