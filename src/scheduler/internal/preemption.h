// Internal to scheduler/: pod-priority preemption, as kube-scheduler's
// DefaultPreemption plugin decides it, over the scheduler's cache. A pod
// that fits nowhere, whose preemptionPolicy is not Never, looks at every
// node that fails it only on resources (pod slots, cpu, ...): it removes
// the node's pods of strictly lower priority, lowest first, and when it then
// fits, adds back ("reprieves") as many as still let it fit, most important
// first (higher priority, then earlier start) — the minimal victim set of
// that node. The node chosen is the one whose victims matter least: lowest
// highest-victim priority, then smallest sum of victim priorities, then
// fewest victims, then the latest earliest-start among its victims, then
// node name. PodDisruptionBudgets do not exist in batchd, so they are not
// counted.
//
// Gangs: never a part of a gang without the whole gang. A placed member of a
// gang (`Gangs`) is a candidate only together with every other placed
// member of its gang, on whatever node they run, and only when all of them
// have a lower priority than the preemptor; the whole gang is then one
// candidate "unit", reprieved or evicted as one. Its members on the node
// being evaluated free room there; the ones elsewhere are evicted too and
// count among the victims when nodes are compared (so a gang costs what it
// is). Pods of no group or of a basic-policy group are units of one.
// Pods already being deleted are not victims: their room is coming.
//
// Pure: no I/O, no clock. Thread-safety: none; the Scheduler serializes
// access with its mutex.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "scheduler/internal/cache.h"

namespace batchd::scheduler::internal {

struct Victim {
  std::string key;  // "ns/name".
  int32_t priority = 0;
  absl::Time start;
  std::string group_key;  // Set when the victim is evicted as part of its whole gang.
};

// The gangs among the placed pods: group key -> the keys of the gang's
// placed (bound or assumed) members. A placed pod whose group key is absent
// (no group, a basic-policy group) is a victim on its own.
using Gangs = absl::flat_hash_map<std::string, std::vector<std::string>>;

// Whether a pod may preempt (kube-scheduler's PodEligibleToPreemptOthers,
// plus the cheap test that some placed pod is of lower priority).
enum class Eligibility {
  kEligible,
  kNever,                   // preemptionPolicy Never (or a gated pod).
  kNoLowerPriority,         // No placed pod has a lower priority: nobody to preempt.
  kTerminatingOnNominated,  // A lower-priority pod on its nominated node is leaving.
};

struct Preemption {
  std::string node;
  std::vector<Victim> victims;  // Most important first.
};

// Whether `pod` may preempt at all: its policy is not Never, some placed pod
// has a lower priority, and it is not already nominated to a node where a
// lower-priority pod is still terminating (it waits for that room instead).
// Cheap: O(1) unless the pod is nominated (then O(placed pods)).
Eligibility PreemptionEligibility(const Cache& cache, const PodInfo& pod);
inline bool EligibleToPreempt(const Cache& cache, const PodInfo& pod) {
  return PreemptionEligibility(cache, pod) == Eligibility::kEligible;
}

// The node and minimal victims that let `pod` fit, or nullopt when
// preempting helps nowhere.
std::optional<Preemption> FindPreemption(const Cache& cache, const PodInfo& pod,
                                         const Gangs& gangs = {});

// The victims `pod` needs on `n` among `pods` (keys of pods placed there),
// the minimal set of units, or nullopt when even removing every candidate
// does not make it fit.
std::optional<std::vector<Victim>> SelectVictimsOnNode(const Cache& cache, const PodInfo& pod,
                                                       const NodeInfo& n,
                                                       const std::vector<std::string>& pods,
                                                       const Gangs& gangs = {});

}  // namespace batchd::scheduler::internal
