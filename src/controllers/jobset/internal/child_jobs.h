// Internal to controllers/jobset: a JobSet's child Jobs — sorting the Jobs it
// controls into the current restart attempt's active / succeeded / failed
// ones and the previous attempts' ones (by the restart-attempt label, as
// upstream does, so the state survives a controller restart), and counting
// them per replicated job.
//
// Thread-safety: pure functions over immutable informer objects.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "api/batch/v1/job_view.h"
#include "api/jobset/v1alpha2/jobset_view.h"
#include "api/jobset/v1alpha2/jobset_writers.h"
#include "client/informer.h"

namespace batchd::controllers::jobset::internal {

struct ChildJob {
  client::ObjectRef ref;  // Keeps the views below valid.
  api::batch_v1::JobView view;
  std::string_view rjob;  // The replicatedjob-name label.
  // The Failed=True condition of a failed Job.
  std::string_view failure_reason;
  std::string_view failure_message;
  std::optional<absl::Time> failure_time;

  std::string_view name() const { return view.meta.name; }
};

struct ChildJobs {
  // The current attempt (restart-attempt label == status.restarts).
  std::vector<ChildJob> active;
  std::vector<ChildJob> succeeded;
  std::vector<ChildJob> failed;
  // Earlier attempts (label < status.restarts, or unreadable): deleted.
  std::vector<ChildJob> previous;

  // Some Job of any attempt has this name.
  bool Has(std::string_view name) const;
};

// Sorts `jobs` (Jobs the JobSet controls) by attempt and state.
ChildJobs Classify(const std::vector<client::ObjectRef>& jobs, int32_t restarts);

// status.replicatedJobsStatus from the current attempt's Jobs, one entry per
// replicated job of `spec`, in spec order.
std::vector<api::jobset_v1alpha2::ReplicatedJobCounts> CountReplicatedJobs(
    const api::jobset_v1alpha2::JobSetSpecView& spec, const ChildJobs& jobs);

// The counts of `rjob` in `counts`, or nullptr.
const api::jobset_v1alpha2::ReplicatedJobCounts* FindCounts(
    const std::vector<api::jobset_v1alpha2::ReplicatedJobCounts>& counts, std::string_view rjob);

}  // namespace batchd::controllers::jobset::internal
