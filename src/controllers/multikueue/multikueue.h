// MultiKueue (Kueue's KEP-693): the built-in AdmissionCheck of controller
// `kueue.x-k8s.io/multikueue`, which runs a manager cluster's workloads on
// worker clusters (other `batchd server`s, or Kubernetes + Kueue clusters)
// reached through kubeconfigs. Three controllers:
//
//  - "multikueue-clusters": keeps a client per MultiKueueCluster (kubeconfig
//    from the Secret's `kubeconfig` key in namespace kueue-system, or from a
//    file), probes it every `probe_interval` with a bounded request, and
//    writes its Active condition (True/Active, or False with BadConfig /
//    ClientConnectionFailed and the error). The same probe lists the
//    worker's copies (label kueue.x-k8s.io/multikueue-origin=<origin>) and,
//    once per `gc_interval`, deletes those whose manager workload is gone.
//  - "multikueue-admission-check": AdmissionChecks of this controller are
//    Active when their parameters name a MultiKueueConfig with at least one
//    Active cluster (reasons BadConfig, NoUsableClusters,
//    SomeActiveClusters, Active).
//    It also keeps, per worker, watches on our copies there (Workloads,
//    Jobs, JobSets with the origin label; internal/remote_watch.h), whose
//    events reconcile the manager's Workloads: no request per dispatched
//    workload is made to read the workers.
//  - "multikueue-workloads": the dispatch state machine of one Workload
//    (dispatch.cc documents it).
//
// Ownership: registers informer handlers and controllers with ctx.manager;
// their state lives as long as the manager. Call once, before it starts.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/client.h"
#include "reconcile/context.h"

namespace batchd::controllers::multikueue {

inline constexpr char kControllerName[] = "kueue.x-k8s.io/multikueue";
inline constexpr char kOriginLabel[] = "kueue.x-k8s.io/multikueue-origin";
inline constexpr char kOriginUidAnnotation[] = "kueue.x-k8s.io/multikueue-origin-uid";
inline constexpr char kPrebuiltWorkloadLabel[] = "kueue.x-k8s.io/prebuilt-workload-name";
// The Secrets of `locationType: Secret` live in this namespace (Kueue's).
inline constexpr char kSecretNamespace[] = "kueue-system";
inline constexpr char kSecretKey[] = "kubeconfig";
// Kueue's dispatcher names (Configuration multiKueue.dispatcherName).
inline constexpr char kDispatcherAllAtOnce[] = "kueue.x-k8s.io/multikueue-dispatcher-all-at-once";
inline constexpr char kDispatcherIncremental[] = "kueue.x-k8s.io/multikueue-dispatcher-incremental";
// Largest kubeconfig read from a Secret or a file.
inline constexpr size_t kMaxKubeconfigBytes = 1 << 20;

// Turns a kubeconfig's text into a client of that cluster. `source` names
// it in errors; relative file names inside are taken from `dir`.
// Implementations must bound every request (a worker that hangs must not
// hold a reconcile forever). Thread-safe.
class Dialer {
 public:
  virtual ~Dialer() = default;
  virtual absl::StatusOr<std::shared_ptr<client::Client>> Dial(const std::string& kubeconfig,
                                                               const std::string& source,
                                                               const std::string& dir) = 0;
};

struct MultiKueueOptions {
  // Kueue's Configuration multiKueue.{origin, workerLostTimeout, gcInterval}.
  std::string origin = "multikueue";
  absl::Duration worker_lost_timeout = absl::Minutes(15);
  absl::Duration gc_interval = absl::Minutes(1);  // zero: no garbage collection
  // Kueue's multiKueue.dispatcherName: kDispatcherAllAtOnce (a copy on
  // every worker at once) or kDispatcherIncremental (up to 3 more workers,
  // by name, every 5 minutes until one reserves).
  std::string dispatcher_name = kDispatcherAllAtOnce;
  // batchd's: how often a worker is probed (at most a third of
  // worker_lost_timeout, at least 1 s). The copies on the workers are
  // watched, not polled; `sync_interval` is only how soon a failed write to
  // a worker (or a withdrawal from an unreachable one) is tried again.
  absl::Duration probe_interval = absl::Seconds(10);
  absl::Duration sync_interval = absl::Seconds(2);
  // Server mode: each worker's watches run on a thread of their own, and
  // every `watch_pump_interval` what they saw change is handed to the
  // dispatch controller (a local hand-over, no request). Tests (false): the
  // "multikueue-clusters" controller also pumps them then, on the (fake)
  // clock.
  bool watch_threads = true;
  absl::Duration watch_pump_interval = absl::Milliseconds(250);
  // Required (MakeHttpDialer() in server mode, a fake in tests).
  std::shared_ptr<Dialer> dialer;
};

void AddMultiKueueControllers(reconcile::ControllerContext& ctx, MultiKueueOptions options);

}  // namespace batchd::controllers::multikueue

namespace batchd::registry {
class Registry;
}

namespace batchd::controllers::multikueue {

// Kueue's Job and JobSet defaulting for MultiKueue: a new batch/v1 Job
// without spec.managedBy (a JobSet without one, or with the JobSet
// controller's), queued (label or annotation kueue.x-k8s.io/queue-name) to a
// LocalQueue whose ClusterQueue references a MultiKueue AdmissionCheck, gets
// spec.managedBy kueue.x-k8s.io/multikueue. Call once at start-up.
absl::Status RegisterMultiKueueJobDefaulting(registry::Registry& registry);

}  // namespace batchd::controllers::multikueue
