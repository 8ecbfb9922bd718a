// The job-integration seam of Kueue-style queueing (Kueue's jobframework):
// `JobAdapter` is what one kind of job (batch/v1 Job today; JobSet and pod
// groups later) must provide so that ONE generic reconciler can queue it —
// create its Workload, keep it suspended until the Workload is admitted, run
// it with the admitted flavors' node labels and tolerations, stop it again on
// eviction and report when it finished.
//
// Adapters are stateless readers and in-place editors of the job's JSON; the
// reconciler does every API write. Thread-safety: adapter methods are const
// and must be safe to call concurrently. `AddIntegration` is called once per
// adapter and Manager, before the manager starts; the manager owns the
// controller, the adapter lives as long as its informers.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "api/field_error.h"
#include "reconcile/context.h"

namespace batchd::controllers::workload {

using api::Json;

struct GroupVersionKind {
  std::string group;    // "batch"
  std::string version;  // "v1"
  std::string kind;     // "Job"
  std::string plural;   // "jobs"
  std::string ApiVersion() const { return group.empty() ? version : group + "/" + version; }
};

// What admission decided for one podSet (or, when restoring, what the pod
// template held before admission): the pod count and the scheduling
// directives to merge into the template.
struct PodSetInfo {
  std::string name;
  int32_t count = 0;
  Json node_selector = Json::object();  // label -> value
  Json tolerations = Json::array();     // core/v1 Toleration objects
  // Topology-aware admission's marks (not part of ToJson: they are removed,
  // not restored, when the job stops): template labels and annotations to
  // add, and scheduling gates that hold the pods until they are placed.
  Json labels = Json::object();
  Json annotations = Json::object();
  std::vector<std::string> scheduling_gates;

  Json ToJson() const;
  static std::optional<PodSetInfo> FromJson(const Json& j);
  friend bool operator==(const PodSetInfo&, const PodSetInfo&) = default;
};

struct FinishedState {
  bool success = true;
  std::string message;
};

class JobAdapter {
 public:
  virtual ~JobAdapter() = default;

  // The kind this adapter handles; Workloads get a controller reference to it.
  virtual GroupVersionKind Gvk() const = 0;
  // True when the reconciler must leave the object alone (e.g. another
  // controller manages it, or it belongs to a parent integration).
  virtual bool Skip(const Json& obj) const { (void)obj; return false; }

  virtual bool IsSuspended(const Json& obj) const = 0;
  // True while any of its pods may still run (active or terminating).
  virtual bool IsActive(const Json& obj) const = 0;
  // Set once the job completed or failed for good.
  virtual std::optional<FinishedState> Finished(const Json& obj) const = 0;
  // True when the ready + succeeded pods reach the expected count.
  virtual bool PodsReady(const Json& obj) const = 0;
  // The Workload `spec.podSets` (1..8 entries of {name, count, minCount?,
  // template}); templates carry requests defaulted from limits.
  virtual absl::StatusOr<std::vector<Json>> PodSets(const Json& obj) const = 0;
  // The (pod) PriorityClass name the job asks for; "" falls back to the
  // first podSet template's `priorityClassName`.
  virtual std::string PriorityClassName(const Json& obj) const { (void)obj; return ""; }

  // In-place edits; the reconciler writes the result.
  virtual void Suspend(Json& obj) const = 0;
  // Unsuspends and merges `infos` (one per podSet, in podSet order) into the
  // pod templates: node selectors, tolerations, and counts for partial
  // admission.
  virtual absl::Status RunWithPodSetsInfo(Json& obj, const std::vector<PodSetInfo>& infos) const = 0;
  // Puts back the pre-admission directives and counts; returns whether
  // anything changed.
  virtual bool RestorePodSetsInfo(Json& obj, const std::vector<PodSetInfo>& originals) const = 0;
  // Clears status fields that forbid editing the templates of a suspended
  // object (a Job's `startTime`); returns whether a status write is needed.
  virtual bool ResetStatusForRestore(Json& obj) const { (void)obj; return false; }
  // Kueue's JobWithReclaimablePods: pods of a still-running job that will
  // never run again (podSet name -> count), whose quota the Workload gives
  // back through status.reclaimablePods. Empty for kinds that don't say.
  virtual std::vector<std::pair<std::string, int32_t>> ReclaimablePods(const Json& obj) const {
    (void)obj;
    return {};
  }
};

struct IntegrationOptions {
  // Queue (suspend and create Workloads for) objects without a queue name.
  bool manage_jobs_without_queue_name = false;
  // waitForPodsReady is enabled: keep the Workload's PodsReady condition
  // (False/WaitForStart once admitted, True once the pods are ready, False/
  // WaitForRecovery after). Kueue's reconciler maintains it only then; with
  // waitForPodsReady off nothing reads it, and it is not written.
  bool wait_for_pods_ready = false;
};

// Registers the generic reconciler for `adapter` ("<kind>-workload-integration",
// lowercase kind) with handlers on the shared informers of the adapter's kind
// and of Workloads. Returns FailedPrecondition when the scheme lacks the kind
// or kueue.x-k8s.io/v1beta2 Workloads / ResourceFlavors (nothing registered).
absl::Status AddIntegration(reconcile::ControllerContext& ctx,
                            std::shared_ptr<const JobAdapter> adapter,
                            const IntegrationOptions& options);

}  // namespace batchd::controllers::workload
