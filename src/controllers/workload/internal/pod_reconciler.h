// The plain pod integration's reconciler (Kueue's pod controller on top of
// jobframework's ComposableJob). A pod cannot be suspended and a pod group
// is several objects, so pods have a reconciler of their own beside the
// generic one (reconciler.h); the per-pod semantics are PodAdapter's.
//
// Keys: "ns/name" for a single pod, "group/ns/name" for the pod group
// `name` (label kueue.x-k8s.io/pod-group-name). A single pod is a group of
// one: one pod set "main" of one pod, its Workload `pod-<name>-<hash>`
// controlled by the pod. A group's Workload is named after the group, owned
// (not controlled) by its pods and annotated kueue.x-k8s.io/is-group-workload;
// it is created once `pod-group-total-count` runnable pods exist, with one
// pod set per role (RoleHash) and as many pods as have that role. Pods
// beyond the count are deleted (newest first), failed pods that a
// replacement took over lose their finalizer, a replacement joins the
// admitted Workload and is ungated, and the group is finished when every
// pod succeeded, or when none is left running and a pod is marked
// `kueue.x-k8s.io/retriable-in-group: "false"`.
//
// Thread-safety: the indexes are guarded by `mu_` and bounded by the pods
// and Workloads that exist (entries go with their objects); the work queue
// never hands one key to two workers.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "controllers/workload/internal/pod_adapter.h"
#include "reconcile/context.h"

namespace batchd::controllers::workload::internal {

class PodReconciler : public reconcile::Reconciler {
 public:
  // `wait_for_pods_ready`: keep the Workload's PodsReady condition
  // (workload::IntegrationOptions).
  PodReconciler(reconcile::ControllerContext& ctx, const api::KindDef& pod_kind,
                const api::KindDef& wl_kind, const api::KindDef& rf_kind,
                bool wait_for_pods_ready);

  // Adds the pod and Workload informer handlers that feed `controller`;
  // they hold `self`.
  void Wire(reconcile::Controller& controller, std::shared_ptr<PodReconciler> self);
  absl::StatusOr<reconcile::Result> Reconcile(const std::string& key) override;

  // The reconcile key of the unit `pod` belongs to.
  static std::string KeyOf(const api::Json& pod);

  // The entries of the group index and of the single pods' Workload index.
  std::pair<size_t, size_t> IndexSizesForTest();

 private:
  // The pods of one reconcile: a single pod or a group's managed pods, from
  // the informer, sorted by name.
  struct Unit {
    std::string ns;
    std::string name;  // the pod's, or the group's
    bool group = false;
    std::vector<client::ObjectRef> pods;
    const api::Json& first() const { return *pods.front(); }
  };

  void OnPod(const client::ObjectRef& pod, bool deleted);
  void OnWorkload(const client::ObjectRef& wl, bool deleted);
  std::vector<client::ObjectRef> GroupPods(const std::string& ns, const std::string& group);
  std::set<std::string> OwnedWorkloads(const std::string& pod_key);

  absl::StatusOr<reconcile::Result> ReconcileSingle(const std::string& ns, const std::string& name);
  absl::StatusOr<reconcile::Result> ReconcileGroup(const std::string& ns, const std::string& name);
  // The common tail once a unit has a Workload: readiness, eviction, start,
  // stop, queue name.
  absl::StatusOr<reconcile::Result> Drive(const Unit& unit, api::Json wl);

  absl::Status DeleteWorkloads(const std::string& ns, const std::vector<std::string>& names);
  absl::Status CreateWorkload(const Unit& unit, const std::string& name,
                              std::vector<api::Json> podsets);
  absl::Status MarkFinished(const Unit& unit, api::Json wl, bool success,
                            const std::string& message);
  absl::Status SyncPodsReady(const Unit& unit, int32_t total, api::Json& wl);
  // Ungates the unit's gated pods with their pod set's admission.
  absl::Status Run(const Unit& unit, const api::Json& wl);
  // Ends the unit's pods that run or may run (not gated, not finished, not
  // being deleted): TerminationTarget=True with `reason`, then delete.
  absl::Status Stop(const Unit& unit, const std::string& reason, const std::string& message);
  // Removes the finalizer from `pods` (being gone is fine).
  absl::Status Finalize(const std::vector<client::ObjectRef>& pods);
  // Deletes `pods` beyond a group's count (their finalizer first).
  absl::Status DeleteExcess(const std::vector<client::ObjectRef>& pods);
  absl::Status WriteWorkloadStatus(api::Json& wl);

  reconcile::ControllerContext& ctx_;
  const PodAdapter adapter_;
  const api::KindDef& pod_kind_;
  const api::KindDef& wl_kind_;
  client::Informer& pods_;
  client::Informer& workloads_;
  client::Informer& flavors_;
  const bool wait_for_pods_ready_;
  reconcile::Controller* controller_ = nullptr;  // set by Wire

  absl::Mutex mu_;
  // "ns/group" -> names of the managed pods that name the group.
  std::map<std::string, std::set<std::string>> group_pods_ ABSL_GUARDED_BY(mu_);
  // Single pod key "ns/name" -> Workloads whose controller reference is a pod of that name.
  std::map<std::string, std::set<std::string>> owned_ ABSL_GUARDED_BY(mu_);
};

}  // namespace batchd::controllers::workload::internal
