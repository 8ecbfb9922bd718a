// The batch/v1 Job adapter (Kueue's `pkg/controller/jobs/job`): one podSet
// "main" of `min(parallelism, completions)` pods, partial admission through
// the `kueue.x-k8s.io/job-min-parallelism` annotation (and
// `kueue.x-k8s.io/job-completions-equal-parallelism` to keep completions in
// step), finished when Complete or Failed is True.
//
// Thread-safety: stateless; all methods are const.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "controllers/workload/adapter.h"

namespace batchd::controllers::workload::internal {

inline constexpr char kMinParallelismAnnotation[] = "kueue.x-k8s.io/job-min-parallelism";
inline constexpr char kCompletionsEqualParallelismAnnotation[] =
    "kueue.x-k8s.io/job-completions-equal-parallelism";

// The pods one run of `job` needs at once: parallelism (default 1), capped
// by completions when set.
int32_t JobPodsCount(const Json& job);
// The min-parallelism annotation as an integer, if present and numeric.
std::optional<int32_t> JobMinCount(const Json& job);

class BatchJobAdapter : public JobAdapter {
 public:
  // `jobset_integrated`: whether the `jobset.x-k8s.io/jobset` framework is
  // enabled; only then are a JobSet's child Jobs left to their parent
  // (Kueue's IsOwnerManagedByKueue). Otherwise they are plain Jobs.
  explicit BatchJobAdapter(bool jobset_integrated = true) : jobset_integrated_(jobset_integrated) {}
  GroupVersionKind Gvk() const override { return {"batch", "v1", "Job", "jobs"}; }
  bool Skip(const Json& job) const override;
  bool IsSuspended(const Json& job) const override;
  bool IsActive(const Json& job) const override;
  std::optional<FinishedState> Finished(const Json& job) const override;
  bool PodsReady(const Json& job) const override;
  absl::StatusOr<std::vector<Json>> PodSets(const Json& job) const override;
  void Suspend(Json& job) const override;
  absl::Status RunWithPodSetsInfo(Json& job, const std::vector<PodSetInfo>& infos) const override;
  bool RestorePodSetsInfo(Json& job, const std::vector<PodSetInfo>& originals) const override;
  bool ResetStatusForRestore(Json& job) const override;
  std::vector<std::pair<std::string, int32_t>> ReclaimablePods(const Json& job) const override;

 private:
  bool jobset_integrated_ = true;
};

}  // namespace batchd::controllers::workload::internal
