// NodeAgent's implementation (NodeAgent::Impl), shared by agent.cc (the
// pods: start, status, deletion) and agent_node.cc (the node: its lease,
// status and fences, and disk pressure).
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "agent/agent.h"
#include "agent/internal/fence.h"
#include "agent/internal/logs.h"
#include "agent/internal/node.h"
#include "agent/internal/resource_stats.h"
#include "agent/internal/security.h"
#include "api/core/v1/pod_view.h"
#include "reconcile/controller.h"
#include "reconcile/events.h"
#include "registry/errors.h"

namespace batchd::agent {
namespace internal {

// The agent's work queue keys that are not pods.
inline constexpr char kHeartbeatKey[] = "@heartbeat";
inline constexpr char kDiskKey[] = "@disk";
inline constexpr char kStatsKey[] = "@stats";
inline constexpr char kOrphanPrefix[] = "@orphan/";

using ::batchd::registry::IsReason;

// What the agent remembers about one pod between reconciles (lost on
// restart; everything here can be recomputed from the runtime and the pod).
struct PodState {
  bool started = false;
  bool stop_requested = false;
  std::optional<std::pair<std::string, std::string>> failed_reason;
  std::optional<std::string> config_error;
  absl::Duration poll;
  bool first_status_deferred = false;
  bool finished = false;   // The runtime said nothing runs or will run again.
  bool claims_deleted = false;  // batchd.io/delete-claims done.
  api::Json last_written;  // The status this agent last wrote.
  // The pod's hosts file as last written ("" = it has none), and the
  // EndpointSlice generation it was rendered at.
  std::string hosts;
  uint64_t hosts_generation = 0;
  std::string mount_error;  // The last FailedMount reported ("" = none).
  std::string config_error_reported;  // The last "Failed" event's text ("" = none).
  std::string limits_reported;        // The last limits warning reported as an event.
};

}  // namespace internal

struct NodeAgent::Impl : public reconcile::Reconciler {
  Impl(NodeAgent& a, client::Client& c, Clock& clk, HostProbe& p)
      : agent(a), client(c), clock(clk), probe(p), mgr(clk), fence(a.opts_.fence_period),
        pod_kind(c.Kind("", "v1", "pods")), node_kind(c.Kind("", "v1", "nodes")),
        lease_kind(c.Kind("coordination.k8s.io", "v1", "leases")) {}

  absl::StatusOr<reconcile::Result> Reconcile(const std::string& key) override;
  absl::Status Heartbeat();
  // The disk-pressure check (kDiskKey): condition, reclaim, eviction.
  void CheckDisk();
  // Evicts the running pod with the largest logs; false when there is none.
  bool EvictLargestLogs(int64_t threshold, int64_t available);
  absl::Status RegisterNode();
  absl::Status RenewLease();
  // Node fencing (internal/fence.h): moves every running pod's fence
  // deadline on after a renewal; with fencing off, removes any (at start).
  void RefreshFences();
  void ClearFences();
  absl::StatusOr<reconcile::Result> ReconcilePod(const api::Json& pod);
  absl::StatusOr<reconcile::Result> ReconcileDeleting(const api::Json& pod,
                                                      const api::core_v1::PodView& view,
                                                      internal::PodState& st);
  absl::StatusOr<reconcile::Result> ReconcileOrphan(const std::string& uid);
  absl::Status EnsureStarted(const api::Json& pod, internal::PodState& st);
  std::string ClaimsRoot() const;
  // Secret and configMap volumes: <ConfigVolumesRoot>/<pod uid>/<volume>,
  // beside the claim directories; removed with the pod's sandbox.
  std::string ConfigVolumesRoot() const;
  void RemoveConfigVolumes(const std::string& uid);
  // A Secret or ConfigMap for a container's env (nullopt: not found).
  absl::StatusOr<std::optional<api::Json>> LookupForEnv(std::string_view resource,
                                                   const std::string& ns,
                                                   const std::string& name);
  // Events for what the runtime reported: limits it could not apply.
  void ReportRuntimeWarnings(const api::Json& pod, const PodSandboxStatus& rt,
                             internal::PodState& st);
  // The pod's hosts file from the EndpointSlices of its subdomain's Service.
  std::string RenderHosts(const api::Json& pod) const;
  // Rewrites a started pod's hosts file when its peers changed.
  void SyncHosts(const api::Json& pod, internal::PodState& st);
  // Keeps `peer_groups` current for a pod event.
  void IndexPod(const client::ObjectRef& pod, bool deleted);
  void OnSlice(const client::ObjectRef& slice);
  void Warn(const api::Json& pod, const std::string& reason, const std::string& message);
  absl::Status WriteStatus(const api::Json& pod, const PodSandboxStatus& rt,
                           internal::PodState& st);
  // Whether `pod` (the API's latest) is terminal while its sandbox here
  // still runs: ended by someone else (an eviction), perhaps replaced.
  bool SupersededCopy(const api::Json& pod, const internal::PodState& st);
  // Stops the pod's sandbox at once (no grace).
  void KillSuperseded(const std::string& uid, internal::PodState& st);
  bool DeferFirstStatus(const api::Json& pod, const PodSandboxStatus& rt, internal::PodState& st);
  reconcile::Result Poll(const api::core_v1::PodView& pod, internal::PodState& st);
  void CheckDeadline(const api::core_v1::PodView& pod, internal::PodState& st);
  internal::PodState& StateOf(const std::string& uid);
  void Forget(const std::string& uid);
  void Setup();

  NodeAgent& agent;
  client::Client& client;
  Clock& clock;
  HostProbe& probe;
  std::unique_ptr<HostProbe> owned_probe;
  reconcile::Manager mgr;
  internal::NodeFence fence;
  // The pod user's and runAsUser's groups, looked up once per 10 s, not per
  // pod start (internal/security.h).
  internal::UserGroupsCache user_groups{clock, absl::Seconds(10), internal::LookupUserGroups,
                                        internal::PasswdGroupStamp};
  std::atomic<bool> fence_lapse_logged{false};
  const api::KindDef& pod_kind;
  const api::KindDef& node_kind;
  const api::KindDef& lease_kind;
  client::Informer* pods = nullptr;
  client::Informer* slices = nullptr;
  reconcile::Controller* controller = nullptr;
  reconcile::EventRecorder* events = nullptr;
  std::unique_ptr<reconcile::ApiEventRecorder> owned_events;
  std::unique_ptr<apiserver::PodLogSource> logs;
  std::unique_ptr<internal::ResourceStats> stats;
  // The pods this agent knows (uid_key) as the stats sampler wants them.
  std::vector<internal::RunningPod> KnownPods();
  api::Json capacity;
  NodeFacts facts;
  absl::Time last_node_report = absl::InfinitePast();

  absl::Mutex mu;
  std::map<std::string, internal::PodState> states ABSL_GUARDED_BY(mu);         // By uid.
  std::map<std::string, std::string> key_uid ABSL_GUARDED_BY(mu);     // "ns/name" -> uid last seen.
  std::map<std::string, std::string> uid_key ABSL_GUARDED_BY(mu);     // and back (runtime change hints).
  std::set<std::string> deleted ABSL_GUARDED_BY(mu);                  // Uids we deleted with grace 0.
  // "ns/subdomain" -> keys of this node's pods with that subdomain: whom an
  // EndpointSlice event concerns. Bounded by the pods on this node.
  std::map<std::string, std::set<std::string>> peer_groups ABSL_GUARDED_BY(mu);
  // Pods the disk-pressure check decided to evict (uid -> reason, message),
  // until their reconcile takes them. Bounded by the pods on this node.
  std::map<std::string, std::pair<std::string, std::string>> evictions ABSL_GUARDED_BY(mu);
  // Bumped by every EndpointSlice event: a pod's hosts file is re-rendered
  // when it was rendered at an older generation.
  std::atomic<uint64_t> slice_generation{1};
  std::atomic<int64_t> status_writes{0};
  // Disk pressure (CheckDisk, one reconcile at a time; read by others).
  std::atomic<bool> disk_pressure{false};
  std::atomic<bool> force_node_report{false};
  absl::Time pressure_clear_since = absl::InfiniteFuture();  // CheckDisk only
};

}  // namespace batchd::agent
