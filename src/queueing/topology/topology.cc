// Snapshot, validation and the two phases of Place (see topology.h): resolve
// the request once (resource indexes, slice layout, starting level), fill in
// the counts, let the profile's strategy choose, and report the leaves or
// Kueue's "allows to fit only" message.
#include "queueing/topology/topology.h"

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "queueing/topology/internal/placement_strategy.h"
#include "queueing/topology/internal/tree.h"

namespace batchd::queueing::topology {

namespace {

using internal::Counts;
using internal::Demand;
using internal::Tree;

const char* ModeName(Mode mode) {
  switch (mode) {
    case Mode::kRequired:
      return "required";
    case Mode::kPreferred:
      return "preferred";
    case Mode::kUnconstrained:
      break;
  }
  return "unconstrained";
}

Algorithm AlgorithmFor(const Profile& profile, Mode mode) {
  switch (mode) {
    case Mode::kRequired:
      return profile.required;
    case Mode::kPreferred:
      return profile.preferred;
    case Mode::kUnconstrained:
      break;
  }
  return profile.unconstrained;
}

// The slice layout and starting level of `r` (validated) over `level_count` levels.
Demand MakeDemand(const Request& r, int level_count) {
  Demand demand;
  demand.count = r.count;
  demand.mode = r.mode;
  const int lowest = level_count - 1;
  if (r.mode == Mode::kUnconstrained) {
    // Kueue: plain unconstrained works on the leaves; a slice-only request
    // starts at the top so each slice can find its domain.
    demand.level = r.slices.empty() ? lowest : 0;
  } else {
    demand.level = r.level;
  }
  demand.slice_level = r.slices.empty() ? lowest : r.slices.front().level;
  demand.slice_size = r.slices.empty() ? 1 : r.slices.front().size;
  demand.grain.assign(level_count, 1);
  for (int level = 0; level <= demand.slice_level; ++level) demand.grain[level] = demand.slice_size;
  // Inner layers: the levels from just below the previous layer down to a
  // layer's own level are handed pods in multiples of its size.
  for (size_t i = 1; i < r.slices.size(); ++i) {
    for (int level = r.slices[i - 1].level + 1; level <= r.slices[i].level; ++level) {
      demand.grain[level] = r.slices[i].size;
    }
  }
  return demand;
}

std::string NotFitMessage(const std::string& topology, const std::string& level_name, int64_t fit,
                          int64_t total, bool slices, bool one_domain) {
  const char* unit = slices ? "slice(s)" : "pod(s)";
  if (fit <= 0) {
    return absl::StrCat("topology \"", topology, "\" doesn't allow to fit any of ", total, " ",
                        unit);
  }
  std::string message = absl::StrCat("topology \"", topology, "\" allows to fit only ", fit,
                                     " out of ", total, " ", unit);
  if (one_domain) absl::StrAppend(&message, " in one domain of level \"", level_name, "\"");
  return message;
}

}  // namespace

std::string ValidateLevels(const std::vector<std::string>& levels) {
  if (levels.empty()) return "a topology needs at least one level";
  std::set<std::string> seen;
  for (size_t i = 0; i < levels.size(); ++i) {
    if (levels[i].empty()) return absl::StrCat("level ", i, " has an empty node label");
    if (!seen.insert(levels[i]).second) {
      return absl::StrCat("level \"", levels[i], "\" appears twice");
    }
  }
  return "";
}

std::string ValidateRequest(const std::vector<std::string>& levels, const Request& r) {
  const int level_count = static_cast<int>(levels.size());
  if (level_count == 0) return "the topology has no levels";
  if (r.count < 0) return absl::StrCat("count ", r.count, " is negative");
  int top = 0;  // the highest level a slice layer may use
  if (r.mode != Mode::kUnconstrained) {
    if (r.level < 0 || r.level >= level_count) {
      return absl::StrCat(ModeName(r.mode), " level ", r.level,
                          " is not a level of the topology (0..", level_count - 1, ")");
    }
    top = r.level;
  }
  if (r.slices.size() > 3) return absl::StrCat(r.slices.size(), " slice layers; at most 3");
  if (r.leader && r.mode == Mode::kUnconstrained) {
    return "a pod set group needs a required or preferred level";
  }
  if (r.leader && !r.slices.empty()) return "a pod set group cannot be sliced";
  for (size_t i = 0; i < r.slices.size(); ++i) {
    const SliceLayer& layer = r.slices[i];
    if (layer.level < 0 || layer.level >= level_count) {
      return absl::StrCat("slice layer ", i, " level ", layer.level,
                          " is not a level of the topology");
    }
    if (i == 0 && layer.level < top) {
      return absl::StrCat("slice level \"", levels[layer.level], "\" is above the ",
                          ModeName(r.mode), " level \"", levels[top], "\"");
    }
    if (i > 0 && layer.level <= r.slices[i - 1].level) {
      return absl::StrCat("slice layer ", i, " level \"", levels[layer.level],
                          "\" must be below the level of the layer before it (\"",
                          levels[r.slices[i - 1].level], "\")");
    }
    if (layer.size <= 0) {
      return absl::StrCat("slice layer ", i, " size ", layer.size, " must be positive");
    }
    if (i == 0 && r.count % layer.size != 0) {
      return absl::StrCat("slice size ", layer.size, " does not divide the pod count ", r.count);
    }
    if (i > 0 && r.slices[i - 1].size % layer.size != 0) {
      return absl::StrCat("slice layer ", i, " size ", layer.size, " does not divide the size ",
                          r.slices[i - 1].size, " of the layer before it");
    }
  }
  return "";
}

Snapshot::Snapshot(std::string topology_name, std::vector<std::string> levels,
                   std::vector<Node> nodes)
    : tree_(std::make_unique<Tree>(std::move(topology_name), std::move(levels), std::move(nodes))) {
}
Snapshot::~Snapshot() = default;
Snapshot::Snapshot(Snapshot&&) noexcept = default;
Snapshot& Snapshot::operator=(Snapshot&&) noexcept = default;

const std::string& Snapshot::topology_name() const { return tree_->topology_name(); }
const std::vector<std::string>& Snapshot::levels() const { return tree_->levels(); }
size_t Snapshot::leaf_count() const { return tree_->level_count() == 0 ? 0 : tree_->leaf_count(); }

void Snapshot::AddUsage(const Assignment& a, const std::map<std::string, Amount>& per_pod,
                        int sign) {
  if (tree_->level_count() == 0) return;
  const internal::ResolvedRequest resolved = tree_->Resolve(per_pod);
  for (const DomainCount& domain : a.domains) {
    const int leaf = tree_->FindLeaf(domain.values);
    if (leaf < 0) continue;
    tree_->AddUsage(leaf, resolved, domain.count, sign);
  }
}

std::map<std::string, Amount> Snapshot::FreeOf(const std::vector<std::string>& values) const {
  if (tree_->level_count() == 0) return {};
  const int leaf = tree_->FindLeaf(values);
  if (leaf < 0) return {};
  return tree_->FreeOf(leaf);
}

PlaceResult Snapshot::Place(const Request& r, const Profile& profile, PlaceOptions opts) const {
  PlaceResult result;
  const Tree& tree = *tree_;
  if (std::string invalid = ValidateRequest(tree.levels(), r); !invalid.empty()) {
    result.message = absl::StrCat("invalid topology request: ", invalid);
    return result;
  }
  if (r.count == 0 && !r.leader) {
    result.ok = true;
    return result;
  }
  const Demand demand = MakeDemand(r, tree.level_count());
  const bool slices = demand.slice_size > 1;
  // Reported in pods (or slices); a group's leader is one pod more.
  const int64_t total = demand.slice_count() + (r.leader ? 1 : 0);
  if (tree.domain_count() == 0) {
    result.message = NotFitMessage(tree.topology_name(), "", 0, total, slices, false);
    return result;
  }
  const internal::ResolvedRequest resolved = tree.Resolve(r.per_pod);
  Counts counts;
  tree.FillCounts(r, resolved, demand, opts.ignore_usage, counts);

  const Algorithm algorithm = AlgorithmFor(profile, r.mode);
  internal::Phase2Result phase2;
  std::vector<int64_t> assigned;
  int leader_leaf = -1;
  if (r.leader) {
    internal::LeaderCounts leader;
    tree.FillLeaderCounts(r, resolved, tree.Resolve(r.leader->per_pod), opts.ignore_usage,
                          counts, leader);
    // Balanced has no group form: groups are placed as BestFit places them.
    const internal::DomainOrder order = algorithm == Algorithm::kLeastFreeCapacity
                                            ? internal::DomainOrder::kLeastFirst
                                            : internal::DomainOrder::kMostFirst;
    internal::GroupPlacement group = internal::PlaceGroup(tree, demand, counts, leader, order);
    phase2 = group.result;
    assigned = std::move(group.assigned);
    leader_leaf = group.leader_leaf;
  } else {
    internal::Workspace workspace(tree, demand, counts);
    phase2 = internal::StrategyFor(algorithm).Place(workspace);
    assigned = std::move(workspace.assigned);
  }
  if (!phase2.ok) {
    result.fit = static_cast<int32_t>(phase2.fit_units * demand.slice_size);
    result.message = NotFitMessage(tree.topology_name(), tree.levels()[phase2.level],
                                   phase2.fit_units, total, slices, phase2.one_domain);
    return result;
  }
  const int lowest = tree.lowest_level();
  for (int leaf = tree.level_begin(lowest); leaf < tree.level_end(lowest); ++leaf) {
    if (assigned[leaf] <= 0) continue;
    result.assignment.domains.push_back(
        {tree.ValuesOf(leaf), static_cast<int32_t>(assigned[leaf])});
  }
  if (leader_leaf >= 0) result.leader_assignment.domains.push_back({tree.ValuesOf(leader_leaf), 1});
  result.ok = true;
  return result;
}

}  // namespace batchd::queueing::topology
