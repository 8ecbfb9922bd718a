// Internal to controllers/jobset: the pure pieces of exclusive placement
// (exclusive_placement.h): which pod leads its Job, how the leader's
// affinities read, and which leaders the placement controller watches.
//
// Thread-safety: pure functions over JSON the caller owns.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "api/field_error.h"

namespace batchd::controllers::jobset::internal {

// The pod has completion index 0 (annotation batch.kubernetes.io/job-completion-index).
bool IsLeaderPod(const api::Json& pod);

// The label selector of the follower's leader: its job-key and completion
// index 0; nullopt when the pod has no job-key label.
std::optional<std::string> LeaderSelector(const api::Json& follower);

// Appends to the leader pod's required pod affinity a term for its own
// Job's pods (job-key In [own]) and to its required anti-affinity a term for
// other Jobs' pods of its priority (job-key Exists, job-key NotIn [own],
// jobset.sigs.k8s.io/priority In [own]), both with `topology_key` and an
// empty namespaceSelector (every namespace).
void SetExclusiveAffinities(api::Json& pod, std::string_view topology_key);

// A leader the placement controller checks: exclusive placement without the
// node-selector strategy, index 0, scheduled, live, with a job-key label and
// a controlling owner.
bool ScheduledExclusiveLeader(const api::Json& pod);

}  // namespace batchd::controllers::jobset::internal
