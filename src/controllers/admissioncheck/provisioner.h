// The pluggable provisioner behind the built-in `kueue.x-k8s.io/provisioning-
// request` AdmissionCheck. Kueue hands a cluster-autoscaler
// ProvisioningRequest to the autoscaler; batchd asks a Provisioner whether
// the capacity a workload reserved quota for exists. The check controller
// (controllers.h) owns timing: it asks again whenever nodes or pods change
// and at the attempt's deadline, and turns "still waiting at the deadline"
// or "failed" into Retry (with ProvisioningRequestConfig's backoff) or
// Rejected (backoff limit reached).
//
// batchd's provisioner (MakeNodeCapacityProvisioner) implements the class
// `check-capacity.autoscaling.x-k8s.io`: it creates nothing and reports
// Provisioned once Ready, schedulable nodes matching the pod sets (their
// node selectors and tolerations, and the pool selector parameter) have
// free allocatable for every pod — e.g. simulated nodes created with
// `batchctl create simulated-nodes`, or agents joining.
//
// Thread-safety: Provision and Unsupported are called from the check
// controller's reconciles, possibly concurrently; implementations must be
// thread-safe (reading informers is).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "api/core/v1/taint.h"
#include "api/resource/amount.h"
#include "reconcile/context.h"

namespace batchd::controllers::admissioncheck {

// The class batchd's own provisioner serves, and its parameters.
inline constexpr char kCheckCapacityClass[] = "check-capacity.autoscaling.x-k8s.io";
// A label selector (`pool=gpu,zone in (a,b)`) the nodes must also match.
inline constexpr char kNodeSelectorParameter[] = "batchd.io/node-selector";
// How long one attempt waits for capacity (Go duration, default 15m, at
// most 24h) before it counts as failed.
inline constexpr char kTimeoutParameter[] = "batchd.io/provisioning-timeout";
inline constexpr absl::Duration kDefaultProvisioningTimeout = absl::Minutes(15);
inline constexpr absl::Duration kMaxProvisioningTimeout = absl::Hours(24);

struct PodSetDemand {
  std::string name;
  int32_t count = 0;
  std::map<std::string, api::Amount> per_pod;  // requests of one pod
  std::map<std::string, std::string> node_selector;
  std::vector<api::core_v1::Toleration> tolerations;
};

struct CapacityRequest {
  std::string name;  // <workload>-<check>-<attempt>, as Kueue names ProvisioningRequests
  std::string provisioning_class;
  std::map<std::string, std::string> parameters;
  std::vector<PodSetDemand> pod_sets;
};

struct ProvisionOutcome {
  enum class State { kProvisioned, kWaiting, kFailed };
  State state = State::kWaiting;
  std::string message;
  // Added to every pod set's pods once provisioned (podSetUpdates).
  std::map<std::string, std::string> node_selector;
};

class Provisioner {
 public:
  virtual ~Provisioner() = default;
  // "" when the class and parameters are honoured, else why not (the
  // AdmissionCheck is then inactive with this message).
  virtual std::string Unsupported(const std::string& provisioning_class,
                                  const std::map<std::string, std::string>& parameters) const = 0;
  virtual ProvisionOutcome Provision(const CapacityRequest& request) const = 0;
};

// batchd's provisioner over the context's Node and Pod informers.
std::shared_ptr<Provisioner> MakeNodeCapacityProvisioner(reconcile::ControllerContext& ctx);

// The attempt timeout from the parameters (default / bounded as above);
// an error message in *error when unparsable.
absl::Duration ProvisioningTimeout(const std::map<std::string, std::string>& parameters,
                                   std::string* error);

}  // namespace batchd::controllers::admissioncheck
