// The simulator behind `batchd simulate` (DESIGN.md "Determinism: one clock,
// one loop" and "Simulation scenario format"): the controllers, admission
// (queue manager + admission core) and the pod scheduler that `batchd
// server` runs, unchanged, over an in-memory store, with every Node
// simulated by the built-in fake kubelet, on one FakeClock and one thread.
//
// A step: submit the scenario objects that are due, run every informer and
// controller until nothing is ready (Manager::RunUntilIdle), check the
// invariants (sim/invariants.h), then advance the clock to the next due
// event — the earliest timer (a requeue, a pod's exit, a backoff) or the next
// submission. Nothing sleeps. The registry draws UIDs and generated names
// from a generator seeded with `seed`, so the same scenario and seed give
// byte-identical events, state and summary.
//
// Differences from `batchd server`, all outside the controllers: no HTTP
// server and no local node agent; Kubernetes Events are counted by reason
// (summary "k8sEvents") instead of being stored; namespaces are never
// deleted (the registry finishes a namespace deletion on a thread of its own).
//
// Thread-safety: none; one thread owns a Simulator.
#pragma once

#include <cstddef>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/field_error.h"
#include "client/client.h"
#include "controllers/queueing/config.h"
#include "sim/scenario.h"

namespace batchd::sim {

struct SimOptions {
  absl::Duration until = absl::Hours(24 * 30);
  uint64_t seed = 1;
  controllers::queueing::QueueingConfig queueing;
  // Kubernetes' WorkloadWithJob gate (batchd's default: on).
  bool workload_with_job = true;
  // Most reconciles one step may take before it is called a livelock.
  int max_reconciles_per_step = 5'000'000;
  // Points per ClusterQueue kept for --plot (older points are thinned).
  size_t plot_points = 2000;
  // Delete each finished top-level Job and JobSet (and with it, through
  // owner references and the garbage collector, its Workload and Pods) once
  // its events are emitted and the summary has counted it, so memory stays
  // flat over a long run. Off keeps every object for State() (`--state`).
  // The events and the summary are the same either way (scenario test
  // "drop").
  bool drop_finished = true;
  // The events (--events, Events()): kept in memory for Events() (kKeep),
  // written to `events_to` as they happen with at most `events_chunk` bytes
  // of them held (kStream: memory stays flat however long the run), or not
  // formatted at all (kNone). The bytes are the same in every mode that
  // has them.
  enum class EventsMode { kKeep, kStream, kNone };
  EventsMode events = EventsMode::kKeep;
  std::ostream* events_to = nullptr;  // kStream: not owned, outlives Run().
  size_t events_chunk = size_t{1} << 20;
};

// The virtual start of every simulation: 2026-01-01T00:00:00Z.
absl::Time SimEpoch();

class Simulator {
 public:
  static absl::StatusOr<std::unique_ptr<Simulator>> Create(const SimOptions& opts);
  ~Simulator();

  // Validates every object through a scratch registry with the same
  // defaulting, validation and admission hooks, created in submission order
  // (create-at, then document order), and queues them. InvalidArgument
  // naming the document (or trace line) and the field path on the first
  // invalid object; nothing has run then.
  absl::Status Load(std::vector<ScenarioObject> objects);

  // Runs until all submitted work is finished or `until`. A violated
  // invariant stops the run: FailedPrecondition "t=<seconds>s: <what>".
  absl::Status Run();
  // One step (see the header comment); false once the run is over.
  absl::StatusOr<bool> Step();

  // The client the controllers use (tests write through it to inject faults).
  client::Client& client();
  absl::Duration Elapsed() const;
  bool finished() const;  // All submitted work finished (else: stopped at `until`).

  // --events: one JSON object per line (DESIGN.md), in order of occurrence.
  // Empty unless SimOptions::events is kKeep.
  const std::string& Events() const;
  // kStream: writes the events still held to `events_to` and flushes it;
  // an error when the stream failed (now or at an earlier write).
  absl::Status FlushEvents();
  // --state: every object at the end, as a JSON List (deterministic order).
  absl::StatusOr<std::string> State() const;
  // --summary (JSON), the stderr table and the --plot SVG.
  api::Json Summary() const;
  std::string Table() const;
  std::string Svg() const;

 private:
  struct Impl;
  explicit Simulator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// "12", "1.5", "0.001": seconds without trailing zeros (the events' `t`).
std::string FormatSeconds(absl::Duration d);

}  // namespace batchd::sim
