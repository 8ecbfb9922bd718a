// Internal to sim/: Simulator::Impl and what it keeps for the summary,
// shared by simulator.cc (the run: wiring, recorders, steps) and
// simulator_output.cc (--state, --summary, the table, --plot).
//
// Thread-safety: none; one thread owns a Simulator.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "api/meta/object_meta.h"
#include "client/in_process_client.h"
#include "common/testing/fake_clock.h"
#include "controllers/queueing/queue_manager.h"
#include "reconcile/context.h"
#include "reconcile/events.h"
#include "registry/registry.h"
#include "sim/invariants.h"
#include "sim/simulator.h"
#include "store/memory/memory_store.h"

namespace batchd::sim {
namespace internal {

using api::Json;

// Kubernetes Events are counted, not stored (a simulated month of them
// would dwarf the objects); the summary reports the counts by reason.
class CountingEventRecorder : public reconcile::EventRecorder {
 public:
  void Event(const Json&, const std::string& type, const std::string& reason,
             const std::string&) override {
    ++counts[type + "/" + reason];
  }
  std::map<std::string, int64_t> counts;
};

inline std::string KeyOf(const Json& obj) {
  std::string ns = api::meta::GetNamespace(obj);
  return ns.empty() ? api::meta::GetName(obj) : ns + "/" + api::meta::GetName(obj);
}

// What is kept of one queued Workload for the summary.
struct WlStat {
  std::string ns, lq, cq;
  absl::Duration created;
  std::optional<absl::Duration> admitted;  // First admission.
  bool holding = false;                    // Holds a reservation now.
  bool finished = false;
  bool deleted = false;
  Usage usage;                             // While holding.
};

struct QueueStat {
  int64_t admitted = 0, preempted = 0, evicted = 0, finished = 0, failed = 0, created = 0;
  std::vector<double> waits;   // Seconds, first admissions.
  Usage usage;                 // Now.
  std::map<std::string, double> usage_seconds;  // Integral of usage (units * s).
  absl::Duration last_change;
  int64_t pending = 0;         // Now.
  int64_t peak_pending = 0;
};

struct PlotPoint {
  double t, used, pending;
};

inline double Units(api::Amount a) { return static_cast<double>(a.milli()) / 1000.0; }

}  // namespace internal

using api::Json;

using internal::CountingEventRecorder;
using internal::PlotPoint;
using internal::QueueStat;
using internal::WlStat;

struct Simulator::Impl {
  SimOptions opts;
  FakeClock clock{SimEpoch()};
  std::mt19937_64 rng;
  // A short change history: every watcher here is in-process and current, and
  // the watch cache's own ring (16 MiB) serves a watch from an older version
  // first. The default (100,000 events, 256 MiB) made a run's memory grow by
  // a quarter of a GiB of superseded versions, page by fresh page.
  store::MemoryStore store{
      store::MemoryStoreOptions{{.max_events = 10000, .max_bytes = size_t{16} << 20}}};
  std::unique_ptr<registry::Registry> registry;
  std::unique_ptr<client::InProcessClient> client;
  std::unique_ptr<reconcile::Manager> manager;
  std::unique_ptr<reconcile::InformerFactory> informers;
  CountingEventRecorder recorder;
  std::unique_ptr<reconcile::ControllerContext> ctx;
  std::shared_ptr<controllers::queueing::QueueManager> queue_manager;
  std::unique_ptr<InvariantChecker> checker;
  client::Informer* local_queues = nullptr;
  client::Informer* pod_groups = nullptr;
  client::Informer* sched_workloads = nullptr;

  std::vector<ScenarioObject> objects;
  size_t next_object = 0;
  bool started = false, done = false, all_finished = false;
  std::string stop = "running";  // finished | until | invariant | livelock
  int64_t steps = 0, reconciles = 0;
  int64_t store_commits = 0;  // The store's revision after the last step.

  // The events formatted and not yet written (kStream: below
  // opts.events_chunk plus one event; kKeep: all of them).
  std::string events;
  std::set<std::string> unfinished;  // "Kind ns/name" of work that can finish.
  // Finished top-level work to delete at the end of the step
  // (SimOptions::drop_finished). Bound: the work finished in one step.
  struct Drop {
    const api::KindDef* kind;
    std::string ns, name, uid;
  };
  std::vector<Drop> to_drop;
  std::map<std::string, WlStat> workloads;
  std::map<std::string, QueueStat> cq_stats, lq_stats;  // lq key "ns/name"
  std::set<std::string> plot_dirty;
  std::map<std::string, std::vector<PlotPoint>> plot;
  std::map<std::string, int64_t> jobs_by_state;
  std::optional<absl::Duration> first_submit, last_finish;

  absl::Duration Now() const { return clock.Now() - SimEpoch(); }

  void AddControllers();
  void AddRecorders();
  // Creates `o`'s object (moved out of `o`).
  absl::Status Submit(ScenarioObject& o);
  void Emit(const std::string& kind, const Json& obj, const std::string& event,
            const std::string& cq, const Json& flavors, const std::string& reason);
  // kStream: writes `events` to opts.events_to and empties it.
  void WriteEvents();
  std::string CqOfQueue(const std::string& ns, const std::string& lq) const;
  void OnWorkload(const Json* old_obj, const Json* new_obj);
  void OnJob(const char* kind, const Json* old_obj, const Json* new_obj, const char* ok_cond,
             const char* fail_cond);
  void SetHolding(WlStat& w, bool holding, const Usage& usage);
  void Touch(QueueStat& q, const std::string& name, bool is_cq);
  void Flush();
  // Deletes `to_drop` and lets the controllers settle; the reconciles taken.
  int DropFinished();
  // Writes the queue statuses the instant owes (QueueManager::
  // DeferQueueStatuses) once the controllers settled, and settles what the
  // writes set off; the reconciles taken, at most about `budget`.
  int FlushQueueStatuses(int budget);
};

}  // namespace batchd::sim
