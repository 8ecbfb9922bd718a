// The simulator's invariants (issue 15), checked after every step from the
// objects themselves, never from a component's own bookkeeping, so a bug in
// the admission core or the scheduler is caught rather than repeated:
//   quota     no ClusterQueue holds more than nominal + borrowingLimit of a
//             (flavor, resource) (nominal alone outside a cohort), and no
//             cohort tree lends more than it has: the usage above each
//             ClusterQueue's guaranteed part (nominal - lendingLimit) summed
//             over the tree stays within what the tree can lend (the
//             lendable part of every member's nominal plus the cohorts' own
//             quotas). Usage is status.admission's resourceUsage of every
//             Workload that holds a reservation and is not Finished.
//   nodes     the effective requests of the non-terminal pods bound to a
//             node (and their number, against `pods`) stay within its
//             allocatable;
//   binding   a pod's spec.nodeName never changes once set;
//   admission a Workload's status.admission never changes to another
//             ClusterQueue or assignment while it is held (admitted twice);
//   gangs     when a member of a gang (PodGroup, or a scheduling.k8s.io
//             Workload pod group with a gang policy) binds, at least
//             minCount members are bound.
// The checker is fed object changes (informer handlers) and checks only what
// changed since the last Check, so a step costs O(changes), not O(cluster).
// Intermediate cohorts' own limits are not checked (only each tree's root).
//
// Thread-safety: none; the simulator's one thread drives it.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/field_error.h"
#include "api/resource/amount.h"

namespace batchd::sim {

// "flavor/resource" -> amount.
using Usage = std::map<std::string, api::Amount>;

class InvariantChecker {
 public:
  // Gang policy lookup: minCount of the group ("pg/<ns>/<name>" or
  // "wl/<ns>/<name>/<podGroup>"), nullopt when it is no gang (or unknown).
  using GangMinCount = std::function<std::optional<int>(const std::string& policy)>;
  explicit InvariantChecker(GangMinCount gangs = {}) : gangs_(std::move(gangs)) {}

  // Object changes; `old_obj` / `new_obj` null for an add / delete.
  void OnWorkload(const api::Json* old_obj, const api::Json* new_obj);
  void OnPod(const api::Json* old_obj, const api::Json* new_obj);
  void OnNode(const api::Json* obj, bool deleted);
  void OnClusterQueue(const api::Json* obj, bool deleted);
  void OnCohort(const api::Json* obj, bool deleted);

  // Checks what changed since the last call; the violations found (each
  // names the objects), empty when none.
  std::vector<std::string> Check();

  // Current admitted usage of a ClusterQueue (for utilisation), and its
  // nominal quota.
  const Usage& CqUsage(const std::string& cq) const;
  Usage CqNominal(const std::string& cq) const;
  std::vector<std::string> ClusterQueues() const;
  std::string CohortOf(const std::string& cq) const;

 private:
  struct Limit {
    api::Amount nominal;
    std::optional<api::Amount> borrowing;
    std::optional<api::Amount> lending;
  };
  struct Cq {
    std::string cohort;
    std::map<std::string, Limit> limits;  // "flavor/resource"
    Usage usage;
    bool exists = false;
  };
  struct Admitted {
    std::string cq;
    Usage usage;
    std::string admission;  // status.admission, serialized (for "admitted twice").
  };
  struct BoundPod {
    std::string node;
    std::map<std::string, api::Amount> requests;
    std::string group;  // Gang group key, "" when none.
  };
  std::string Root(const std::string& cohort) const;
  void ApplyWorkload(const std::string& key, std::optional<Admitted> next);
  void ApplyPod(const std::string& key, std::optional<BoundPod> next);
  void RebuildTrees();

  GangMinCount gangs_;
  std::map<std::string, Cq> cqs_;
  std::map<std::string, std::string> cohort_parent_;
  std::map<std::string, Usage> cohort_quota_;  // A cohort's own nominal quotas.
  std::map<std::string, Admitted> admitted_;   // Workload key -> its reservation.
  std::map<std::string, std::map<std::string, api::Amount>> node_alloc_;
  std::map<std::string, std::map<std::string, api::Amount>> node_used_;
  std::map<std::string, BoundPod> bound_;      // Pod key -> binding.
  std::map<std::string, std::set<std::string>> group_bound_;  // Gang key -> bound pod keys.
  std::set<std::string> dirty_cqs_, dirty_nodes_, dirty_groups_;
  bool trees_dirty_ = true;
  std::vector<std::string> violations_;  // Found while applying changes.
};

}  // namespace batchd::sim
