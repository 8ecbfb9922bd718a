// Scenario input for `batchd simulate` (DESIGN.md "Simulation scenario
// format"): a multi-document YAML of ordinary API objects, and job traces
// (CSV or JSON Lines, docs/simulation.md) turned into Jobs.
//
// What is checked here is what the registry cannot see: the documents parse,
// each names a kind batchd serves, and the simulator's annotations hold Go
// durations / integers. The objects themselves are validated by the
// registry (Simulator::Load), which names the document too.
//
// Errors are InvalidArgument with a message naming the file, the document
// (1-based, as `kubectl` counts them) or trace line, and the field path:
//   scenario.yaml: document 3 (Job default/a): metadata.annotations[batchd.io/sim-create-at]:
//   Invalid value: "1d": time: unknown unit "d" in duration "1d"
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/field_error.h"
#include "api/kind.h"

namespace batchd::sim {

inline constexpr char kCreateAtAnnotation[] = "batchd.io/sim-create-at";

// One object of a scenario and when it is submitted.
struct ScenarioObject {
  int document = 0;           // 1-based document number (trace: 0).
  int line = 0;               // Trace line (1-based), 0 for a YAML document.
  std::string source;         // File it came from, for messages.
  absl::Duration create_at;   // batchd.io/sim-create-at (trace: submit time).
  api::Json object;
  // "document 3 (Job default/a)" or "line 7".
  std::string Where() const;
};

// Parses a scenario file's text. `source` names it in messages.
absl::StatusOr<std::vector<ScenarioObject>> ParseScenario(std::string_view text,
                                                          const std::string& source,
                                                          const api::Scheme& scheme);

// A job trace: CSV with a header row, or JSON Lines (one object a line);
// the format is told by the first non-blank character ('{' is JSON Lines).
// Columns / keys (docs/simulation.md "Replaying a trace"):
//   submit     required  seconds since the start (number) or a Go duration
//   queue      required  LocalQueue name (kueue.x-k8s.io/queue-name)
//   namespace  optional  default "default"
//   pods       optional  pod count (parallelism = completions), default 1
//   cpu, memory, gpu     per-pod requests (gpu: nvidia.com/gpu); at least one
//   requests   optional  other per-pod requests, "name=qty;name=qty"
//   duration   required  seconds or a Go duration, >= 0
//   priority   optional  WorkloadPriorityClass name, or an integer (a class
//                        "trace-priority-<n>" of that value is created)
//   exit_code  optional  the pods' exit code (default 0)
//   name       optional  the Job's name (default trace-<line>)
// Returns the Jobs (and WorkloadPriorityClasses for integer priorities).
absl::StatusOr<std::vector<ScenarioObject>> ParseTrace(std::string_view text,
                                                       const std::string& source);

// Go duration or plain seconds ("90", "1.5") as a Duration; error text as
// ParseGoDuration's.
absl::StatusOr<absl::Duration> ParseSimDuration(std::string_view s);

}  // namespace batchd::sim
