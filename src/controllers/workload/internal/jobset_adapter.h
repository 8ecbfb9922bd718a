// The JobSet adapter (Kueue's `pkg/controller/jobs/jobset`): one Workload for
// the whole JobSet, one pod set per replicated job named after it, of
// replicas × min(parallelism, completions) pods (no partial admission), its
// topology request from the template's annotations (ranks: the completion
// index within a Job, the Job's index among the replicas), suspended until
// admitted, admitted as a whole, finished when the JobSet's terminalState is
// set. Admission's node selectors, tolerations and TAS marks go into each
// replicated job's pod template (allowed while the JobSet is suspended); the
// JobSet controller merges them into the child Jobs when it resumes them.
// JobSets managed by another controller (spec.managedBy) are skipped.
//
// Thread-safety: stateless; all methods are const.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "controllers/workload/adapter.h"

namespace batchd::controllers::workload::internal {

class JobSetAdapter : public JobAdapter {
 public:
  GroupVersionKind Gvk() const override {
    return {"jobset.x-k8s.io", "v1alpha2", "JobSet", "jobsets"};
  }
  bool Skip(const Json& js) const override;
  bool IsSuspended(const Json& js) const override;
  bool IsActive(const Json& js) const override;
  std::optional<FinishedState> Finished(const Json& js) const override;
  bool PodsReady(const Json& js) const override;
  absl::StatusOr<std::vector<Json>> PodSets(const Json& js) const override;
  void Suspend(Json& js) const override;
  absl::Status RunWithPodSetsInfo(Json& js, const std::vector<PodSetInfo>& infos) const override;
  bool RestorePodSetsInfo(Json& js, const std::vector<PodSetInfo>& originals) const override;
};

}  // namespace batchd::controllers::workload::internal
