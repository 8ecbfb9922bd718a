#include "scheduler/internal/cache.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/core/v1/node_view.h"
#include "api/json_access.h"
#include "api/meta/object_meta.h"
#include "api/meta/time_util.h"
#include "scheduler/internal/gang.h"

namespace batchd::scheduler::internal {

using api::Json;

namespace {

constexpr int64_t kDefaultCpuMilli = 100;                          // 100m
constexpr int64_t kDefaultMemMilli = int64_t{200} * 1024 * 1024 * 1000;  // 200Mi
constexpr char kUnschedulableTaint[] = "node.kubernetes.io/unschedulable";
constexpr char kNotReadyTaint[] = "node.kubernetes.io/not-ready";
constexpr char kUnreachableTaint[] = "node.kubernetes.io/unreachable";

bool SameTaints(const std::vector<Taint>& a, const std::vector<Taint>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].key != b[i].key || a[i].value != b[i].value || a[i].effect != b[i].effect) {
      return false;
    }
  }
  return true;
}

std::string UntoleratedTaint(const Taint& t) {
  return absl::StrCat("node(s) had untolerated taint {", t.key, ": ", t.value, "}");
}

// (alloc - used) * 100 / alloc, 0 when over-committed or without the resource.
int64_t FreePercent(int64_t alloc, int64_t used) {
  if (alloc <= 0 || used >= alloc) return 0;
  return static_cast<int64_t>((static_cast<__int128>(alloc - used) * 100) / alloc);
}

}  // namespace

ResourceIndex::ResourceIndex() {
  for (const char* n : {"pods", "cpu", "memory", "ephemeral-storage"}) Id(n);
}

int ResourceIndex::Id(const std::string& name) {
  auto it = ids_.find(name);
  if (it != ids_.end()) return it->second;
  int id = static_cast<int>(names_.size());
  names_.push_back(name);
  ids_[name] = id;
  return id;
}

std::shared_ptr<const PodInfo> ParsePod(const Json& pod, ResourceIndex& resources) {
  auto p = std::make_shared<PodInfo>();
  const Json& spec = api::Member(pod, "spec");
  p->ns = api::meta::GetNamespace(pod);
  p->name = api::meta::GetName(pod);
  p->key = absl::StrCat(p->ns, "/", p->name);
  p->uid = api::meta::GetUid(pod);
  p->node_name = api::CopyStringMember(spec, "nodeName");
  p->scheduler_name = api::CopyStringMember(spec, "schedulerName");
  if (p->scheduler_name.empty()) p->scheduler_name = "default-scheduler";
  p->phase = api::CopyStringMember(api::Member(pod, "status"), "phase");
  for (const Json& c : api::Member(api::Member(pod, "status"), "conditions")) {
    const std::string_view type = api::StringMember(c, "type");
    if (type == "PodScheduled" && api::StringMember(c, "status") == "False" &&
        api::StringMember(c, "reason") == "Unschedulable") {
      p->unschedulable_message = api::CopyStringMember(c, "message");
    } else if (type == "DisruptionTarget" && api::StringMember(c, "status") == "True") {
      p->disruption_reason = api::CopyStringMember(c, "reason");
      if (p->disruption_reason.empty()) p->disruption_reason = "DisruptionTarget";
      p->disruption_message = api::CopyStringMember(c, "message");
    }
  }
  p->deleting = api::meta::IsBeingDeleted(pod);
  const Json& gates = api::Member(spec, "schedulingGates");
  p->gated = gates.is_array() && !gates.empty();
  const Json& prio = api::Member(spec, "priority");
  if (prio.is_number_integer()) p->priority = prio.get<int32_t>();
  p->preempt_never = api::CopyStringMember(spec, "preemptionPolicy") == "Never";
  p->nominated_node = api::CopyStringMember(api::Member(pod, "status"), "nominatedNodeName");
  p->created = api::meta::GetCreationTimestamp(pod).value_or(absl::InfinitePast());

  ResourceList reqs = PodRequests(spec);
  p->requests.emplace_back(kPods, 1000);
  for (const auto& [name, amount] : reqs) {
    if (name == "pods") continue;
    p->requests.emplace_back(resources.Id(name), amount.milli());
  }
  std::sort(p->requests.begin(), p->requests.end());
  auto cpu = reqs.find("cpu");
  auto mem = reqs.find("memory");
  p->nonzero_cpu = cpu == reqs.end() ? kDefaultCpuMilli : cpu->second.milli();
  p->nonzero_mem = mem == reqs.end() ? kDefaultMemMilli : mem->second.milli();
  p->affinity = NodeAffinity::FromPodSpec(spec);
  p->tolerations = ParseTolerations(spec);
  const Json& labels = api::MemberAt(pod, {"metadata", "labels"});
  p->labels = std::make_shared<const Labels>(labels.is_object() ? api::StringMap(labels) : Labels{});
  p->inter_pod = ParseInterPodTerms(pod, p->ns, *p->labels);

  std::string sig;
  for (const auto& [id, milli] : p->requests) absl::StrAppend(&sig, id, "=", milli, ";");
  absl::StrAppend(&sig, "|", api::Member(spec, "nodeSelector").dump(), "|",
                  api::Member(api::Member(spec, "affinity"), "nodeAffinity").dump(), "|",
                  api::Member(spec, "tolerations").dump());
  if (p->inter_pod != nullptr) {
    // Whom the terms attract and repel depends on the pod's own namespace
    // and labels (the default namespace, matchLabelKeys, the self match).
    const Json& a = api::Member(spec, "affinity");
    absl::StrAppend(&sig, "|", p->ns, "|", labels.dump(), "|",
                    api::Member(a, "podAffinity").dump(), "|",
                    api::Member(a, "podAntiAffinity").dump());
  }
  p->signature = std::move(sig);
  p->group_key = GroupKeyOf(pod);
  return p;
}

std::string FitError::Message(PreemptionNote note) const {
  if (num_nodes == 0) return "no nodes available to schedule pods";
  std::vector<std::string> parts;
  for (const auto& [reason, count] : reasons) parts.push_back(absl::StrCat(count, " ", reason));
  std::sort(parts.begin(), parts.end());
  std::string out =
      absl::StrCat("0/", num_nodes, " nodes are available: ", absl::StrJoin(parts, ", "), ".");
  switch (note) {
    case PreemptionNote::kNominated:
      return out;
    case PreemptionNote::kNotEligibleNever:
      return absl::StrCat(out, " preemption: not eligible due to preemptionPolicy=Never.");
    case PreemptionNote::kNotEligibleTerminating:
      return absl::StrCat(
          out, " preemption: not eligible due to a terminating pod on the nominated node.");
    case PreemptionNote::kNoVictims:
      break;
  }
  std::vector<std::string> preempt;
  if (unresolvable_nodes > 0) {
    preempt.push_back(
        absl::StrCat(unresolvable_nodes, " Preemption is not helpful for scheduling"));
  }
  if (resolvable_nodes > 0) {
    preempt.push_back(
        absl::StrCat(resolvable_nodes, " No preemption victims found for incoming pod"));
  }
  std::sort(preempt.begin(), preempt.end());
  return absl::StrCat(out, " preemption: 0/", num_nodes,
                      " nodes are available: ", absl::StrJoin(preempt, ", "), ".");
}

const NodeInfo* Cache::node(const std::string& name) const {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : &it->second;
}

bool Cache::UpsertNode(const Json& node) {
  api::core_v1::NodeView view = api::core_v1::NodeView::Parse(node);
  std::string name(view.meta.name);
  NodeInfo fresh;
  fresh.name = name;
  if (view.meta.labels != nullptr) fresh.labels = api::StringMap(*view.meta.labels);
  for (const api::core_v1::ResourceAmountView& r : view.Allocatable()) {
    if (r.amount.IsZero()) continue;  // A zero amount is no resource (as ParseResourceList).
    int id = resources_.Id(std::string(r.name));
    if (id >= (int)fresh.allocatable.size()) fresh.allocatable.resize(id + 1, 0);
    fresh.allocatable[id] = r.amount.milli();
  }
  fresh.taints = std::move(view.taints);
  fresh.unschedulable = view.unschedulable;
  fresh.ready = std::string(view.ReadyStatus());

  auto it = nodes_.find(name);
  if (it == nodes_.end()) {
    NodeInfo& added = nodes_.emplace(name, std::move(fresh)).first->second;
    // A node deleted and created again (an agent re-registering) still runs
    // the pods bound to it: their accounting, kept in `placed_`, is applied
    // again, so it does not start over at zero usage and over-commit.
    // O(placed pods), once per new node.
    for (const auto& [key, p] : placed_) {
      if (p.node == name) Apply(added, p, +1);
    }
    Index(added);
    ++generation_;
    return true;
  }
  NodeInfo& cur = it->second;
  bool changed = cur.labels != fresh.labels || cur.allocatable != fresh.allocatable ||
                 !SameTaints(cur.taints, fresh.taints) ||
                 cur.unschedulable != fresh.unschedulable || cur.ready != fresh.ready;
  if (!changed) return false;
  cur.labels = std::move(fresh.labels);
  Unindex(cur);
  cur.allocatable = std::move(fresh.allocatable);
  Index(cur);
  cur.taints = std::move(fresh.taints);
  cur.unschedulable = fresh.unschedulable;
  cur.ready = fresh.ready;
  ++generation_;
  return true;
}

void Cache::RemoveNode(const std::string& name) {
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return;
  Unindex(it->second);
  nodes_.erase(it);
  ++generation_;
  // Pods placed there keep their `placed_` entry; they are removed by their
  // own events, or counted again if the node comes back (UpsertNode).
}

void Cache::Apply(NodeInfo& n, const Placed& p, int sign) {
  for (const auto& [id, milli] : p.usage) {
    if (id >= (int)n.requested.size()) n.requested.resize(id + 1, 0);
    n.requested[id] += sign * milli;
  }
  n.nonzero_cpu += sign * p.nonzero_cpu;
  n.nonzero_mem += sign * p.nonzero_mem;
}

void Cache::AddPod(const PodInfo& pod, const std::string& node, bool assumed) {
  if (!nominated_.empty()) ClearNomination(pod.key);  // Placed: no longer waiting.
  auto cur = placed_.find(pod.key);
  if (cur != placed_.end() && cur->second.node == node && cur->second.usage == pod.requests) {
    cur->second.assumed = assumed;  // Confirmation of an assumption: nothing freed.
    cur->second.deleting = cur->second.deleting || pod.deleting;
    if (cur->second.labels != pod.labels && *cur->second.labels != *pod.labels) {
      cur->second.labels = pod.labels;  // Relabelled: inter-pod matches may change.
      ++generation_;
    }
    return;
  }
  RemovePod(pod.key);
  Placed p{node, pod.requests, pod.nonzero_cpu, pod.nonzero_mem, assumed,
           pod.priority, pod.created, pod.group_key, pod.deleting,
           pod.ns, pod.labels, pod.inter_pod};
  auto it = nodes_.find(node);
  if (it != nodes_.end()) {
    Unindex(it->second);
    Apply(it->second, p, +1);
    Index(it->second);
  }
  ++priorities_[pod.priority];
  if (pod.inter_pod != nullptr && !pod.inter_pod->anti_affinity.empty()) {
    anti_affinity_pods_.insert(pod.key);
  }
  placed_[pod.key] = std::move(p);
}

bool Cache::RemovePod(const std::string& key) {
  auto it = placed_.find(key);
  if (it == placed_.end()) return false;
  auto n = nodes_.find(it->second.node);
  if (n != nodes_.end()) {
    Unindex(n->second);
    Apply(n->second, it->second, -1);
    Index(n->second);
  }
  auto pr = priorities_.find(it->second.priority);
  if (pr != priorities_.end() && --pr->second <= 0) priorities_.erase(pr);
  if (!anti_affinity_pods_.empty()) anti_affinity_pods_.erase(key);
  placed_.erase(it);
  ++generation_;
  return true;
}

const PlacedPod* Cache::placed(const std::string& key) const {
  auto it = placed_.find(key);
  return it == placed_.end() ? nullptr : &it->second;
}

int32_t Cache::LowestPriority() const {
  return priorities_.empty() ? std::numeric_limits<int32_t>::max() : priorities_.begin()->first;
}

void Cache::MarkDeleting(const std::string& key) {
  auto it = placed_.find(key);
  if (it != placed_.end()) it->second.deleting = true;
}

void Cache::Nominate(const PodInfo& pod, const std::string& node) {
  nominated_[pod.key] = Nominated{node, pod.priority, pod.requests};
}

void Cache::ClearNomination(const std::string& key) {
  if (nominated_.erase(key) > 0) ++generation_;  // Frees room for other pods.
}

std::string Cache::NominatedNodeOf(const std::string& key) const {
  auto it = nominated_.find(key);
  return it == nominated_.end() ? "" : it->second.node;
}

std::vector<std::string> Cache::NominatedBelow(const std::string& node, int32_t priority) const {
  std::vector<std::string> out;
  for (const auto& [key, nom] : nominated_) {
    if (nom.node == node && nom.priority < priority) out.push_back(key);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void Cache::ForgetAssumed(const std::string& key) {
  auto it = placed_.find(key);
  if (it != placed_.end() && it->second.assumed) RemovePod(key);
}

bool Cache::IsAssumed(const std::string& key) const {
  auto it = placed_.find(key);
  return it != placed_.end() && it->second.assumed;
}

std::string Cache::NodeOf(const std::string& key) const {
  auto it = placed_.find(key);
  return it == placed_.end() ? "" : it->second.node;
}

bool Cache::PassesStaticFilters(const PodInfo& pod, const NodeInfo& n,
                                std::vector<std::string>* reasons) const {
  if (n.unschedulable &&
      !FindToleration(pod.tolerations,
                      Taint{kUnschedulableTaint, "", TaintEffect::kNoSchedule, ""})) {
    reasons->push_back("node(s) were unschedulable");
    return false;
  }
  for (const Taint& t : n.taints) {
    if (t.effect == TaintEffect::kPreferNoSchedule) continue;
    if (!FindToleration(pod.tolerations, t)) {
      reasons->push_back(UntoleratedTaint(t));
      return false;
    }
  }
  if (n.ready != "True") {
    Taint implied{n.ready == "Unknown" ? kUnreachableTaint : kNotReadyTaint, "",
                  TaintEffect::kNoSchedule, ""};
    if (!FindToleration(pod.tolerations, implied)) {
      reasons->push_back(UntoleratedTaint(implied));
      return false;
    }
  }
  if (!pod.affinity.Empty() && !pod.affinity.Matches(n.name, n.labels)) {
    reasons->push_back("node(s) didn't match Pod's node affinity/selector");
    return false;
  }
  return true;
}

bool Cache::FitsResources(const PodInfo& pod, const NodeInfo& n,
                          const std::vector<int64_t>* freed,
                          std::vector<std::string>* reasons) const {
  size_t before = reasons->size();
  auto fail = [&](int id) {
    reasons->push_back(id == kPods ? std::string("Too many pods")
                                   : absl::StrCat("Insufficient ", resources_.Name(id)));
  };
  if (freed == nullptr && nominated_.empty()) {  // The common case: plain fit.
    for (const auto& [id, milli] : pod.requests) {
      if (milli > n.Alloc(id) - n.Used(id)) fail(id);
    }
    return reasons->size() == before;
  }
  // Pods nominated here with priority >= the pod's keep their room: only
  // looked at while some pod is nominated (preemption is in progress).
  std::vector<int64_t> reserved;
  for (const auto& [key, nom] : nominated_) {
    if (nom.node != n.name || nom.priority < pod.priority || key == pod.key) continue;
    for (const auto& [id, milli] : nom.usage) {
      if (id >= (int)reserved.size()) reserved.resize(id + 1, 0);
      reserved[id] += milli;
    }
  }
  for (const auto& [id, milli] : pod.requests) {
    int64_t used = n.Used(id);
    if (freed != nullptr && id < (int)freed->size()) used -= (*freed)[id];
    if (id < (int)reserved.size()) used += reserved[id];
    if (milli > n.Alloc(id) - used) fail(id);
  }
  return reasons->size() == before;
}

bool Cache::Filter(const PodInfo& pod, const NodeInfo& n, const InterPodState& inter_pod,
                   std::vector<std::string>* reasons, bool* resolvable) const {
  *resolvable = false;
  if (!PassesStaticFilters(pod, n, reasons)) return false;
  *resolvable = true;
  if (!FitsResources(pod, n, nullptr, reasons)) return false;
  // After resource fit, as kube-scheduler orders its filters; batchd's
  // preemption does not evict pods to resolve it.
  *resolvable = false;
  return inter_pod.empty() || inter_pod.Passes(n.labels, reasons);
}

bool Cache::UpsertNamespace(const std::string& name, Labels labels) {
  auto it = namespace_labels_.find(name);
  if (it != namespace_labels_.end() && it->second == labels) return false;
  namespace_labels_[name] = std::move(labels);
  ++generation_;
  return true;
}

void Cache::RemoveNamespace(const std::string& name) { namespace_labels_.erase(name); }

InterPodState Cache::InterPodFor(const PodInfo& pod) const {
  auto placed_ref = [this](const Placed& p) {
    const NodeInfo* n = node(p.node);
    return PlacedPodRef{p.ns, p.labels.get(), p.inter_pod.get(),
                        n == nullptr ? nullptr : &n->labels};
  };
  return InterPodState::Compute(
      pod.ns, *pod.labels, pod.inter_pod.get(), namespace_labels_,
      [&](auto fn) {
        for (const auto& [key, p] : placed_) {
          if (key != pod.key) fn(placed_ref(p));
        }
      },
      [&](auto fn) {
        for (const std::string& key : anti_affinity_pods_) {
          auto it = placed_.find(key);
          if (it != placed_.end() && key != pod.key) fn(placed_ref(it->second));
        }
      });
}

int64_t Cache::Score(const PodInfo& pod, const NodeInfo& n) const {
  int64_t cpu = FreePercent(n.Alloc(kCpu), n.nonzero_cpu + pod.nonzero_cpu);
  int64_t mem = FreePercent(n.Alloc(kMemory), n.nonzero_mem + pod.nonzero_mem);
  return (cpu + mem) / 2;
}

Cache::NodeGroup Cache::GroupOf(const NodeInfo& n) {
  NodeGroup g;
  g.alloc_cpu = n.Alloc(kCpu);
  g.alloc_mem = n.Alloc(kMemory);
  g.nonzero_cpu = n.nonzero_cpu;
  g.nonzero_mem = n.nonzero_mem;
  g.bound = (FreePercent(g.alloc_cpu, g.nonzero_cpu) + FreePercent(g.alloc_mem, g.nonzero_mem)) / 2;
  return g;
}

void Cache::Index(const NodeInfo& n) { by_group_[GroupOf(n)].insert(&n); }

void Cache::Unindex(const NodeInfo& n) {
  auto it = by_group_.find(GroupOf(n));
  if (it == by_group_.end()) return;
  it->second.erase(&n);
  if (it->second.empty()) by_group_.erase(it);
}

ScheduleResult Cache::Schedule(const PodInfo& pod) {
  ScheduleResult r;
  r.error.num_nodes = num_nodes();
  // Score(pod, n) <= the group's bound: FreePercent falls as usage grows and
  // a pod's non-zero requests are never negative (else: the plain scan).
  if (pod.nonzero_cpu < 0 || pod.nonzero_mem < 0) return ScheduleByScan(pod);
  int64_t best = -1;
  const NodeInfo* winner = nullptr;
  std::vector<std::string> reasons;
  const InterPodState inter_pod = InterPodFor(pod);
  for (const auto& [g, members] : by_group_) {
    // Groups come by bound, highest first: none from here on can reach `best`.
    if (g.bound < best) break;
    const int64_t s = (FreePercent(g.alloc_cpu, g.nonzero_cpu + pod.nonzero_cpu) +
                       FreePercent(g.alloc_mem, g.nonzero_mem + pod.nonzero_mem)) / 2;
    if (s < best) continue;
    for (const NodeInfo* n : members) {
      // Equal scores go to the first name: a later member cannot win.
      if (s == best && n->name > winner->name) break;
      reasons.clear();
      bool resolvable = false;
      if (!Filter(pod, *n, inter_pod, &reasons, &resolvable)) {
        // Complete when nothing fits: then no group was cut short and
        // every node was filtered exactly once.
        if (winner == nullptr) {
          for (const auto& reason : reasons) ++r.error.reasons[reason];
          ++(resolvable ? r.error.resolvable_nodes : r.error.unresolvable_nodes);
        }
        continue;
      }
      best = s;
      winner = n;
      break;  // The rest of the group: the same score, later names.
    }
  }
  if (winner != nullptr) {
    r.node = winner->name;
    r.error = FitError{};
    r.error.num_nodes = num_nodes();
  }
  return r;
}

ScheduleResult Cache::ScheduleByScan(const PodInfo& pod) {
  ScheduleResult r;
  r.error.num_nodes = num_nodes();
  int64_t best = -1;
  std::vector<std::string> reasons;
  const InterPodState inter_pod = InterPodFor(pod);
  for (const auto& [name, n] : nodes_) {
    reasons.clear();
    bool resolvable = false;
    if (!Filter(pod, n, inter_pod, &reasons, &resolvable)) {
      for (const auto& reason : reasons) ++r.error.reasons[reason];
      ++(resolvable ? r.error.resolvable_nodes : r.error.unresolvable_nodes);
      continue;
    }
    int64_t s = Score(pod, n);
    if (s > best) {
      best = s;
      r.node = name;
    }
  }
  return r;
}

}  // namespace batchd::scheduler::internal
