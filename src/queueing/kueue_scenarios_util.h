// Test-only helpers for the Kueue-scenario tests (kueue_scenarios_*_test.cc):
// compact builders for multi-resource ClusterQueues and workloads, and a
// runner that loads a scenario into an AdmissionCore and summarizes one or
// more cycles. Scenarios are re-expressed from Kueue's own unit tests
// (scheduler, preemption, flavorassigner, fair sharing); each test names the
// Kueue case it mirrors. Not linked into the library.
//
// Thread-safety: none; test code only.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "queueing/admission.h"
#include "queueing/internal/test_util.h"
#include "queueing/types.h"

namespace batchd::queueing::kueue_scenarios {

using testing::Scenario;

inline Amount Cpu(double units) { return static_cast<Amount>(units * 1000); }
inline Amount Gi(int64_t n) { return n * (int64_t{1} << 30) * 1000; }

// One resource's quota inside a flavor; `borrow` / `lend` nullopt = no limit.
struct Q {
  std::string resource;
  Amount nominal = 0;
  std::optional<Amount> borrow = std::nullopt;
  std::optional<Amount> lend = std::nullopt;
};

inline FlavorQuotas FQ(std::string flavor, std::vector<Q> qs) {
  FlavorQuotas f;
  f.flavor = std::move(flavor);
  for (const Q& q : qs) f.resources[q.resource] = {q.nominal, q.borrow, q.lend};
  return f;
}

// A resource group covering every resource its flavors name.
inline ResourceGroup RG(std::vector<FlavorQuotas> flavors) {
  ResourceGroup g;
  std::set<std::string> covered;
  for (const FlavorQuotas& f : flavors) {
    for (const auto& [r, _] : f.resources) covered.insert(r);
  }
  g.covered_resources.assign(covered.begin(), covered.end());
  g.flavors = std::move(flavors);
  return g;
}

struct CqSpec {
  std::string name;
  std::string cohort;
  std::vector<ResourceGroup> groups;
  Preemption preemption = {};
  FlavorFungibility fungibility = {};
  QueueingStrategy strategy = QueueingStrategy::kBestEffortFIFO;
  double weight = 1;
};

inline ClusterQueue MakeCq(const CqSpec& s) {
  ClusterQueue cq;
  cq.name = s.name;
  cq.cohort = s.cohort;
  cq.resource_groups = s.groups;
  cq.preemption = s.preemption;
  cq.fungibility = s.fungibility;
  cq.strategy = s.strategy;
  cq.fair_weight = s.weight;
  return cq;
}

inline Preemption P(PreemptionPolicy within, PreemptionPolicy reclaim,
                    PreemptionPolicy borrow = PreemptionPolicy::kNever,
                    std::optional<int32_t> threshold = std::nullopt) {
  return {within, reclaim, borrow, threshold};
}

inline Cohort MakeCohortQ(std::string name, std::string parent, std::vector<ResourceGroup> g = {},
                          double weight = 1) {
  Cohort c;
  c.name = std::move(name);
  c.parent = std::move(parent);
  c.resource_groups = std::move(g);
  c.fair_weight = weight;
  return c;
}

// A single-pod-set workload "ns/<name>" (uid = name) in `cq`.
inline Workload Wl(std::string name, std::string cq, int32_t priority,
                   std::map<std::string, Amount> requests, int32_t count = 1,
                   int64_t created_s = 0) {
  Workload w;
  w.key = "ns/" + name;
  w.uid = name;
  w.namespace_ = "ns";
  w.local_queue = "lq";
  w.cluster_queue = std::move(cq);
  w.priority = priority;
  w.creation = w.queue_order_time = absl::FromUnixSeconds(created_s);
  PodSet ps;
  ps.count = count;
  ps.requests = std::move(requests);
  w.pod_sets.push_back(std::move(ps));
  return w;
}

// (resource, flavor, total) for a single-pod-set admission.
struct Use {
  std::string resource;
  std::string flavor;
  Amount total;
};

inline Admission Adm(std::string cq, std::vector<Use> uses, int32_t count = 1) {
  Admission a;
  a.cluster_queue = std::move(cq);
  PodSetAssignment ps;
  ps.name = "main";
  ps.count = count;
  for (const Use& u : uses) {
    ps.flavors[u.resource] = u.flavor;
    ps.resource_usage[u.resource] = u.total;
  }
  a.pod_sets.push_back(std::move(ps));
  return a;
}

// An admitted workload whose usage mirrors its single pod set's requests.
inline std::pair<Workload, Admission> Running(std::string name, std::string cq, int32_t priority,
                                              std::vector<Use> uses, int64_t created_s = 0) {
  std::map<std::string, Amount> req;
  for (const Use& u : uses) req[u.resource] = u.total;
  Workload w = Wl(std::move(name), cq, priority, req, 1, created_s);
  return {std::move(w), Adm(std::move(cq), std::move(uses))};
}

inline std::vector<ResourceFlavor> Flavors(std::vector<std::string> names) {
  std::vector<ResourceFlavor> out;
  for (auto& n : names) out.push_back(testing::Rf(std::move(n)));
  return out;
}

// "ns/key:Reason" for each preemption decision.
inline std::set<std::string> PreemptedWithReason(const std::vector<Decision>& ds) {
  std::set<std::string> out;
  for (const Decision& d : ds) {
    if (d.kind == Decision::Kind::kPreempt) {
      out.insert(d.key + ":" + PreemptionReasonName(d.preemption_reason));
    }
  }
  return out;
}

// Admitted key -> "resource=flavor,..." of every pod set, pod sets joined by ";".
inline std::map<std::string, std::string> AdmittedFlavors(const std::vector<Decision>& ds) {
  std::map<std::string, std::string> out;
  for (const Decision& d : ds) {
    if (d.kind != Decision::Kind::kAdmit) continue;
    std::string s;
    for (const PodSetAssignment& ps : d.admission.pod_sets) {
      if (!s.empty()) s += ";";
      std::string one;
      for (const auto& [r, f] : ps.flavors) one += (one.empty() ? "" : ",") + r + "=" + f;
      s += one;
    }
    out[d.key] = s;
  }
  return out;
}

// Finishes (removes) every preempted workload, as the controller would once
// the victims are gone.
inline void FinishPreempted(AdmissionCore& core, const std::vector<Decision>& ds) {
  for (const Decision& d : ds) {
    if (d.kind == Decision::Kind::kPreempt) core.Remove(d.key);
  }
}

// One preemption scenario, as Kueue's GetTargets tests have them: admitted
// workloads, one incoming workload that doesn't fit without preemption.
struct PreemptCase {
  std::string name;
  std::vector<std::pair<Workload, Admission>> admitted;  // in admission order (oldest first)
  Workload incoming;
  std::set<std::string> want_preempted;  // "ns/key:Reason"
  std::vector<ClusterQueue> cqs = {};    // empty = the runner's defaults
  std::vector<Cohort> cohorts = {};
  bool fair_sharing = false;
  std::vector<FairSharingStrategy> strategies = {};  // empty = Options' default (both)
};

// Runs one cycle per case: the victims (with reasons) must be exactly
// `want_preempted` and the incoming workload must not be admitted yet; once
// the victims are removed, the next cycle must admit it.
inline void RunPreemptCases(const std::vector<PreemptCase>& cases,
                            const std::vector<ClusterQueue>& default_cqs) {
  for (const PreemptCase& c : cases) {
    SCOPED_TRACE(c.name);
    Scenario s;
    s.flavors = Flavors({"default", "alpha", "beta"});
    s.cqs = c.cqs.empty() ? default_cqs : c.cqs;
    s.cohorts = c.cohorts;
    s.admitted = c.admitted;
    s.pending = {c.incoming};
    s.opts.fair_sharing = c.fair_sharing;
    if (!c.strategies.empty()) s.opts.fair_sharing_strategies = c.strategies;
    auto core = testing::Load(s);
    std::vector<Decision> ds = core->RunCycle(absl::FromUnixSeconds(100));
    EXPECT_EQ(PreemptedWithReason(ds), c.want_preempted);
    EXPECT_FALSE(core->IsAdmitted(c.incoming.key)) << "admitted without preemption";
    if (c.want_preempted.empty()) continue;
    FinishPreempted(*core, ds);
    core->RunCycle(absl::FromUnixSeconds(101));
    EXPECT_TRUE(core->IsAdmitted(c.incoming.key)) << "not admitted after its victims left";
    EXPECT_TRUE(core->CheckInvariants().ok());
  }
}

}  // namespace batchd::queueing::kueue_scenarios
