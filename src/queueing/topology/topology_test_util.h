// Test helpers for the topology library: nodes with cpu in cores and 110 pod
// slots, "rack lists" (one block, each inner list the node capacities of one
// rack, as the KEP writes its examples), and reading an Assignment back in
// that shape.
#pragma once

#include <algorithm>
#include <map>
#include <ostream>
#include <random>
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


// ---- Random scenarios for the conformance suites ----

struct Scenario {
  std::vector<std::string> levels;
  std::vector<Node> nodes;
};

// Three or four levels (one scenario in three with racks as leaves that
// aggregate their nodes), fan-out 1..3 per level, 1..4 hosts per leaf
// domain, 0..6 cores, some with few pod slots, pool=a|b labels, and some
// NoExecute taints.
inline Scenario RandomScenario(std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Scenario s;
  s.levels = pick(0, 1) == 0 ? std::vector<std::string>{"block", "rack", kHostname}
                             : std::vector<std::string>{"zone", "block", "rack", kHostname};
  const bool aggregated = pick(0, 2) == 0;
  if (aggregated) s.levels.pop_back();
  const int depth = static_cast<int>(s.levels.size());
  const int branching_levels = aggregated ? depth : depth - 1;
  std::vector<std::vector<std::string>> prefixes = {{}};
  for (int level = 0; level < branching_levels; ++level) {
    std::vector<std::vector<std::string>> next;
    for (const auto& p : prefixes) {
      const int fan = pick(1, 3);
      for (int i = 0; i < fan; ++i) {
        auto q = p;
        // Values repeat across parents (rack names need not be unique).
        q.push_back(s.levels[level].substr(0, 1) + std::to_string(i + 1));
        next.push_back(q);
      }
    }
    prefixes = next;
  }
  int host = 0;
  for (const auto& p : prefixes) {
    const int hosts = pick(1, 4);
    for (int i = 0; i < hosts; ++i) {
      auto values = p;
      const std::string name = "h" + std::to_string(++host);
      if (!aggregated) values.push_back(name);
      Node n = MakeNode(s.levels, values, pick(0, 6), pick(0, 3) == 0 ? pick(0, 4) : 110);
      n.name = name;
      n.labels["pool"] = pick(0, 1) == 0 ? "a" : "b";
      if (pick(0, 4) == 0) {
        n.taints.push_back({"dedicated", "x", api::core_v1::TaintEffect::kNoExecute, ""});
      }
      s.nodes.push_back(std::move(n));
    }
  }
  std::shuffle(s.nodes.begin(), s.nodes.end(), rng);
  return s;
}

// Whether `node` passes these filters (the brute-force model's own check).
inline bool NodeEligible(const Node& node, const std::map<std::string, std::string>& node_selector,
                         const std::vector<NodeSelectorTerm>& required_affinity,
                         const std::vector<api::core_v1::Toleration>& tolerations) {
  for (const auto& taint : node.taints) {
    if (taint.effect != api::core_v1::TaintEffect::kPreferNoSchedule &&
        !api::core_v1::Tolerated(tolerations, taint)) {
      return false;
    }
  }
  for (const auto& [k, v] : node_selector) {
    if (node.labels.count(k) == 0 || node.labels.at(k) != v) return false;
  }
  if (required_affinity.empty()) return true;
  bool any = false;
  for (const auto& term : required_affinity) {
    bool all = !term.empty();
    for (const auto& req : term) all = all && req.Matches(node.labels);
    any = any || all;
  }
  return any;
}

inline bool NodeEligible(const Node& node, const Request& r) {
  return NodeEligible(node, r.node_selector, r.required_affinity, r.tolerations);
}

inline std::string AlgorithmName(Algorithm a) {
  switch (a) {
    case Algorithm::kBestFit:
      return "BestFit";
    case Algorithm::kLeastFreeCapacity:
      return "LeastFreeCapacity";
    case Algorithm::kBalanced:
      break;
  }
  return "Balanced";
}

}  // namespace batchd::queueing::topology::testing
