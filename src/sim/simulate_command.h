// `batchd simulate` (DESIGN.md "Simulation scenario format",
// docs/simulation.md): reads the scenario (and a trace), runs the
// simulator, writes the outputs.
//
// Exit codes: 0 the run ended (all work finished, or --until reached with
// the pending work listed); 1 an output could not be written or the
// simulator failed; 2 bad input (a scenario or trace that does not parse, an
// unknown kind, a malformed annotation, an object the registry refuses),
// nothing run and nothing written; 3 an invariant was violated (the message
// names the objects and the virtual time; outputs are written up to there).
//
// Thread-safety: runs on the calling thread.
#pragma once

#include <cstdint>
#include <string>

namespace batchd::sim {

struct SimulateCommand {
  std::string scenario;   // -f
  std::string trace;      // --trace
  std::string until;      // --until (Go duration; "" = 30 days)
  std::string events;     // --events
  std::string state;      // --state
  std::string summary;    // --summary
  std::string plot;       // --plot
  std::string config;     // --config
  std::string compare;    // --compare: a second queueing configuration
  uint64_t seed = 1;
  bool quiet = false;     // no table on stderr
};

int RunSimulate(const SimulateCommand& cmd);

}  // namespace batchd::sim
