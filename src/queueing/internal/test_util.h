// Test-only builders for the admission core's structs (not linked into the
// library). Amounts are given in whole units (cpu "1" = 1000 milli).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "queueing/admission.h"
#include "queueing/types.h"

namespace batchd::queueing::testing {

inline Amount U(int64_t units) { return units * 1000; }

class CqBuilder {
 public:
  explicit CqBuilder(std::string name) { cq_.name = std::move(name); }
  CqBuilder& Cohort(std::string c) { cq_.cohort = std::move(c); return *this; }
  // Adds a flavor with `cpu` nominal (and optional limits) to the first
  // resource group covering "cpu".
  CqBuilder& Flavor(std::string f, int64_t cpu, std::optional<int64_t> borrow = std::nullopt,
                    std::optional<int64_t> lend = std::nullopt) {
    return FlavorRes(std::move(f), {{"cpu", {U(cpu), Opt(borrow), Opt(lend)}}});
  }
  CqBuilder& FlavorRes(std::string f, std::map<std::string, ResourceQuota> res) {
    if (cq_.resource_groups.empty()) {
      ResourceGroup g;
      for (const auto& [r, _] : res) g.covered_resources.push_back(r);
      cq_.resource_groups.push_back(g);
    }
    cq_.resource_groups[0].flavors.push_back({std::move(f), std::move(res)});
    return *this;
  }
  CqBuilder& Strict() { cq_.strategy = QueueingStrategy::kStrictFIFO; return *this; }
  CqBuilder& Within(PreemptionPolicy p) { cq_.preemption.within_cluster_queue = p; return *this; }
  CqBuilder& Reclaim(PreemptionPolicy p) { cq_.preemption.reclaim_within_cohort = p; return *this; }
  CqBuilder& BorrowWithin(PreemptionPolicy p, std::optional<int32_t> threshold = std::nullopt) {
    cq_.preemption.borrow_within_cohort = p;
    cq_.preemption.max_priority_threshold = threshold;
    return *this;
  }
  CqBuilder& Fungibility(FlavorFungibility f) { cq_.fungibility = f; return *this; }
  CqBuilder& Stop(StopPolicy p) { cq_.stop_policy = p; return *this; }
  CqBuilder& NoNamespaces() { cq_.namespace_selector.reset(); return *this; }
  CqBuilder& Weight(double w) { cq_.fair_weight = w; return *this; }
  ClusterQueue Obj() const { return cq_; }

 private:
  static std::optional<Amount> Opt(std::optional<int64_t> v) {
    return v ? std::optional<Amount>(U(*v)) : std::nullopt;
  }
  ClusterQueue cq_;
};

class WlBuilder {
 public:
  WlBuilder(std::string name, std::string cq) {
    wl_.key = "ns/" + name;
    wl_.uid = name;
    wl_.namespace_ = "ns";
    wl_.local_queue = "lq";
    wl_.cluster_queue = std::move(cq);
    wl_.pod_sets.push_back(PodSet{});
  }
  WlBuilder& Cpu(int64_t cpu) { wl_.pod_sets.back().requests["cpu"] = U(cpu); return *this; }
  WlBuilder& Req(std::string r, Amount milli) {
    wl_.pod_sets.back().requests[r] = milli;
    return *this;
  }
  WlBuilder& Count(int32_t n, std::optional<int32_t> min = std::nullopt) {
    wl_.pod_sets.back().count = n;
    wl_.pod_sets.back().min_count = min;
    return *this;
  }
  WlBuilder& PodSetNamed(std::string name) {
    wl_.pod_sets.push_back(PodSet{});
    wl_.pod_sets.back().name = std::move(name);
    return *this;
  }
  WlBuilder& Priority(int32_t p) { wl_.priority = p; return *this; }
  // Creation / queue order time in seconds after the epoch.
  WlBuilder& At(int64_t s) {
    wl_.creation = wl_.queue_order_time = absl::FromUnixSeconds(s);
    return *this;
  }
  WlBuilder& Selector(std::string k, std::string v) {
    wl_.pod_sets.back().node_selector[k] = v;
    return *this;
  }
  WlBuilder& Tolerate(Toleration t) { wl_.pod_sets.back().tolerations.push_back(t); return *this; }
  WlBuilder& Inactive() { wl_.active = false; return *this; }
  WlBuilder& RequeueAt(int64_t s) { wl_.requeue_at = absl::FromUnixSeconds(s); return *this; }
  WlBuilder& NsLabel(std::string k, std::string v) { wl_.namespace_labels[k] = v; return *this; }
  WlBuilder& Lq(std::string lq) { wl_.local_queue = std::move(lq); return *this; }
  Workload Obj() const { return wl_; }

 private:
  Workload wl_;
};

inline ResourceFlavor Rf(std::string name, std::map<std::string, std::string> labels = {}) {
  ResourceFlavor f;
  f.name = std::move(name);
  f.node_labels = std::move(labels);
  return f;
}

// Single-podset admission on `flavor` for cpu.
inline Admission AdmitOn(const std::string& cq, const std::string& flavor, int64_t cpu) {
  Admission a;
  a.cluster_queue = cq;
  a.pod_sets.push_back({"main", {{"cpu", flavor}}, {{"cpu", U(cpu)}}, 1});
  return a;
}

struct Summary {
  std::vector<std::string> admitted, preempted;
  std::map<std::string, std::string> pending;  // key -> reason
  std::map<std::string, std::string> messages;
  std::map<std::string, std::string> flavor;  // admitted key -> cpu flavor
  std::map<std::string, std::string> preempt_reason;
  std::map<std::string, std::string> preempt_message;
  std::map<std::string, int32_t> count;       // admitted key -> first pod set count
};

inline Summary Summarize(const std::vector<Decision>& ds) {
  Summary s;
  for (const Decision& d : ds) {
    switch (d.kind) {
      case Decision::Kind::kAdmit:
        s.admitted.push_back(d.key);
        if (!d.admission.pod_sets.empty()) {
          auto f = d.admission.pod_sets[0].flavors.find("cpu");
          if (f != d.admission.pod_sets[0].flavors.end()) s.flavor[d.key] = f->second;
          s.count[d.key] = d.admission.pod_sets[0].count;
        }
        break;
      case Decision::Kind::kPreempt:
        s.preempted.push_back(d.key);
        s.preempt_reason[d.key] = PreemptionReasonName(d.preemption_reason);
        s.preempt_message[d.key] = d.message;
        break;
      case Decision::Kind::kPending:
        s.pending[d.key] = PendingReasonName(d.pending_reason);
        s.messages[d.key] = d.message;
        break;
    }
  }
  return s;
}

}  // namespace batchd::queueing::testing

namespace batchd::queueing::testing {

struct Scenario {
  std::vector<ResourceFlavor> flavors = {Rf("default")};
  std::vector<Cohort> cohorts;
  std::vector<ClusterQueue> cqs;
  std::vector<std::pair<Workload, Admission>> admitted;
  std::vector<Workload> pending;
  Options opts;
};

inline std::unique_ptr<AdmissionCore> Load(const Scenario& s) {
  Options o = s.opts;
  o.check_invariants = true;
  auto core = std::make_unique<AdmissionCore>(o);
  for (const auto& f : s.flavors) core->UpsertResourceFlavor(f);
  for (const auto& c : s.cohorts) core->UpsertCohort(c);
  for (const auto& cq : s.cqs) core->UpsertClusterQueue(cq);
  for (const auto& [wl, a] : s.admitted) core->SetAdmitted(wl, a);
  for (const auto& wl : s.pending) core->UpsertPending(wl);
  return core;
}

inline Cohort MakeCohort(std::string name, std::string parent = "") {
  Cohort c;
  c.name = std::move(name);
  c.parent = std::move(parent);
  return c;
}

}  // namespace batchd::queueing::testing
