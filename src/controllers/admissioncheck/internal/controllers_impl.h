// Internal to controllers/admissioncheck: the three controllers of
// controllers.h. Each is a Reconciler registered with the context's manager;
// informer handlers only enqueue keys.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>

#include "absl/synchronization/mutex.h"
#include "api/kueue/queue_writers.h"
#include "controllers/admissioncheck/provisioner.h"
#include "reconcile/context.h"

namespace batchd::controllers::admissioncheck::internal {

using api::Json;

class WorkloadChecks : public reconcile::Reconciler {
 public:
  explicit WorkloadChecks(reconcile::ControllerContext& ctx);
  void Register();
  absl::StatusOr<reconcile::Result> Reconcile(const std::string& key) override;

 private:
  absl::StatusOr<reconcile::Result> Write(const std::string& key, api::kueue::StatusUpdate update,
                                          const Json& wl, const std::string& event_reason,
                                          const std::string& event_message);
  reconcile::ControllerContext& ctx_;
  const api::KindDef& wl_kind_;
  client::Informer& workloads_;
  client::Informer& cqs_;
  reconcile::Controller* controller_ = nullptr;
};

// Keys: "ac/<name>" (the AdmissionCheck's Active condition) and
// "wl/<ns>/<name>" (the workload's provisioning check states).
class ProvisioningChecks : public reconcile::Reconciler {
 public:
  ProvisioningChecks(reconcile::ControllerContext& ctx, std::shared_ptr<Provisioner> provisioner);
  void Register();
  absl::StatusOr<reconcile::Result> Reconcile(const std::string& key) override;

  // Why the check cannot be served ("" when it can), and Kueue's reason.
  std::string Problem(const Json& ac, std::string* reason) const;

 private:
  absl::StatusOr<reconcile::Result> ReconcileCheck(const std::string& name);
  absl::StatusOr<reconcile::Result> ReconcileWorkload(const std::string& key);
  bool Ours(const Json& ac) const;
  void EnqueueWaiting();

  reconcile::ControllerContext& ctx_;
  std::shared_ptr<Provisioner> provisioner_;
  const api::KindDef& wl_kind_;
  const api::KindDef& ac_kind_;
  client::Informer& workloads_;
  client::Informer& checks_;
  client::Informer& configs_;
  client::Informer& flavors_;
  client::Informer& nodes_;
  client::Informer& pods_;
  reconcile::Controller* controller_ = nullptr;

  absl::Mutex mu_;
  // Workloads with a Pending provisioning check (bounded by the workloads):
  // node and pod changes re-evaluate them.
  std::set<std::string> waiting_ ABSL_GUARDED_BY(mu_);
};

// Keys: "cq/<name>", "rf/<name>", "ac/<name>".
class ResourceInUse : public reconcile::Reconciler {
 public:
  explicit ResourceInUse(reconcile::ControllerContext& ctx);
  void Register();
  absl::StatusOr<reconcile::Result> Reconcile(const std::string& key) override;

 private:
  bool ClusterQueueInUse(const std::string& name) const;
  bool ReferencedByClusterQueue(bool flavor, const std::string& name) const;
  void EnqueueDeleting();

  reconcile::ControllerContext& ctx_;
  const api::KindDef& cq_kind_;
  const api::KindDef& rf_kind_;
  const api::KindDef& ac_kind_;
  client::Informer& cqs_;
  client::Informer& flavors_;
  client::Informer& checks_;
  client::Informer& workloads_;
  reconcile::Controller* controller_ = nullptr;
  absl::Mutex mu_;
  std::set<std::string> deleting_cqs_ ABSL_GUARDED_BY(mu_);  // ClusterQueues being deleted
};

}  // namespace batchd::controllers::admissioncheck::internal
