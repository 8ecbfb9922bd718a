// Randomized operations against AdmissionCore: after every cycle no
// ClusterQueue holds more than nominal + what borrowing allows and no cohort
// lends more than it has (Options::check_invariants aborts otherwise), and
// every admission decision matches the status the core reports.
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

}  // namespace
}  // namespace batchd::queueing
