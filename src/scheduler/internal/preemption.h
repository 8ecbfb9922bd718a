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
// Gangs: members of a pod group (`group_key`) are never victims. Evicting a
// part of a gang would break it, and evicting a whole gang from one node's
// view needs a cross-node plan; excluding them is the simple, safe rule.
// Pods already being deleted are not victims either: their room is coming.
//
// Pure: no I/O, no clock. Thread-safety: none; the Scheduler serializes
// access with its mutex.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "scheduler/internal/cache.h"

namespace batchd::scheduler::internal {

struct Victim {
  std::string key;  // "ns/name".
  int32_t priority = 0;
  absl::Time start;
};

struct Preemption {
  std::string node;
  std::vector<Victim> victims;  // Most important first.
};

// Whether `pod` may preempt at all (kube-scheduler's
// PodEligibleToPreemptOthers): its policy is not Never, some placed pod has
// a lower priority, and it is not already nominated to a node where a
// lower-priority pod is still terminating (it waits for that room instead).
// Cheap: O(1) unless the pod is nominated (then O(placed pods)).
bool EligibleToPreempt(const Cache& cache, const PodInfo& pod);

// The node and minimal victims that let `pod` fit, or nullopt when
// preempting helps nowhere.
std::optional<Preemption> FindPreemption(const Cache& cache, const PodInfo& pod);

// The victims `pod` needs on `n` among `pods` (keys of pods placed there),
// the minimal set, or nullopt when even removing every lower-priority one
// does not make it fit.
std::optional<std::vector<Victim>> SelectVictimsOnNode(const Cache& cache, const PodInfo& pod,
                                                       const NodeInfo& n,
                                                       const std::vector<std::string>& pods);

}  // namespace batchd::scheduler::internal
