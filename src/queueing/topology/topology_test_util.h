// Test helpers for the topology library: nodes with cpu in cores and 110 pod
// slots, "rack lists" (one block, each inner list the node capacities of one
// rack, as the KEP writes its examples), and reading an Assignment back in
// that shape.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "queueing/topology/topology.h"

namespace batchd::queueing::topology {

// Readable test failures: {b/r1/r1-h1: 2, ...}.
inline void PrintTo(const DomainCount& d, std::ostream* os) {
  for (size_t i = 0; i < d.values.size(); ++i) *os << (i ? "/" : "") << d.values[i];
  *os << ": " << d.count;
}
inline void PrintTo(const Assignment& a, std::ostream* os) {
  *os << "{";
  for (size_t i = 0; i < a.domains.size(); ++i) {
    if (i) *os << ", ";
    PrintTo(a.domains[i], os);
  }
  *os << "}";
}

}  // namespace batchd::queueing::topology

namespace batchd::queueing::topology::testing {

inline constexpr Amount kCore = 1000;  // one cpu core, milli
inline constexpr Amount kSlot = 1000;  // one pod slot, milli
inline const char kHostname[] = "kubernetes.io/hostname";

// A node with `cores` cpu and `slots` pod slots at `values`; its hostname
// label is the last value, and every level's label is set.
inline Node MakeNode(const std::vector<std::string>& levels, std::vector<std::string> values,
                     int64_t cores, int64_t slots = 110) {
  Node node;
  node.name = values.back();
  for (size_t i = 0; i < levels.size() && i < values.size(); ++i)
    node.labels[levels[i]] = values[i];
  node.values = std::move(values);
  node.free = {{"cpu", cores * kCore}, {kPodsResource, slots * kSlot}};
  return node;
}

inline std::vector<std::string> BlockRackHost() { return {"block", "rack", kHostname}; }

// One block "b"; rack i is "r<i+1>" with hosts "r<i+1>-h<j+1>" of racks[i][j] cores.
inline std::vector<Node> RackListNodes(const std::vector<std::vector<int>>& racks) {
  std::vector<Node> nodes;
  for (size_t i = 0; i < racks.size(); ++i) {
    const std::string rack = "r" + std::to_string(i + 1);
    for (size_t j = 0; j < racks[i].size(); ++j) {
      nodes.push_back(
          MakeNode(BlockRackHost(), {"b", rack, rack + "-h" + std::to_string(j + 1)}, racks[i][j]));
    }
  }
  return nodes;
}

inline Snapshot RackListSnapshot(const std::vector<std::vector<int>>& racks) {
  return Snapshot("T", BlockRackHost(), RackListNodes(racks));
}

// `a` in the shape of `racks` (0 where no pod went).
inline std::vector<std::vector<int>> AsRackLists(const Assignment& a,
                                                 const std::vector<std::vector<int>>& racks) {
  std::vector<std::vector<int>> out;
  for (size_t i = 0; i < racks.size(); ++i) out.emplace_back(racks[i].size(), 0);
  for (const DomainCount& d : a.domains) {
    const int rack = std::stoi(d.values[1].substr(1)) - 1;
    const int host = std::stoi(d.values[2].substr(d.values[2].find("-h") + 2)) - 1;
    out[rack][host] = d.count;
  }
  return out;
}

// Pods per value of `level` (a prefix of each leaf's values).
inline std::map<std::string, int> PodsPer(const Assignment& a, int level) {
  std::map<std::string, int> out;
  for (const DomainCount& d : a.domains) out[d.values[level]] += d.count;
  return out;
}

inline int TotalPods(const Assignment& a) {
  int total = 0;
  for (const DomainCount& d : a.domains) total += d.count;
  return total;
}

inline Request CpuRequest(int32_t count, Mode mode, int level = 0) {
  Request r;
  r.count = count;
  r.per_pod = {{"cpu", kCore}};
  r.mode = mode;
  r.level = level;
  return r;
}

inline Profile Only(Algorithm a) { return Profile{a, a, a}; }

}  // namespace batchd::queueing::topology::testing
