#include "sim/invariants.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "api/codec/codec.h"
#include "api/json_access.h"
#include "api/kueue/queue_views.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "common/string_view.h"
#include "scheduler/predicates.h"

namespace batchd::sim {

using api::Amount;
using api::Json;

namespace {

std::string Key(const Json& obj) {
  std::string ns = api::meta::GetNamespace(obj);
  return ns.empty() ? api::meta::GetName(obj) : ns + "/" + api::meta::GetName(obj);
}

std::string Fmt(Amount a) {
  if (a.milli() % 1000 == 0) return std::to_string(a.milli() / 1000);
  return std::to_string(a.milli()) + "m";
}

// The gang group of a pod ("" for none) and the key of its policy object.
std::pair<std::string, std::string> GroupOf(const Json& pod) {
  const Json* spec = pod.is_object() && pod.contains("spec") ? &pod["spec"] : nullptr;
  if (!spec || !spec->is_object()) return {};
  std::string ns = api::meta::GetNamespace(pod);
  auto g = spec->find("schedulingGroup");
  if (g != spec->end() && g->is_object() && g->value("podGroupName", "") != "") {
    std::string policy = "pg/" + ns + "/" + g->value("podGroupName", "");
    return {policy, policy};
  }
  auto r = spec->find("workloadRef");
  if (r != spec->end() && r->is_object() && r->value("name", "") != "") {
    std::string policy = "wl/" + ns + "/" + r->value("name", "") + "/" + r->value("podGroup", "");
    return {policy + "/" + r->value("podGroupReplicaKey", ""), policy};
  }
  return {};
}

bool Terminal(const Json& pod) {
  // Read in place: value("status", ...) would copy the whole status.
  std::string_view phase = api::StringMember(api::MemberObject(pod, "status"), "phase");
  return phase == "Succeeded" || phase == "Failed";
}

}  // namespace

void InvariantChecker::OnWorkload(const Json* old_obj, const Json* new_obj) {
  const Json& any = new_obj ? *new_obj : *old_obj;
  std::string key = Key(any);
  std::optional<Admitted> next;
  if (new_obj) {
    auto view = api::kueue::WorkloadView::Parse(*new_obj);
    if (view.has_admission && !view.IsConditionTrue("Finished")) {
      Admitted a;
      a.cq = std::string(view.admission_cluster_queue);
      auto sets = api::kueue::WorkloadPodSetsView::Parse(*new_obj);
      for (const auto& psa : sets.assignments) {
        if (!psa.resource_usage) continue;
        for (const auto& ra : api::kueue::ParseResourceList(*psa.resource_usage)) {
          for (const auto& [res, flavor] : psa.resource_flavors) {
            if (res == ra.name) a.usage[absl::StrCat(Sv(flavor), "/", Sv(res))] += ra.amount;
          }
        }
      }
      a.admission = api::ToJson((*new_obj)["status"]["admission"]);
      next = std::move(a);
    }
  }
  auto it = admitted_.find(key);
  if (it != admitted_.end() && next && it->second.admission != next->admission) {
    violations_.push_back(absl::StrCat("workload ", key, " admitted twice: held ",
                                       it->second.admission, ", then ", next->admission,
                                       " without releasing the first"));
  }
  ApplyWorkload(key, std::move(next));
}

void InvariantChecker::ApplyWorkload(const std::string& key, std::optional<Admitted> next) {
  auto it = admitted_.find(key);
  if (it != admitted_.end() && next && it->second.cq == next->cq &&
      it->second.usage == next->usage && it->second.admission == next->admission) {
    return;  // The same reservation (a status write that left it alone).
  }
  if (it != admitted_.end()) {
    Cq& cq = cqs_[it->second.cq];
    for (const auto& [k, v] : it->second.usage) cq.usage[k] -= v;
    dirty_cqs_.insert(it->second.cq);
    admitted_.erase(it);
  }
  if (next) {
    Cq& cq = cqs_[next->cq];
    for (const auto& [k, v] : next->usage) cq.usage[k] += v;
    dirty_cqs_.insert(next->cq);
    admitted_.emplace(key, std::move(*next));
  }
}

void InvariantChecker::OnPod(const Json* old_obj, const Json* new_obj) {
  const Json& any = new_obj ? *new_obj : *old_obj;
  std::string key = Key(any);
  // Read in place (value("spec", ...) would copy the whole spec).
  auto node_of = [](const Json* p) {
    return p ? api::CopyStringMember(api::MemberObject(*p, "spec"), "nodeName") : std::string();
  };
  std::string old_node = node_of(old_obj);
  std::string new_node = node_of(new_obj);
  if (!old_node.empty() && new_obj && new_node != old_node) {
    violations_.push_back(absl::StrCat("pod ", key, " bound twice: to node ", old_node,
                                       ", then to node ", new_node.empty() ? "<none>" : new_node));
  }
  std::optional<BoundPod> next;
  if (new_obj && !new_node.empty() && !Terminal(*new_obj)) {
    BoundPod b;
    b.node = new_node;
    for (const auto& [r, a] : scheduler::PodRequests((*new_obj)["spec"])) b.requests[r] = a;
    b.requests["pods"] += Amount::FromUnits(1);
    b.group = GroupOf(*new_obj).first;
    next = std::move(b);
  }
  // A gang member that binds now: its group is checked.
  if (new_obj && !new_node.empty() && old_node.empty()) {
    std::string group = GroupOf(*new_obj).first;
    if (!group.empty()) {
      group_bound_[group].insert(key);
      dirty_groups_.insert(group);
    }
  }
  if (!new_obj) {
    std::string group = GroupOf(*old_obj).first;
    if (!group.empty()) {
      auto g = group_bound_.find(group);
      if (g != group_bound_.end()) {
        g->second.erase(key);
        if (g->second.empty()) group_bound_.erase(g);
      }
    }
  }
  ApplyPod(key, std::move(next));
}

void InvariantChecker::ApplyPod(const std::string& key, std::optional<BoundPod> next) {
  auto it = bound_.find(key);
  if (it != bound_.end() && next && it->second.node == next->node &&
      it->second.requests == next->requests && it->second.group == next->group) {
    return;  // The same binding (a status write of a running pod).
  }
  if (it != bound_.end()) {
    auto& used = node_used_[it->second.node];
    for (const auto& [r, a] : it->second.requests) used[r] -= a;
    bound_.erase(it);
  }
  if (next) {
    auto& used = node_used_[next->node];
    for (const auto& [r, a] : next->requests) used[r] += a;
    dirty_nodes_.insert(next->node);
    bound_.emplace(key, std::move(*next));
  }
}

void InvariantChecker::OnNode(const Json* obj, bool deleted) {
  std::string name = api::meta::GetName(*obj);
  if (deleted) {
    node_alloc_.erase(name);
    return;
  }
  const Json& st = api::MemberObject(*obj, "status");  // Not copied.
  const Json* alloc = nullptr;
  if (st.is_object() && st.contains("allocatable") && st["allocatable"].is_object()) {
    alloc = &st["allocatable"];
  } else if (st.is_object() && st.contains("capacity") && st["capacity"].is_object()) {
    alloc = &st["capacity"];
  }
  std::map<std::string, Amount> a;
  if (alloc) {
    for (const auto& [r, q] : scheduler::ParseResourceList(*alloc)) a[r] = q;
  }
  if (node_alloc_[name] != a) {
    node_alloc_[name] = std::move(a);
    dirty_nodes_.insert(name);
  }
}

void InvariantChecker::OnClusterQueue(const Json* obj, bool deleted) {
  std::string name = api::meta::GetName(*obj);
  Cq& cq = cqs_[name];
  trees_dirty_ = true;
  dirty_cqs_.insert(name);
  cq.limits.clear();
  cq.cohort.clear();
  cq.exists = !deleted;
  if (deleted) return;
  auto view = api::kueue::ClusterQueueView::Parse(*obj);
  cq.cohort = std::string(view.cohort_name);
  auto groups = api::kueue::ResourceGroupsView::Parse(*obj);
  for (const auto& g : groups.groups) {
    for (const auto& f : g.flavors) {
      for (const auto& r : f.resources) {
        cq.limits[absl::StrCat(Sv(f.name), "/", Sv(r.name))] =
            Limit{r.nominal_quota, r.borrowing_limit, r.lending_limit};
      }
    }
  }
}

void InvariantChecker::OnCohort(const Json* obj, bool deleted) {
  std::string name = api::meta::GetName(*obj);
  trees_dirty_ = true;
  cohort_parent_.erase(name);
  cohort_quota_.erase(name);
  if (deleted) return;
  auto view = api::kueue::CohortView::Parse(*obj);
  if (!view.parent_name.empty()) cohort_parent_[name] = std::string(view.parent_name);
  auto groups = api::kueue::ResourceGroupsView::Parse(*obj);
  for (const auto& g : groups.groups) {
    for (const auto& f : g.flavors) {
      for (const auto& r : f.resources) {
        cohort_quota_[name][absl::StrCat(Sv(f.name), "/", Sv(r.name))] += r.nominal_quota;
      }
    }
  }
}

std::string InvariantChecker::Root(const std::string& cohort) const {
  std::string cur = cohort;
  for (int i = 0; i < 64; ++i) {  // Kueue refuses cycles; 64 bounds a bad chain.
    auto it = cohort_parent_.find(cur);
    if (it == cohort_parent_.end()) return cur;
    cur = it->second;
  }
  return cur;
}

std::vector<std::string> InvariantChecker::Check() {
  std::vector<std::string> out = std::move(violations_);
  violations_.clear();
  // ClusterQueue-level limits.
  std::set<std::string> roots;
  for (const std::string& name : dirty_cqs_) {
    auto it = cqs_.find(name);
    if (it == cqs_.end()) continue;
    const Cq& cq = it->second;
    if (!cq.cohort.empty()) roots.insert(Root(cq.cohort));
    for (const auto& [k, used] : cq.usage) {
      auto l = cq.limits.find(k);
      if (l == cq.limits.end() || used.IsZero()) continue;
      std::optional<Amount> max;
      if (cq.cohort.empty()) {
        max = l->second.nominal;
      } else if (l->second.borrowing) {
        max = l->second.nominal + *l->second.borrowing;
      }
      if (max && used > *max) {
        std::string who;
        for (const auto& [wk, a] : admitted_) {
          if (a.cq == name && a.usage.count(k)) who += (who.empty() ? "" : ", ") + wk;
          if (who.size() > 400) {
            who += ", ...";
            break;
          }
        }
        out.push_back(absl::StrCat("ClusterQueue ", name, " over quota: ", k, " admitted ",
                                   Fmt(used), " > nominal ", Fmt(l->second.nominal),
                                   cq.cohort.empty() ? "" : " + borrowingLimit",
                                   l->second.borrowing ? " " + Fmt(*l->second.borrowing) : "",
                                   " (workloads: ", who, ")"));
      }
    }
  }
  if (trees_dirty_) {
    for (const auto& [name, cq] : cqs_) {
      if (!cq.cohort.empty()) roots.insert(Root(cq.cohort));
    }
    trees_dirty_ = false;
  }
  // Cohort trees: usage above the guaranteed parts within what can be lent.
  // O(members of the touched trees); trees are touched only by changes.
  if (!roots.empty()) {
    std::map<std::string, Usage> pool, over;
    std::map<std::string, std::vector<std::string>> members;
    for (const auto& [name, cq] : cqs_) {
      if (cq.cohort.empty() || !cq.exists) continue;
      std::string root = Root(cq.cohort);
      if (!roots.count(root)) continue;
      members[root].push_back(name);
      for (const auto& [k, l] : cq.limits) {
        Amount guaranteed = l.lending ? std::max(l.nominal - *l.lending, Amount()) : Amount();
        pool[root][k] += l.nominal - guaranteed;
        auto u = cq.usage.find(k);
        if (u != cq.usage.end() && u->second > guaranteed) over[root][k] += u->second - guaranteed;
      }
    }
    for (const auto& [cohort, quota] : cohort_quota_) {
      std::string root = Root(cohort);
      if (!roots.count(root)) continue;
      for (const auto& [k, a] : quota) pool[root][k] += a;
    }
    for (const auto& [root, o] : over) {
      for (const auto& [k, used] : o) {
        Amount have = pool[root][k];
        if (used > have) {
          std::string names;
          for (const auto& m : members[root]) names += (names.empty() ? "" : ", ") + m;
          out.push_back(absl::StrCat("cohort ", root, " lends more than it has: ", k, " ",
                                     Fmt(used), " borrowed or shared > ", Fmt(have),
                                     " lendable (ClusterQueues: ", names, ")"));
        }
      }
    }
  }
  dirty_cqs_.clear();
  // Nodes.
  for (const std::string& node : dirty_nodes_) {
    auto a = node_alloc_.find(node);
    auto u = node_used_.find(node);
    if (u == node_used_.end()) continue;
    for (const auto& [r, used] : u->second) {
      if (used.IsZero() || used < Amount()) continue;
      Amount have;
      if (a != node_alloc_.end()) {
        auto h = a->second.find(r);
        if (h == a->second.end()) {
          if (r == "pods") continue;  // Allocatable without `pods`: not limited.
        } else {
          have = h->second;
        }
      }
      if (used > have) {
        std::string pods;
        for (const auto& [pk, b] : bound_) {
          if (b.node == node) pods += (pods.empty() ? "" : ", ") + pk;
          if (pods.size() > 400) {
            pods += ", ...";
            break;
          }
        }
        out.push_back(absl::StrCat("node ", node, " over allocatable: ", r, " requested ",
                                   Fmt(used), " > allocatable ", Fmt(have), " (pods: ", pods,
                                   ")"));
      }
    }
  }
  dirty_nodes_.clear();
  // Gangs: a bind happened; at least minCount members are bound.
  for (const std::string& group : dirty_groups_) {
    auto g = group_bound_.find(group);
    if (g == group_bound_.end() || !gangs_) continue;
    std::string policy = group.substr(0, 2) == "pg" ? group : group.substr(0, group.rfind('/'));
    std::optional<int> min = gangs_(policy);
    if (min && static_cast<int>(g->second.size()) < *min) {
      std::string pods;
      for (const auto& p : g->second) pods += (pods.empty() ? "" : ", ") + p;
      out.push_back(absl::StrCat("gang ", group, " partly bound: ", g->second.size(),
                                 " of minCount ", *min, " pods bound (", pods, ")"));
    }
  }
  dirty_groups_.clear();
  return out;
}

const Usage& InvariantChecker::CqUsage(const std::string& cq) const {
  static const Usage* empty = new Usage();
  auto it = cqs_.find(cq);
  return it == cqs_.end() ? *empty : it->second.usage;
}

Usage InvariantChecker::CqNominal(const std::string& cq) const {
  Usage out;
  auto it = cqs_.find(cq);
  if (it == cqs_.end()) return out;
  for (const auto& [k, l] : it->second.limits) out[k] = l.nominal;
  return out;
}

std::vector<std::string> InvariantChecker::ClusterQueues() const {
  std::vector<std::string> out;
  for (const auto& [name, cq] : cqs_) {
    if (cq.exists) out.push_back(name);
  }
  return out;
}

std::string InvariantChecker::CohortOf(const std::string& cq) const {
  auto it = cqs_.find(cq);
  return it == cqs_.end() ? "" : it->second.cohort;
}

}  // namespace batchd::sim
