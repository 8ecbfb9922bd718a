#include "queueing/internal/flavor_assigner.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/resource/amount.h"
#include "queueing/internal/tas.h"

namespace batchd::queueing::internal {
namespace {

struct Grade {
  GranularMode mode = GranularMode::kNoFit;
  int borrow = 0;
  bool exceeds = false;   // noFit because the request exceeds the potential capacity
  bool deferred = false;  // the preemption oracle still has to be asked
  std::string reason;
};

struct Choice {
  int flavor = -1;
  GranularMode mode = GranularMode::kNoFit;
  int borrow = 0;
  std::vector<std::pair<FlavorResourceId, GranularMode>> modes;  // per resource of the group
  std::vector<std::pair<size_t, Amount>> deferred;  // (index in modes, val) for the oracle
};

bool ShouldTryNext(const Choice& c, const FlavorFungibility& f) {
  if (c.mode == GranularMode::kNoFit || c.mode == GranularMode::kNoCandidates) return true;
  if (c.mode != GranularMode::kFit && f.when_can_preempt_try_next) return true;
  return c.borrow > 0 && f.when_can_borrow_try_next;
}

bool IsPreferred(const Choice& a, const Choice& b, const FlavorFungibility& f) {
  if (a.mode == GranularMode::kNoFit) return false;
  if (b.flavor < 0 || b.mode == GranularMode::kNoFit) return true;
  bool a_viable = a.mode > GranularMode::kNoCandidates;
  bool b_viable = b.mode > GranularMode::kNoCandidates;
  if (a_viable != b_viable) return a_viable;
  if (f.preemption_over_borrowing) {
    if (a.borrow != b.borrow) return a.borrow < b.borrow;
    return a.mode > b.mode;
  }
  if (a.mode != b.mode) return a.mode > b.mode;
  return a.borrow < b.borrow;
}

Mode ToMode(GranularMode m) {
  if (m == GranularMode::kFit) return Mode::kFit;
  if (m == GranularMode::kNoFit) return Mode::kNoFit;
  return Mode::kPreempt;
}

Grade FitsResourceQuota(const SnapshotView& v, const CqInfo& cq, FlavorResourceId id,
                        Amount val, PreemptionOracle* oracle, bool defer) {
  const QuotaTree& t = *v.tree;
  const std::string& res = v.flavor_resources->Resource(id);
  const std::string& flavor = v.flavor_resources->Flavor(id);
  Grade g;
  Amount potential = t.PotentialAvailable(cq.node, id);
  if (val > potential) {
    g.exceeds = true;
    g.reason = absl::StrCat("insufficient quota for ", res, " in flavor ", flavor,
                            ", request > maximum capacity (", FormatAmount(res, val), " > ",
                            FormatAmount(res, potential), ")");
    return g;
  }
  auto [borrow, may_reclaim] = t.BorrowingLevel(cq.node, id, val);
  g.borrow = borrow;
  Amount avail = t.Available(cq.node, id);
  if (val <= avail) {
    g.mode = GranularMode::kFit;
    return g;
  }
  g.reason = absl::StrCat("insufficient unused quota for ", res, " in flavor ", flavor, ", ",
                          FormatAmount(res, val - avail), " more needed");
  const Preemption& p = cq.spec->preemption;
  bool try_preempt = t.Nominal(cq.node, id) >= val || may_reclaim ||
                     p.borrow_within_cohort != PreemptionPolicy::kNever ||
                     (v.fair_sharing && p.reclaim_within_cohort != PreemptionPolicy::kNever);
  if (!try_preempt) return g;  // noFit, WaitingForQuota
  if (defer && oracle != nullptr) {
    g.mode = GranularMode::kNoCandidates;
    g.deferred = true;
    return g;
  }
  if (oracle == nullptr) {
    g.mode = GranularMode::kNoCandidates;
    return g;
  }
  auto [mode, borrow_after] = oracle->SimulatePreemption(id, val);
  g.mode = mode;
  g.borrow = mode == GranularMode::kNoCandidates ? borrow : borrow_after;
  return g;
}

}  // namespace

std::string FormatAmount(const std::string& resource, Amount milli) {
  api::Amount a = api::Amount::FromMilli(milli);
  if (resource == "memory" || resource.find("storage") != std::string::npos) {
    if (milli % 1000 == 0) return a.ToQuantity(api::QuantityFormat::kBinarySI).String();
  }
  return a.ToString();
}

std::string FlavorMismatch(const ResourceFlavor& flavor, const PodSet& ps) {
  for (const Taint& taint : flavor.node_taints) {
    if (taint.effect == TaintEffect::kPreferNoSchedule) continue;
    if (api::core_v1::Tolerated(ps.tolerations, taint) ||
        api::core_v1::Tolerated(flavor.tolerations, taint)) {
      continue;
    }
    return absl::StrCat("untolerated taint {", taint.key, " ", taint.value, "} in flavor ",
                        flavor.name);
  }
  for (const auto& [key, value] : ps.node_selector) {
    auto it = flavor.node_labels.find(key);
    if (it != flavor.node_labels.end() && it->second != value) {
      return absl::StrCat("flavor ", flavor.name, " doesn't match node affinity");
    }
  }
  if (ps.required_affinity.empty()) return "";
  for (const NodeSelectorTerm& term : ps.required_affinity) {
    bool match = true;
    for (const auto& req : term) {
      if (!flavor.node_labels.contains(req.key)) continue;  // only the flavor's own keys
      if (!req.Matches(flavor.node_labels)) match = false;
    }
    if (match) return "";
  }
  return absl::StrCat("flavor ", flavor.name, " doesn't match node affinity");
}

Admission Assignment::ToAdmission(const std::string& cq) const {
  Admission a;
  a.cluster_queue = cq;
  for (const PodSetResult& ps : pod_sets) {
    a.pod_sets.push_back({ps.name, ps.flavors, ps.usage, ps.count, ps.topology});
  }
  return a;
}

namespace {

struct PodSetCtx {
  const SnapshotView& view;
  const CqInfo& cq;
  PreemptionOracle* oracle;
  Assignment& out;
  absl::flat_hash_map<FlavorResourceId, Amount>& prior;  // usage of earlier pod sets
  std::vector<std::string> reasons;
  bool any_quota_reason = false;
  bool any_exceeds = false;
  const Admission* sticky = nullptr;  // a workload slice: the replaced slice's flavors
};

// The flavor the replaced workload slice holds for `res` of pod set `name`
// ("" when it holds none): a slice keeps its flavors (Kueue's elastic jobs).
std::string_view StickyFlavor(const Admission* sticky, std::string_view name,
                              const std::string& res) {
  if (sticky == nullptr) return "";
  for (const PodSetAssignment& psa : sticky->pod_sets) {
    if (psa.name != name) continue;
    auto it = psa.flavors.find(res);
    return it == psa.flavors.end() ? std::string_view() : std::string_view(it->second);
  }
  return "";
}

// Asks the oracle for the grades `cand` deferred and folds them in.
void ResolveDeferred(PodSetCtx& c, Choice& cand) {
  for (const auto& [i, val] : cand.deferred) {
    FlavorResourceId id = cand.modes[i].first;
    Grade gr = FitsResourceQuota(c.view, c.cq, id, val, c.oracle, /*defer=*/false);
    cand.modes[i].second = gr.mode;
    cand.borrow = std::max(cand.borrow, gr.borrow);
  }
  cand.deferred.clear();
  cand.mode = GranularMode::kFit;
  for (const auto& [id, m] : cand.modes) cand.mode = std::min(cand.mode, m);
  if (cand.mode == GranularMode::kNoCandidates) c.any_quota_reason = true;
}

// The pod sets assigned together: one, or the members of a pod set group.
using Members = std::vector<const PodSet*>;

// Grades flavor `fi` of `g`; false when the flavor can't host every member.
bool GradeFlavor(PodSetCtx& c, const Members& members, const CompiledGroup& g, int fi,
                 const std::vector<std::pair<std::string, Amount>>& totals, bool defer,
                 Choice& cand) {
  const CompiledFlavor& cf = g.flavors[fi];
  auto rf = c.view.flavors->find(cf.name);
  if (rf == c.view.flavors->end()) {
    c.reasons.push_back(absl::StrCat("flavor ", cf.name, " not found"));
    return false;
  }
  for (const PodSet* ps : members) {
    for (const auto& [res, total] : totals) {
      std::string_view sticky = StickyFlavor(c.sticky, ps->name, res);
      if (!sticky.empty() && sticky != cf.name) {
        c.reasons.push_back(absl::StrCat("flavor ", cf.name, " is not the flavor ", std::string(sticky),
                                         " of the replaced workload slice"));
        return false;
      }
    }
    std::string mismatch = FlavorMismatch(rf->second, *ps);
    if (mismatch.empty()) mismatch = TopologyMismatch(c.view.tas, rf->second, *ps, c.cq);
    if (!mismatch.empty()) {
      c.reasons.push_back(std::move(mismatch));
      return false;
    }
  }
  cand.flavor = fi;
  cand.mode = GranularMode::kFit;
  for (const auto& [res, total] : totals) {
    FlavorResourceId id = kNoFlavorResource;
    for (const auto& [r, resource_id] : cf.resources) if (r == res) id = resource_id;
    Amount val = total;
    if (auto it = c.prior.find(id); it != c.prior.end()) val = api::SaturatingAdd(val, it->second);
    Grade gr = FitsResourceQuota(c.view, c.cq, id, val, c.oracle, defer);
    if (!gr.reason.empty()) c.reasons.push_back(gr.reason);
    if (gr.mode == GranularMode::kNoFit) (gr.exceeds ? c.any_exceeds : c.any_quota_reason) = true;
    if (gr.deferred) cand.deferred.emplace_back(cand.modes.size(), val);
    cand.mode = std::min(cand.mode, gr.mode);
    cand.borrow = std::max(cand.borrow, gr.borrow);
    cand.modes.emplace_back(id, gr.mode);
  }
  if (cand.mode == GranularMode::kNoCandidates && cand.deferred.empty()) {
    c.any_quota_reason = true;
  }
  return true;
}

// Chooses a flavor of group `g` for `totals` (resource -> total request).
// With whenCanPreempt=TryNextFlavor and BorrowingOverPreemption, a flavor
// needing preemption never ends the scan and never beats a fitting flavor,
// so its (costly) preemption oracle is only asked when no flavor fits; the
// choice is the same as asking it eagerly.
Choice ChooseFlavor(PodSetCtx& c, const Members& members, const CompiledGroup& g,
                    const std::vector<std::pair<std::string, Amount>>& totals) {
  const FlavorFungibility& fung = c.cq.spec->fungibility;
  const bool lazy = fung.when_can_preempt_try_next && !fung.preemption_over_borrowing;
  Choice best;
  std::vector<Choice> graded;
  for (int fi = 0; fi < static_cast<int>(g.flavors.size()); ++fi) {
    Choice cand;
    if (!GradeFlavor(c, members, g, fi, totals, lazy, cand)) continue;
    if (!cand.deferred.empty()) {
      graded.push_back(std::move(cand));
      continue;
    }
    if (!ShouldTryNext(cand, fung)) return cand;
    if (IsPreferred(cand, best, fung)) best = cand;
    graded.push_back(std::move(cand));
  }
  if (best.flavor >= 0 && best.mode == GranularMode::kFit) return best;
  best = Choice();
  for (Choice& cand : graded) {
    if (!cand.deferred.empty()) ResolveDeferred(c, cand);
    if (IsPreferred(cand, best, fung)) best = cand;
  }
  return best;
}

// Assigns the pod sets `members` (indexes into `wl.pod_sets`) together:
// their requests summed per resource group, one flavor each group for all
// of them (Kueue's pod set groups; a single pod set is a group of one).
// Fills `results` at the members' indexes; returns false when they can't be
// assigned.
bool AssignMembers(PodSetCtx& c, const Workload& wl, const std::vector<size_t>& indexes,
                   const std::vector<int32_t>& counts, std::vector<PodSetResult>& results) {
  Members members;
  // resource group -> (resource, total over the members), in first-seen order
  std::map<int, std::vector<std::pair<std::string, Amount>>> by_group;
  bool ok = true;
  for (size_t i : indexes) {
    const PodSet& ps = wl.pod_sets[i];
    members.push_back(&ps);
    PodSetResult& r = results[i];
    r.name = ps.name;
    r.count = counts[i];
    // Kueue counts the `pods` resource (one per pod) when the CQ covers it.
    const std::map<std::string, Amount>* requests = &ps.requests;
    std::map<std::string, Amount> with_pods;
    if (c.cq.group_of.contains("pods") && !ps.requests.contains("pods")) {
      with_pods = ps.requests;
      with_pods["pods"] = 1000;
      requests = &with_pods;
    }
    for (const auto& request : *requests) {
      const std::string& res = request.first;
      const Amount per_pod = request.second;
      if (per_pod <= 0) continue;
      const int32_t count = r.count;
      Amount total = per_pod > kUnlimited / std::max<int32_t>(count, 1) ? kUnlimited
                                                                         : per_pod * count;
      auto it = c.cq.group_of.find(res);
      if (it == c.cq.group_of.end()) {
        c.reasons.push_back(absl::StrCat("resource ", res, " unavailable in ClusterQueue"));
        r.mode = Mode::kNoFit;
        ok = false;
        continue;
      }
      auto& totals = by_group[it->second];
      auto t = std::find_if(totals.begin(), totals.end(),
                            [&](const auto& e) { return e.first == res; });
      if (t == totals.end()) {
        totals.emplace_back(res, total);
      } else {
        t->second = api::SaturatingAdd(t->second, total);
      }
      r.usage[res] = total;
    }
  }
  if (!ok) return false;
  Mode mode = Mode::kFit;
  for (const auto& [gi, totals] : by_group) {
    const CompiledGroup& g = c.cq.groups[gi];
    Choice ch = ChooseFlavor(c, members, g, totals);
    if (ch.flavor < 0 || ch.mode == GranularMode::kNoFit) {
      for (size_t i : indexes) results[i].mode = Mode::kNoFit;
      return false;
    }
    mode = std::min(mode, ToMode(ch.mode));
    c.out.borrowing = std::max(c.out.borrowing, ch.borrow);
    for (size_t k = 0; k < totals.size(); ++k) {
      const std::string& res = totals[k].first;
      for (size_t i : indexes) {
        if (results[i].usage.contains(res)) results[i].flavors[res] = g.flavors[ch.flavor].name;
      }
      FlavorResourceId id = ch.modes[k].first;
      c.prior[id] = api::SaturatingAdd(c.prior[id], totals[k].second);
      if (ch.modes[k].second != GranularMode::kFit) c.out.need_preemption.push_back(id);
    }
  }
  for (size_t i : indexes) results[i].mode = mode;
  c.out.mode = std::min(c.out.mode, mode);
  return true;
}

// The pod sets assigned with pod set `i`: every one naming its group, or
// just `i`. Empty when `i` belongs to a group an earlier pod set opened.
std::vector<size_t> MembersOf(const Workload& wl, size_t i) {
  const std::optional<TopologyRequest>& t = wl.pod_sets[i].topology;
  if (!t || t->group.empty()) return {i};
  std::vector<size_t> out;
  for (size_t j = 0; j < wl.pod_sets.size(); ++j) {
    const std::optional<TopologyRequest>& o = wl.pod_sets[j].topology;
    if (!o || o->group != t->group) continue;
    if (j < i) return {};
    out.push_back(j);
  }
  return out;
}

}  // namespace

Assignment AssignFlavors(const SnapshotView& view, const CqInfo& cq, const Workload& wl,
                         const std::vector<int32_t>& counts, PreemptionOracle* oracle,
                         const Admission* sticky) {
  Assignment out;
  absl::flat_hash_map<FlavorResourceId, Amount> prior;
  std::vector<PodSetResult> results(wl.pod_sets.size());
  for (size_t i = 0; i < wl.pod_sets.size(); ++i) {
    const std::vector<size_t> members = MembersOf(wl, i);
    if (members.empty()) continue;  // assigned with its group
    PodSetCtx c{view, cq, oracle, out, prior};
    c.sticky = sticky;
    if (!AssignMembers(c, wl, members, counts, results)) {
      for (size_t j = 0; j <= i; ++j) {
        if (!results[j].name.empty()) out.pod_sets.push_back(std::move(results[j]));
      }
      out.mode = Mode::kNoFit;
      out.reason = c.any_quota_reason ? PendingReason::kWaitingForQuota
                   : c.any_exceeds    ? PendingReason::kExceedsMaxQuota
                                      : PendingReason::kNoMatchingFlavor;
      out.message = absl::StrCat("couldn't assign flavors to pod set ", wl.pod_sets[i].name,
                                 ": ", absl::StrJoin(c.reasons, ", "));
      return out;
    }
    if (out.mode == Mode::kPreempt && out.message.empty()) {
      out.message = absl::StrCat("couldn't assign flavors to pod set ", wl.pod_sets[i].name,
                                 ": ", absl::StrJoin(c.reasons, ", "));
    }
  }
  out.pod_sets = std::move(results);
  for (const auto& [id, v] : prior) out.usage.emplace_back(id, v);
  std::sort(out.usage.begin(), out.usage.end());
  std::sort(out.need_preemption.begin(), out.need_preemption.end());
  out.need_preemption.erase(std::unique(out.need_preemption.begin(), out.need_preemption.end()),
                            out.need_preemption.end());
  return out;
}

}  // namespace batchd::queueing::internal
