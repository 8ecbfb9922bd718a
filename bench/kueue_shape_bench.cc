// Kueue's scheduler performance shapes (reference §4.1) through the
// admission core alone (src/queueing, no API server, no pods), on virtual
// time: each ClusterQueue gets Kueue's workload mix, generated as Kueue's
// runner does (each class at its own interval, concurrently), every admitted
// workload finishes `runtime` after admission, and a preempted one is
// requeued at once. The core runs a cycle after every batch of events at
// the same virtual instant. Reported: the host CPU the core took, the
// virtual makespan, admissions, preemptions, cycles, and the mean virtual
// time to admission per class (Kueue's checker metric).
//
//   kueue_shape_bench [large-scale|baseline]
//
// large-scale: 10 cohorts x 100 ClusterQueues (1,000), per CQ 35 small
// (1 cpu, 150 ms, every 60 ms), 11 medium (5 cpu, 350 ms, every 300 ms),
// 4 large (20 cpu, 700 ms, every 700 ms) = 50,000 workloads.
// baseline: 5 cohorts x 6 CQs (30), per CQ 350 small (1 cpu, 200 ms, every
// 100 ms), 100 medium (5 cpu, 500 ms, every 500 ms), 50 large (20 cpu,
// 1000 ms, every 1200 ms) = 15,000 workloads.
// Both: nominal 20 cpu, borrowingLimit 100, withinClusterQueue LowerPriority,
// reclaimWithinCohort Any; priorities 50 / 100 / 200.
#include <sys/resource.h>

#include <cstdio>
#include <map>
#include <queue>
#include <string>
#include <tuple>
#include <vector>

#include "absl/time/clock.h"
#include "queueing/admission.h"

namespace {

namespace q = batchd::queueing;

struct Class {
  const char* name;
  int count;        // per ClusterQueue
  int cpu;          // cores
  int runtime_ms;
  int interval_ms;  // between creations
  int priority;
};

struct Shape {
  int cohorts, cqs_per_cohort;
  std::vector<Class> classes;
};

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec +
         u.ru_stime.tv_usec / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string which = argc > 1 ? argv[1] : "large-scale";
  Shape shape;
  if (which == "baseline") {
    shape = {5, 6, {{"small", 350, 1, 200, 100, 50}, {"medium", 100, 5, 500, 500, 100},
                    {"large", 50, 20, 1000, 1200, 200}}};
  } else if (which == "large-scale") {
    shape = {10, 100, {{"small", 35, 1, 150, 60, 50}, {"medium", 11, 5, 350, 300, 100},
                       {"large", 4, 20, 700, 700, 200}}};
  } else {
    std::fprintf(stderr, "usage: kueue_shape_bench [large-scale|baseline]\n");
    return 2;
  }
  q::Options opts;
  opts.check_invariants = false;
  q::AdmissionCore core(opts);
  core.UpsertResourceFlavor({"default", {}, {}, {}});
  const int n_cqs = shape.cohorts * shape.cqs_per_cohort;
  for (int i = 0; i < n_cqs; ++i) {
    q::ClusterQueue cq;
    cq.name = "cq-" + std::to_string(i);
    cq.cohort = "cohort-" + std::to_string(i % shape.cohorts);
    q::ResourceGroup g;
    g.covered_resources = {"cpu"};
    g.flavors.push_back({"default", {{"cpu", {20 * 1000, 100 * 1000, std::nullopt}}}});
    cq.resource_groups.push_back(std::move(g));
    cq.preemption.within_cluster_queue = q::PreemptionPolicy::kLowerPriority;
    cq.preemption.reclaim_within_cohort = q::PreemptionPolicy::kAny;
    core.UpsertClusterQueue(std::move(cq));
  }
  // Events in virtual milliseconds: (time, kind 0 = arrival / 1 = finish, workload index).
  struct Wl {
    q::Workload w;
    int cls;
    int64_t created_ms;
    uint64_t admission_seq = 0;  // bumps on every admission (a finish of an old one is stale)
  };
  std::vector<Wl> wls;
  using Event = std::tuple<int64_t, int, size_t, uint64_t>;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  for (int c = 0; c < n_cqs; ++c) {
    for (size_t k = 0; k < shape.classes.size(); ++k) {
      const Class& cl = shape.classes[k];
      for (int i = 0; i < cl.count; ++i) {
        Wl x;
        x.cls = static_cast<int>(k);
        x.created_ms = static_cast<int64_t>(i) * cl.interval_ms;
        q::Workload& w = x.w;
        w.namespace_ = "ns-" + std::to_string(c);
        w.key = w.namespace_ + "/" + cl.name + "-" + std::to_string(i);
        w.uid = w.key;
        w.local_queue = "lq";
        w.cluster_queue = "cq-" + std::to_string(c);
        w.priority = cl.priority;
        w.creation = w.queue_order_time = absl::UnixEpoch() + absl::Milliseconds(x.created_ms);
        q::PodSet ps;
        ps.requests = {{"cpu", cl.cpu * 1000}};
        w.pod_sets.push_back(std::move(ps));
        events.emplace(x.created_ms, 0, wls.size(), 0);
        wls.push_back(std::move(x));
      }
    }
  }
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < wls.size(); ++i) index[wls[i].w.key] = i;
  std::vector<double> wait_sum(shape.classes.size(), 0);
  std::vector<int64_t> admitted_n(shape.classes.size(), 0);
  int64_t admissions = 0, preemptions = 0, cycles = 0, finished = 0, now_ms = 0;
  const double cpu0 = CpuSeconds();
  const absl::Time wall0 = absl::Now();
  while (!events.empty()) {
    now_ms = std::get<0>(events.top());
    while (!events.empty() && std::get<0>(events.top()) == now_ms) {
      auto [t, kind, i, seq] = events.top();
      events.pop();
      if (kind == 0) {
        core.UpsertPending(wls[i].w);
      } else if (seq == wls[i].admission_seq && core.IsAdmitted(wls[i].w.key)) {
        core.Remove(wls[i].w.key);
        ++finished;
      }
    }
    const absl::Time now = absl::UnixEpoch() + absl::Milliseconds(now_ms);
    for (const q::Decision& d : core.RunCycle(now)) {
      const size_t i = index[d.key];
      if (d.kind == q::Decision::Kind::kAdmit) {
        ++admissions;
        Wl& x = wls[i];
        ++x.admission_seq;
        wait_sum[x.cls] += static_cast<double>(now_ms - x.created_ms);
        ++admitted_n[x.cls];
        events.emplace(now_ms + shape.classes[x.cls].runtime_ms, 1, i, x.admission_seq);
      } else if (d.kind == q::Decision::Kind::kPreempt) {
        ++preemptions;
        core.UpsertPending(wls[i].w);  // evicted at once; requeued by creation time
      }
    }
    ++cycles;
  }
  const double cpu = CpuSeconds() - cpu0;
  const double wall = absl::ToDoubleSeconds(absl::Now() - wall0);
  std::printf("shape %s: %d ClusterQueues in %d cohorts, %zu workloads\n", which.c_str(), n_cqs,
              shape.cohorts, wls.size());
  std::printf("core CPU %.2f s (wall %.2f s), %.1f us CPU per admission\n", cpu, wall,
              cpu * 1e6 / static_cast<double>(std::max<int64_t>(admissions, 1)));
  std::printf("virtual makespan %.1f s, %lld cycles, %lld admissions, %lld preemptions, %lld finished\n",
              now_ms / 1000.0, static_cast<long long>(cycles), static_cast<long long>(admissions),
              static_cast<long long>(preemptions), static_cast<long long>(finished));
  for (size_t k = 0; k < shape.classes.size(); ++k) {
    std::printf("  %-6s mean time to admission %.1f s (virtual, %lld admissions)\n",
                shape.classes[k].name,
                admitted_n[k] ? wait_sum[k] / 1000.0 / static_cast<double>(admitted_n[k]) : 0.0,
                static_cast<long long>(admitted_n[k]));
  }
  return finished == static_cast<int64_t>(wls.size()) ? 0 : 1;
}
