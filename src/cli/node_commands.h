// batchctl's `create simulated-nodes`: a set of Nodes with a generated,
// deterministic topology, run by batchd's simulated kubelet (the Node
// annotation `batchd.io/simulated: "true"`, src/agent/sim/). It gives users
// and tests a cluster shape — blocks of racks of hosts, say — to queue and
// place work on without any machines.
//
// Generation is pure: flags -> `SimulatedNodeSpec` (all validation happens
// here, so bad input changes nothing) -> the i-th Node's JSON. The same flags
// always give the same names and labels:
//
//   --levels block=2,rack=2,hostname=2 --prefix sim
//   node             topology.batchd.io/block  topology.batchd.io/rack  kubernetes.io/hostname
//   sim-b0-r0-h0     b0                        b0-r0                    sim-b0-r0-h0
//   sim-b0-r0-h1     b0                        b0-r0                    sim-b0-r0-h1
//   sim-b0-r1-h0     b0                        b0-r1                    sim-b0-r1-h0
//   ...
//   sim-b1-r1-h1     b1                        b1-r1                    sim-b1-r1-h1
//
// A level's value is the path from the top to it: each level contributes the
// first letter of its name and the index under its parent, joined by '-'.
// Values are therefore unique across the whole set (rack `b0-r1` and `b1-r1`
// differ), and a node's name is `<prefix>-<value of the lowest level>`. The
// `hostname` level (label key kubernetes.io/hostname) may only be the lowest
// level; whatever the levels, every node's kubernetes.io/hostname is its name.
// `--count N` alone is the flat set `--levels hostname=N`: nodes
// `<prefix>-h0` ... with no topology labels.
//
// `SimulatedNodeCommands` applies a spec through any client::Client:
// creating what is missing, bringing existing simulated nodes of the same
// names to the spec, or deleting them; a Node that lacks the simulated
// annotation is never changed or deleted.
//
// Thread-safety: none needed; one command per process.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/kind.h"
#include "client/client.h"

namespace batchd::cli {

// The most nodes one spec may describe.
inline constexpr int64_t kMaxSimulatedNodes = 100000;

// The flags, as typed (strings, so that every parse error is ours and
// names its flag).
struct SimulatedNodeFlags {
  std::string count;    // "" = the product of the --levels fanouts.
  std::string levels;   // "block=4,rack=8,hostname=20", top first; "" = flat.
  std::string prefix = "sim";
  std::string cpu;      // Quantity, required.
  std::string memory;   // Quantity, required.
  std::string gpu = "0";     // Integer; nvidia.com/gpu, omitted when 0.
  std::string pods = "110";  // Integer.
  std::string labels;   // "k=v,..." added to every node.
  std::string taints;   // "k=v:Effect,..." on every node.
};

struct TopologyLevel {
  std::string key;     // The label key, e.g. topology.batchd.io/rack.
  char letter = 'x';   // Its values' letter: the name's first, lower-cased.
  int64_t fanout = 0;  // Children per parent (nodes, for the lowest level).
};

struct SimulatedNodeSpec {
  std::string prefix;
  std::vector<TopologyLevel> levels;  // Never empty; a flat set is hostname=N.
  int64_t count = 0;                  // The product of the fanouts.
  std::map<std::string, std::string> labels;  // From --labels.
  api::Json taints = api::Json::array();      // spec.taints.
  api::Json capacity = api::Json::object();   // == allocatable.
};

// Validates the flags and builds the spec; InvalidArgument naming the flag
// otherwise (unknown syntax, duplicate levels, fanout not a positive number,
// more than kMaxSimulatedNodes, --count disagreeing with --levels, bad
// quantities, labels or taints).
absl::StatusOr<SimulatedNodeSpec> BuildSimulatedNodeSpec(const SimulatedNodeFlags& f);

// The name of node `index` (0 <= index < spec.count).
std::string SimulatedNodeName(const SimulatedNodeSpec& spec, int64_t index);
// Its labels: the --labels, one per level, and kubernetes.io/hostname.
std::map<std::string, std::string> SimulatedNodeLabels(const SimulatedNodeSpec& spec,
                                                        int64_t index);
// The whole Node object, shaped as the simulated kubelet expects: the
// annotation, capacity == allocatable and a Ready condition.
api::Json SimulatedNode(const SimulatedNodeSpec& spec, int64_t index);

// What --dry-run prints: the count, the resources and a table of the first
// `shown` nodes (and the last one) with their labels.
std::string FormatSimulatedNodesPlan(const SimulatedNodeSpec& spec, int shown = 5);

class SimulatedNodeCommands {
 public:
  SimulatedNodeCommands(client::Client& client, std::ostream& out) : client_(client), out_(out) {}

  // Creates the spec's missing nodes and brings existing simulated nodes of
  // the same names to it: the spec's labels are set (other labels are left),
  // spec.taints becomes the spec's taints, capacity and allocatable become
  // the spec's resources. Nodes already so are unchanged. Refuses, before
  // writing anything, when a node of one of the names is not simulated.
  // Prints "N simulated node(s): C created, U updated, K unchanged".
  absl::Status Create(const SimulatedNodeSpec& spec);

  // Deletes the spec's nodes that exist and are simulated. A node of one of
  // the names that is not simulated is reported and left alone (and makes
  // the result an error). Prints "N simulated node(s): D deleted, M not
  // found[, S not simulated (left alone)]".
  absl::Status Delete(const SimulatedNodeSpec& spec);

 private:
  const api::KindDef& Nodes() const;
  // The existing nodes by name.
  absl::StatusOr<std::map<std::string, api::Json>> ExistingNodes();

  client::Client& client_;
  std::ostream& out_;
};

}  // namespace batchd::cli
