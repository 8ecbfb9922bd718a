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
#include "controllers/multikueue/internal/remote_watch.h"
#include "controllers/multikueue/multikueue.h"
#include "reconcile/context.h"

namespace batchd::controllers::multikueue::internal {

using api::Json;

// What the manager knows of one worker. Bounded by the MultiKueueClusters.
struct Worker {
  std::shared_ptr<client::Client> client;  // null until a kubeconfig dialed
  std::string kubeconfig;                  // the text `client` was made from
  // The watches on the worker through `client` (null with it).
  std::shared_ptr<WorkerWatches> watches;
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
  // A request to the worker failed in transport (it hangs or is gone): it
  // is treated as inactive until its next probe passes, so that no other
  // reconcile waits on it meanwhile.
  void MarkUnreachable(const std::string& name, absl::Time now, const std::string& why);

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

// Keys: "mkc/<name>" (connection, Active, garbage collection), "ac/<name>"
// (an AdmissionCheck's Active condition) and "watch/<name>" (every
// watch_pump_interval: hands the worker's watch changes to the dispatch
// controller; pumps the watches too without watch threads).
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

// What MultiKueue needs of one kind of job (Kueue's MultiKueue adapters):
// batch/v1 Job and jobset.x-k8s.io/v1alpha2 JobSet.
struct JobKindAdapter {
  std::string api_version, kind, group, version, plural;
  // Kueue's JobSet adapter rejects a JobSet not `managedBy:
  // kueue.x-k8s.io/multikueue`; its batch Job adapter dispatches such a Job
  // and keeps the check Pending (the manager's Job stays suspended).
  bool reject_unmanaged = false;
  // The object created on the worker from the manager's.
  Json (*remote)(const Json& local, const std::string& workload_name, const std::string& origin);
  // Whether a finished object's status must be kept (Complete/Failed...).
  bool (*finished)(const Json& obj);
};
// The adapter of an owner (apiVersion, kind); null for kinds without one.
const JobKindAdapter* AdapterFor(const std::string& api_version, const std::string& kind);

// Keys: "<ns>/<name>" of manager Workloads.
class DispatchReconciler : public reconcile::Reconciler {
 public:
  DispatchReconciler(reconcile::ControllerContext& ctx, const MultiKueueOptions& opts,
                     std::shared_ptr<Workers> workers);
  reconcile::Controller& Register();
  absl::StatusOr<reconcile::Result> Reconcile(const std::string& key) override;

 private:
  struct Remote;
  // What was dispatched for one manager workload (to withdraw it after the
  // manager's Workload is gone).
  struct Dispatched {
    std::vector<std::string> clusters;
    const JobKindAdapter* adapter = nullptr;
    std::string owner;  // the job's name
    // What this process created on each cluster and its watch has not
    // shown yet (cluster -> uid): not created twice, and a withdrawal
    // deletes it (uid precondition) before the watch saw it.
    std::map<std::string, std::string> copies, jobs;
    // Deletions sent for objects the watches still show
    // ("cluster/plural/uid"): not sent again.
    std::set<std::string> deleting;
  };
  // Records a creation on `cluster` (`job`: the job, else the copy).
  void Created(const std::string& key, const std::string& cluster, bool job, const Json& obj);
  // Whether a creation on `cluster` is still unseen by the watch; `seen`:
  // the watch shows it now (the record goes).
  bool CreatedUnseen(const std::string& key, const std::string& cluster, bool job, bool seen);
  // Deletes the copies (job, then workload) on `clusters`; false when a
  // worker could not be reached (or its watches are not synced).
  bool RemoveRemote(const std::string& ns, const std::string& name,
                    const std::vector<std::string>& clusters);
  absl::Status ResetMirroredStatus(const Json& wl);
  absl::StatusOr<reconcile::Result> WorkloadGone(const std::string& ns, const std::string& name);
  // The clusters the Incremental dispatcher nominates now (Kueue's: up to
  // kIncrementalRoundSize not yet nominated, by name, every
  // kIncrementalRoundTimeout); *requeue: when the next round is due.
  std::vector<std::string> NominateIncrementally(const std::string& key, const Json& wl,
                                                 const std::vector<std::string>& clusters,
                                                 absl::Time now, absl::Duration* requeue);
  // When the worker `cluster` was first seen lost (unreachable, or its
  // watches unsynced) for `adapter`'s kinds; nullopt while it is fine.
  std::optional<absl::Time> LostSince(const std::string& cluster,
                                      const JobKindAdapter& adapter) const;

  reconcile::ControllerContext& ctx_;
  MultiKueueOptions opts_;
  std::shared_ptr<Workers> workers_;
  const api::KindDef& wl_kind_;
  client::Informer& workloads_;
  client::Informer& checks_;
  client::Informer& configs_;
  // The manager's jobs by adapter plural ("jobs", "jobsets").
  std::map<std::string, client::Informer*> owners_;
  Lookup lookup_;
  reconcile::Controller* controller_ = nullptr;

  absl::Mutex mu_;
  // Manager workload key -> what was dispatched; bounded by the dispatched
  // workloads (and the deleted ones whose copies could not all be removed
  // yet; the garbage collection catches what a restart forgets).
  std::map<std::string, Dispatched> dispatched_ ABSL_GUARDED_BY(mu_);
  // Incremental dispatcher: when each workload's current round began.
  std::map<std::string, absl::Time> rounds_ ABSL_GUARDED_BY(mu_);
};

// Kueue's Incremental dispatcher: clusters per round, and a round's length.
inline constexpr size_t kIncrementalRoundSize = 3;
inline constexpr absl::Duration kIncrementalRoundTimeout = absl::Minutes(5);

// The copies made on a worker (pure; exposed for tests).
Json RemoteWorkload(const Json& local, const std::string& origin);
Json RemoteJob(const Json& local_job, const std::string& workload_name, const std::string& origin);
Json RemoteJobSet(const Json& local, const std::string& workload_name, const std::string& origin);

}  // namespace batchd::controllers::multikueue::internal
