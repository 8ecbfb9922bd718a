#include "queueing/internal/tas.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "queueing/internal/flavor_assigner.h"
#include "queueing/internal/state.h"

namespace batchd::queueing::internal {
namespace {

topology::Profile ToProfile(TopologyProfile p) {
  switch (p) {
    case TopologyProfile::kMixed: return topology::Profile::Mixed();
    case TopologyProfile::kBestFit: return topology::Profile::AllBestFit();
    case TopologyProfile::kLeastFreeCapacity: return topology::Profile::AllLeastFreeCapacity();
    case TopologyProfile::kBalanced: return topology::Profile::Balanced();
  }
  return topology::Profile::Mixed();
}

bool MatchesLabels(const std::map<std::string, std::string>& want,
                   const std::map<std::string, std::string>& labels) {
  for (const auto& [k, v] : want) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v) return false;
  }
  return true;
}

int LevelIndex(const std::vector<std::string>& levels, const std::string& key) {
  auto it = std::find(levels.begin(), levels.end(), key);
  return it == levels.end() ? -1 : static_cast<int>(it - levels.begin());
}

const PodSet* PodSetNamed(const Workload& wl, const std::string& name) {
  for (const PodSet& ps : wl.pod_sets) {
    if (ps.name == name) return &ps;
  }
  return nullptr;
}

// The topology-aware flavor among a pod set's assigned flavors ("" = none).
std::string TasFlavorOf(TasState& tas, const std::map<std::string, std::string>& flavors) {
  for (const auto& [resource, flavor] : flavors) {
    if (tas.SnapshotOf(flavor) != nullptr) return flavor;
  }
  return "";
}

// A pod's requests as placement counts them: the one "pods" slot is the
// topology library's own.
std::map<std::string, Amount> PerPod(const PodSet& ps) {
  std::map<std::string, Amount> r = ps.requests;
  r.erase(topology::kPodsResource);
  return r;
}

topology::Assignment ToPlacement(const TopologyAssignment& ta) {
  topology::Assignment out;
  out.domains.reserve(ta.domains.size());
  for (const TopologyDomainCount& d : ta.domains) out.domains.push_back({d.values, d.count});
  return out;
}

// Adds (+1) or removes (-1) `a`'s topology usage on the snapshots.
void CountOn(TasState& tas, const Workload& wl, const Admission& a, int sign) {
  for (const PodSetAssignment& psa : a.pod_sets) {
    if (!psa.topology) continue;
    const PodSet* ps = PodSetNamed(wl, psa.name);
    if (ps == nullptr) continue;
    std::string flavor = TasFlavorOf(tas, psa.flavors);
    if (flavor.empty()) continue;
    topology::Snapshot* snap = tas.SnapshotOf(flavor);
    snap->AddUsage(ToPlacement(*psa.topology), PerPod(*ps), sign);
  }
}

}  // namespace

TasState::TasState(TopologyProfile profile) : profile_(ToProfile(profile)) {}

void TasState::UpsertTopology(Topology t) {
  std::string name = t.name;
  topologies_[name] = std::move(t);
  dirty_ = true;
}
void TasState::DeleteTopology(const std::string& name) {
  topologies_.erase(name);
  dirty_ = true;
}
void TasState::UpsertNode(TopologyNode n) {
  std::string name = n.name;
  nodes_[name] = std::move(n);
  dirty_ = true;
}
void TasState::DeleteNode(const std::string& name) {
  if (nodes_.erase(name) > 0) dirty_ = true;
}

void TasState::EnsureBuilt(
    const absl::flat_hash_map<std::string, ResourceFlavor>& flavors,
    const absl::flat_hash_map<std::string, std::unique_ptr<AdmittedEntry>>& admitted) {
  if (!dirty_) return;
  dirty_ = false;
  ++version_;
  snapshots_.clear();
  flavor_topology_.clear();
  flavor_tolerations_.clear();
  any_tas_flavor_ = false;
  std::vector<const ResourceFlavor*> ordered;
  for (const auto& [name, f] : flavors) {
    if (!f.topology_name.empty()) ordered.push_back(&f);
  }
  std::sort(ordered.begin(), ordered.end(),
            [](const ResourceFlavor* a, const ResourceFlavor* b) { return a->name < b->name; });
  for (const ResourceFlavor* f : ordered) {
    any_tas_flavor_ = true;
    flavor_topology_[f->name] = f->topology_name;
    flavor_tolerations_[f->name] = f->tolerations;
    auto t = topologies_.find(f->topology_name);
    if (t == topologies_.end() || !topology::ValidateLevels(t->second.levels).empty()) continue;
    const std::vector<std::string>& levels = t->second.levels;
    std::vector<topology::Node> nodes;
    for (const auto& [name, n] : nodes_) {
      if (!n.schedulable || !MatchesLabels(f->node_labels, n.labels)) continue;
      topology::Node tn;
      tn.name = name;
      bool all_levels = true;
      for (const std::string& key : levels) {
        auto v = n.labels.find(key);
        if (v == n.labels.end()) {
          all_levels = false;
          break;
        }
        tn.values.push_back(v->second);
      }
      if (!all_levels) continue;
      tn.labels = n.labels;
      tn.taints = n.taints;
      tn.free = n.free;
      nodes.push_back(std::move(tn));
    }
    snapshots_.emplace(f->name, topology::Snapshot(f->topology_name, levels, std::move(nodes)));
  }
  for (const auto& [key, a] : admitted) CountOn(*this, a->wl, a->admission, +1);
}

const std::vector<std::string>* TasState::LevelsOf(const ResourceFlavor& flavor) const {
  if (flavor.topology_name.empty()) return nullptr;
  auto t = topologies_.find(flavor.topology_name);
  return t == topologies_.end() ? nullptr : &t->second.levels;
}

const std::vector<Toleration>& TasState::TolerationsOf(const std::string& flavor) const {
  static const auto* kNone = new std::vector<Toleration>();
  auto it = flavor_tolerations_.find(flavor);
  return it == flavor_tolerations_.end() ? *kNone : it->second;
}

topology::Snapshot* TasState::SnapshotOf(const std::string& flavor) {
  auto it = snapshots_.find(flavor);
  return it == snapshots_.end() ? nullptr : &it->second;
}

void TasState::CountUsage(const Workload& wl, const Admission& a, int sign) {
  if (dirty_) return;
  bool any = false;
  for (const PodSetAssignment& psa : a.pod_sets) any = any || psa.topology.has_value();
  if (!any) return;
  CountOn(*this, wl, a, sign);
  ++version_;
}

std::optional<TopologyRequest> EffectiveTopologyRequest(const PodSet& ps, const CqInfo& cq) {
  if (ps.topology) return ps.topology;
  if (cq.tas_only) return TopologyRequest{};  // implied unconstrained
  return std::nullopt;
}

std::string TopologyMismatch(const TasState* tas, const ResourceFlavor& flavor, const PodSet& ps,
                             const CqInfo& cq) {
  std::optional<TopologyRequest> req = EffectiveTopologyRequest(ps, cq);
  if (flavor.topology_name.empty()) {
    if (req) {
      return absl::StrCat("flavor ", flavor.name, " does not support TopologyAwareScheduling");
    }
    return "";
  }
  if (!req) {
    return absl::StrCat("flavor ", flavor.name, " supports only TopologyAwareScheduling");
  }
  const std::vector<std::string>* levels = tas == nullptr ? nullptr : tas->LevelsOf(flavor);
  if (levels == nullptr) {
    return absl::StrCat("flavor ", flavor.name, " has no Topology ", flavor.topology_name);
  }
  std::string error;
  ToPlacementRequest(ps, *req, *levels, ps.count, &error);
  if (!error.empty()) return absl::StrCat("flavor ", flavor.name, ": ", error);
  return "";
}

topology::Request ToPlacementRequest(const PodSet& ps, const TopologyRequest& req,
                                     const std::vector<std::string>& levels, int32_t count,
                                     std::string* error) {
  topology::Request r;
  r.count = count;
  r.per_pod = PerPod(ps);
  r.node_selector = ps.node_selector;
  r.required_affinity = ps.required_affinity;
  r.tolerations = ps.tolerations;
  switch (req.mode) {
    case TopologyMode::kRequired: r.mode = topology::Mode::kRequired; break;
    case TopologyMode::kPreferred: r.mode = topology::Mode::kPreferred; break;
    case TopologyMode::kUnconstrained: r.mode = topology::Mode::kUnconstrained; break;
  }
  r.level = static_cast<int>(levels.size()) - 1;
  if (req.mode != TopologyMode::kUnconstrained) {
    r.level = LevelIndex(levels, req.level);
    if (r.level < 0) {
      *error = absl::StrCat("does not contain the requested level ", req.level);
      return r;
    }
  }
  for (const TopologySlice& s : req.slices) {
    int l = LevelIndex(levels, s.level);
    if (l < 0) {
      *error = absl::StrCat("does not contain the requested slice level ", s.level);
      return r;
    }
    r.slices.push_back({l, s.size});
  }
  std::string invalid = topology::ValidateRequest(levels, r);
  if (!invalid.empty()) *error = std::move(invalid);
  return r;
}

namespace {

// The leader of the pod set group `r` opens: the other member of its group
// when that one is the smaller (Kueue's findLeaderAndWorkers: the second
// member, unless it has more pods than the first). nullptr when `r` is not
// in a group of two, or is itself its group's leader (then `*is_leader`).
PodSetResult* GroupLeader(Assignment& a, const Workload& wl, PodSetResult& r, bool* is_leader) {
  *is_leader = false;
  const PodSet* ps = PodSetNamed(wl, r.name);
  if (ps == nullptr || !ps->topology || ps->topology->group.empty()) return nullptr;
  PodSetResult* first = nullptr;
  PodSetResult* second = nullptr;
  for (PodSetResult& o : a.pod_sets) {
    const PodSet* ops = PodSetNamed(wl, o.name);
    if (ops == nullptr || !ops->topology || ops->topology->group != ps->topology->group) continue;
    (first == nullptr ? first : second) = &o;
  }
  if (second == nullptr) return nullptr;
  PodSetResult* workers = first;
  PodSetResult* leader = second;
  if (leader->count > workers->count) std::swap(workers, leader);
  if (&r == leader) {
    *is_leader = true;
    return nullptr;
  }
  return leader;
}

}  // namespace

PlacementOutcome PlaceTopology(TasState& tas, const CqInfo& cq, const Workload& wl, Assignment& a,
                               const std::vector<const AdmittedEntry*>& removed,
                               bool ignore_usage) {
  PlacementOutcome out;
  for (const AdmittedEntry* v : removed) CountOn(tas, v->wl, v->admission, -1);
  // Pod sets placed so far hold their capacity for the later ones.
  struct Held {
    topology::Snapshot* snapshot;
    topology::Assignment assignment;
    std::map<std::string, Amount> per_pod;
  };
  std::vector<Held> held;
  for (PodSetResult& r : a.pod_sets) r.topology.reset();
  for (PodSetResult& r : a.pod_sets) {
    const PodSet* ps = PodSetNamed(wl, r.name);
    if (ps == nullptr) continue;
    std::optional<TopologyRequest> req = EffectiveTopologyRequest(*ps, cq);
    if (!req) continue;
    bool is_leader = false;
    PodSetResult* leader = GroupLeader(a, wl, r, &is_leader);
    if (is_leader) continue;  // placed with its workers
    std::string flavor = TasFlavorOf(tas, r.flavors);
    if (flavor.empty()) continue;
    topology::Snapshot* snap = tas.SnapshotOf(flavor);
    std::string error;
    topology::Request pr = ToPlacementRequest(*ps, *req, snap->levels(), r.count, &error);
    const std::vector<Toleration>& added = tas.TolerationsOf(flavor);
    pr.tolerations.insert(pr.tolerations.end(), added.begin(), added.end());
    if (leader != nullptr) {
      const PodSet& lps = *PodSetNamed(wl, leader->name);
      topology::Leader l;
      l.per_pod = PerPod(lps);
      l.node_selector = lps.node_selector;
      l.required_affinity = lps.required_affinity;
      l.tolerations = lps.tolerations;
      l.tolerations.insert(l.tolerations.end(), added.begin(), added.end());
      pr.leader = std::move(l);
    }
    topology::PlaceResult placed;
    if (error.empty()) {
      placed = snap->Place(pr, tas.profile(), {ignore_usage});
    } else {
      placed.message = absl::StrCat("flavor ", flavor, " ", error);
    }
    if (out.kind == PlacementOutcome::Kind::kNone) out.kind = PlacementOutcome::Kind::kPlaced;
    if (!placed.ok) {
      out.kind = PlacementOutcome::Kind::kNoFit;
      out.message = absl::StrCat("couldn't assign flavors to pod set ", r.name, ": ",
                                 placed.message);
      break;
    }
    auto to_assignment = [&](const topology::Assignment& from) {
      TopologyAssignment ta;
      ta.levels = snap->levels();
      for (const topology::DomainCount& d : from.domains) ta.domains.push_back({d.values, d.count});
      return ta;
    };
    r.topology = to_assignment(placed.assignment);
    if (leader != nullptr) leader->topology = to_assignment(placed.leader_assignment);
    if (!ignore_usage) {
      snap->AddUsage(placed.assignment, pr.per_pod, +1);
      held.push_back({snap, std::move(placed.assignment), pr.per_pod});
      if (leader != nullptr) {
        snap->AddUsage(placed.leader_assignment, pr.leader->per_pod, +1);
        held.push_back({snap, std::move(placed.leader_assignment), pr.leader->per_pod});
      }
    }
  }
  for (Held& h : held) h.snapshot->AddUsage(h.assignment, h.per_pod, -1);
  for (const AdmittedEntry* v : removed) CountOn(tas, v->wl, v->admission, +1);
  if (out.kind == PlacementOutcome::Kind::kNoFit) {
    for (PodSetResult& r : a.pod_sets) r.topology.reset();
  }
  return out;
}

namespace {

constexpr char kHostnameLevel[] = "kubernetes.io/hostname";

// `domains` with `more` added (same values merged), ordered by values.
std::vector<TopologyDomainCount> Merge(std::vector<TopologyDomainCount> domains,
                                       const topology::Assignment& more) {
  std::map<std::vector<std::string>, int32_t> by_values;
  for (TopologyDomainCount& d : domains) by_values[std::move(d.values)] += d.count;
  for (const topology::DomainCount& d : more.domains) by_values[d.values] += d.count;
  std::vector<TopologyDomainCount> out;
  out.reserve(by_values.size());
  for (auto& [values, count] : by_values) out.push_back({values, count});
  return out;
}

}  // namespace

std::optional<Admission> RepairPlacement(TasState& tas, const CqInfo& cq, const Workload& wl,
                                         const Admission& a, std::vector<std::string>* unhealthy) {
  for (const PodSetAssignment& psa : a.pod_sets) {
    if (!psa.topology || psa.topology->levels.empty() ||
        psa.topology->levels.back() != kHostnameLevel) {
      continue;
    }
    for (const TopologyDomainCount& d : psa.topology->domains) {
      if (!d.values.empty() && !tas.HasNode(d.values.back())) unhealthy->push_back(d.values.back());
    }
  }
  if (unhealthy->empty()) return std::nullopt;
  std::sort(unhealthy->begin(), unhealthy->end());
  unhealthy->erase(std::unique(unhealthy->begin(), unhealthy->end()), unhealthy->end());

  Admission out = a;
  struct Added {
    topology::Snapshot* snapshot;
    topology::Assignment assignment;
    std::map<std::string, Amount> per_pod;
    int sign = +1;
  };
  std::vector<Added> added;  // what changed on the snapshots, to undo
  bool ok = true;
  for (PodSetAssignment& psa : out.pod_sets) {
    if (!psa.topology || psa.topology->levels.empty() ||
        psa.topology->levels.back() != kHostnameLevel) {
      continue;
    }
    const PodSet* ps = PodSetNamed(wl, psa.name);
    std::string flavor = TasFlavorOf(tas, psa.flavors);
    topology::Snapshot* snap = flavor.empty() ? nullptr : tas.SnapshotOf(flavor);
    if (ps == nullptr || snap == nullptr) {
      ok = false;
      break;
    }
    std::map<std::string, Amount> per_pod = PerPod(*ps);
    // This pod set's usage comes off; what stays and what moves goes back on.
    topology::Assignment before = ToPlacement(*psa.topology);
    snap->AddUsage(before, per_pod, -1);
    added.push_back({snap, std::move(before), per_pod});
    added.back().sign = -1;
    std::vector<TopologyDomainCount> kept, failed;
    for (TopologyDomainCount& d : psa.topology->domains) {
      (tas.HasNode(d.values.back()) ? kept : failed).push_back(d);
    }
    topology::Assignment kept_placement = ToPlacement({psa.topology->levels, kept});
    snap->AddUsage(kept_placement, per_pod, +1);
    added.push_back({snap, std::move(kept_placement), per_pod});
    if (failed.empty()) continue;
    int32_t moved = 0;
    for (const TopologyDomainCount& d : failed) moved += d.count;
    // The replacement stays in the failed pods' domain of the requested
    // level (pinned by the node selector); unconstrained ones go anywhere.
    std::optional<TopologyRequest> req = EffectiveTopologyRequest(*ps, cq);
    TopologyRequest pinned{TopologyMode::kUnconstrained, "", {}};
    if (req && req->mode != TopologyMode::kUnconstrained) pinned = {TopologyMode::kRequired, req->level, {}};
    std::string error;
    topology::Request r = ToPlacementRequest(*ps, pinned, snap->levels(), moved, &error);
    if (!error.empty()) {
      ok = false;
      break;
    }
    if (pinned.mode == TopologyMode::kRequired) {
      for (int l = 0; l <= r.level; ++l) r.node_selector[snap->levels()[l]] = failed[0].values[l];
    }
    const std::vector<Toleration>& extra = tas.TolerationsOf(flavor);
    r.tolerations.insert(r.tolerations.end(), extra.begin(), extra.end());
    topology::PlaceResult placed = snap->Place(r, tas.profile());
    if (!placed.ok) {
      ok = false;
      break;
    }
    snap->AddUsage(placed.assignment, per_pod, +1);
    added.push_back({snap, placed.assignment, per_pod});
    psa.topology->domains = Merge(std::move(kept), placed.assignment);
  }
  if (!ok) {
    for (auto it = added.rbegin(); it != added.rend(); ++it) {
      it->snapshot->AddUsage(it->assignment, it->per_pod, -it->sign);
    }
    return std::nullopt;
  }
  tas.Touch();
  return out;
}

}  // namespace batchd::queueing::internal
