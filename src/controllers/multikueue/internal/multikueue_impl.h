// Internal to controllers/multikueue: the worker connections shared by the
// three reconcilers of multikueue.h, and the reconcilers themselves.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "controllers/multikueue/multikueue.h"
#include "reconcile/context.h"

namespace batchd::controllers::multikueue::internal {

using api::Json;

// What the manager knows of one worker. Bounded by the MultiKueueClusters.
struct Worker {
  std::shared_ptr<client::Client> client;  // null until a kubeconfig dialed
  std::string kubeconfig;                  // the text `client` was made from
  bool active = false;
  std::string reason, message;
  // Since when it has been unreachable (the first failed probe after it was
  // reachable, or after it was first seen); nullopt while active.
  std::optional<absl::Time> inactive_since;
  absl::Time last_gc = absl::InfinitePast();
};

class Workers {
 public:
  // A copy (the client is shared); nullopt for an unknown cluster.
  std::optional<Worker> Get(const std::string& name) const;
  void Put(const std::string& name, Worker w);
  void Remove(const std::string& name);

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, Worker> workers_ ABSL_GUARDED_BY(mu_);
};

// The names of the MultiKueue AdmissionChecks and of the clusters of their
// configs, read from the informers.
struct Lookup {
  client::Informer& checks;
  client::Informer& configs;
  // Whether the AdmissionCheck `name` exists with our controller name.
  bool IsOurs(const std::string& name) const;
  // The cluster names of the check's MultiKueueConfig; an error message in
  // *problem when the parameters do not name an existing one.
  std::vector<std::string> ClustersOf(const Json& ac, std::string* problem) const;
};

// Keys: "mkc/<name>" (connection, Active, garbage collection) and
// "ac/<name>" (an AdmissionCheck's Active condition).
class ClusterReconciler : public reconcile::Reconciler {
 public:
  ClusterReconciler(reconcile::ControllerContext& ctx, const MultiKueueOptions& opts,
                    std::shared_ptr<Workers> workers, reconcile::Controller** dispatch);
  void Register();
  absl::StatusOr<reconcile::Result> Reconcile(const std::string& key) override;

 private:
  absl::StatusOr<reconcile::Result> ReconcileCluster(const std::string& name);
  absl::StatusOr<reconcile::Result> ReconcileCheck(const std::string& name);
  // The kubeconfig's text, or the reason (BadConfig) why none.
  absl::StatusOr<std::string> ReadKubeconfig(const Json& mkc, std::string* source,
                                             std::string* dir);
  void CollectGarbage(const std::string& cluster, client::Client& remote,
                      const std::vector<Json>& copies);
  void ClusterChanged(const std::string& name);

  reconcile::ControllerContext& ctx_;
  MultiKueueOptions opts_;
  std::shared_ptr<Workers> workers_;
  reconcile::Controller** dispatch_;  // the workload controller, for enqueues
  const api::KindDef& mkc_kind_;
  const api::KindDef& ac_kind_;
  client::Informer& clusters_;
  client::Informer& checks_;
  client::Informer& configs_;
  client::Informer& workloads_;
  Lookup lookup_;
  reconcile::Controller* controller_ = nullptr;
};

// Keys: "<ns>/<name>" of manager Workloads.
class DispatchReconciler : public reconcile::Reconciler {
 public:
  DispatchReconciler(reconcile::ControllerContext& ctx, const MultiKueueOptions& opts,
                     std::shared_ptr<Workers> workers);
  reconcile::Controller& Register();
  absl::StatusOr<reconcile::Result> Reconcile(const std::string& key) override;

 private:
  struct Remote;
  // Deletes the copies (job, then workload) on `clusters` (every known
  // cluster of the check when empty); false when a worker could not be
  // reached.
  bool RemoveRemote(const std::string& ns, const std::string& name,
                    const std::vector<std::string>& clusters);
  absl::Status ResetMirroredStatus(const Json& wl);
  absl::StatusOr<reconcile::Result> WorkloadGone(const std::string& ns, const std::string& name);

  reconcile::ControllerContext& ctx_;
  MultiKueueOptions opts_;
  std::shared_ptr<Workers> workers_;
  const api::KindDef& wl_kind_;
  const api::KindDef& job_kind_;
  client::Informer& workloads_;
  client::Informer& jobs_;
  client::Informer& checks_;
  client::Informer& configs_;
  Lookup lookup_;
  reconcile::Controller* controller_ = nullptr;

  absl::Mutex mu_;
  // Deleted manager workloads whose copies could not all be removed yet
  // ("ns/name" -> clusters left); bounded by the dispatched workloads; the
  // garbage collection catches what a restart forgets.
  std::map<std::string, std::vector<std::string>> pending_deletes_ ABSL_GUARDED_BY(mu_);
  // Manager workload key -> the clusters its copies were dispatched to.
  std::map<std::string, std::vector<std::string>> dispatched_ ABSL_GUARDED_BY(mu_);
};

// The copies made on a worker (pure; exposed for tests).
Json RemoteWorkload(const Json& local, const std::string& origin);
Json RemoteJob(const Json& local_job, const std::string& workload_name, const std::string& origin);

}  // namespace batchd::controllers::multikueue::internal
