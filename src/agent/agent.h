// NodeAgent: batchd's kubelet. It registers this machine as a Node
// (capacity from a HostProbe), renews its Lease in kube-node-lease, watches
// the pods bound to the node (fieldSelector spec.nodeName=<node>) and, per
// pod, starts it through a PodRuntime and reports its status (phase,
// conditions, container states, exit codes) with UpdateStatus only when it
// changed. Deleted pods are stopped with their grace period and then deleted
// with grace 0; on start-up sandboxes found on disk are re-adopted (running
// pods keep running; pods that no longer exist are stopped and removed).
//
// Stopping the agent (Stop / SIGTERM of `batchd agent`) stops heartbeats and
// status reports; the pods' processes keep running (they belong to their
// shims, as containers belong to containerd-shims under a kubelet) and are
// re-adopted by the next agent on the same data dir.
//
// Threading: `Start` runs an informer thread and worker threads (server and
// `batchd agent`); tests drive it with `Sync` + `RunUntilIdle` on one thread
// and a FakeClock. Public methods are thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/host_probe.h"
#include "agent/runtime/pod_runtime.h"
#include "apiserver/apiserver.h"
#include "apiserver/resource_metrics.h"
#include "client/client.h"
#include "common/clock.h"

namespace batchd::client {
class Informer;
}  // namespace batchd::client
namespace batchd::reconcile {
class EventRecorder;
}  // namespace batchd::reconcile

namespace batchd::agent {

struct AgentOptions {
  std::string node_name;
  std::map<std::string, std::string> labels;  // Extra node labels.
  api::Json taints = api::Json::array();      // [{key, value?, effect}], set at registration.
  std::string data_dir;                       // Pods live in <data_dir>/pods, claims
                                              // (persistentVolumeClaim) in <data_dir>/volumes.
  std::string shim_path;                      // The batchd-shim executable.
  int max_pods = 110;
  absl::Duration heartbeat_period = absl::Seconds(10);
  absl::Duration lease_duration = absl::Seconds(40);
  // Node fencing (api/core/v1/node_fence.h, internal/fence.h): announced on
  // the Node; each pod is killed by its shim max(fence_period, its
  // unreachable tolerationSeconds) after the last lease renewal that
  // succeeded, so it never runs beside the replacement the server creates
  // after evicting it. Zero: off (the agent inside the server, which cannot
  // be cut off from it).
  absl::Duration fence_period = absl::ZeroDuration();
  // How often the Node's status (Ready heartbeat) is rewritten when unchanged.
  absl::Duration node_status_report_period = absl::Minutes(1);
  // Status re-check period while a pod's containers run (no wake-ups from
  // the runtime yet): first check after `status_poll_min`, doubling to
  // `status_poll_max`.
  absl::Duration status_poll_min = absl::Milliseconds(20);
  absl::Duration status_poll_max = absl::Seconds(1);
  // A pod that has just started gets its first status write this much later
  // (at its first poll), so a container that exits at once is reported
  // Succeeded/Failed in one write instead of Running and then terminal, as
  // the kubelet's batched status manager may. Zero: report Running at once.
  absl::Duration first_status_delay = absl::ZeroDuration();
  std::string host_ip = "127.0.0.1";
  int log_port = 0;  // Published as status.daemonEndpoints.kubeletEndpoint.Port.
  // The CA (PEM) the log port's serving certificate chains to. Set (a
  // standalone agent's authenticated log port): the Node carries the
  // annotation auth::kKubeletEndpointAnnotation with host_ip, log_port and it.
  std::string serving_ca_pem;
  int workers = 4;
  // An agent inside the server reads pods from the server's shared pods
  // informer (all pods; it keeps those bound to this node), started by the
  // server: one informer thread and one decoding less per pod event. Null:
  // the agent watches spec.nodeName=<node> itself (a standalone agent).
  client::Informer* shared_pods = nullptr;
  // The same for EndpointSlices (all namespaces), which give pods their
  // peers' names. Null: the agent watches them itself.
  client::Informer* shared_endpoint_slices = nullptr;
  // Pod isolation (the factories set it when the agent is root and the host
  // allows namespaces): a pod with a subdomain, host aliases or volume
  // mounts gets a private mount namespace with its hosts file over
  // /etc/hosts and its volumes at their mount paths, and a UTS namespace
  // with its host name. Without it, BATCHD_HOSTS_FILE and BATCHD_VOLUME_<NAME>
  // point at the files, and the pod gets a Warning event once.
  bool pod_isolation = false;
  // The node's /etc/hosts: the first part of every pod's hosts file.
  std::string node_hosts = "127.0.0.1\tlocalhost\n";
  // Where Warning events about pods go (FailedMount, ...). Null: the agent
  // writes them itself, as component "kubelet".
  reconcile::EventRecorder* events = nullptr;
  // Persistent volume claim directories ("" = <data_dir>/volumes).
  std::string claims_root;
  // Who pods run as (docs/security.md "Pods"). A root agent (agent_is_root)
  // runs containers without securityContext.runAsUser as the dedicated pod
  // user (ResolvePodUser fills uid and gid); a non-root agent runs them as
  // itself (agent_uid / agent_gid) and refuses any other identity.
  bool agent_is_root = false;
  int64_t agent_uid = -1;  // -1: not managed (unit tests): no identity checks
  int64_t agent_gid = -1;
  std::string pod_user;
  int64_t pod_uid = -1;
  int64_t pod_gid = -1;
  // pids.max of every pod (kubelet's podPidsLimit); 0 = none.
  int64_t pod_pids_limit = 0;
  // Container log rotation (kubelet's containerLogMaxSize / containerLogMaxFiles):
  // given to the runtime by the factories.
  int64_t container_log_max_bytes = 10 << 20;
  int container_log_max_files = 5;
  // Hard eviction on the filesystem of data_dir (kubelet's evictionHard
  // `nodefs.available<10%`): below the threshold the Node gets
  // DiskPressure=True (the node-lifecycle controller adds the
  // node.kubernetes.io/disk-pressure:NoSchedule taint), new pods are refused
  // (Failed, Evicted), logs of finished pods are deleted, and then running
  // pods are evicted largest-log-first, one per check. The condition clears
  // once the filesystem stayed above the threshold for the transition period.
  // A byte threshold, when set (> 0), replaces the fraction; both 0: off.
  double eviction_nodefs_available_fraction = 0.10;
  int64_t eviction_nodefs_available_bytes = 0;
  absl::Duration eviction_check_period = absl::Seconds(10);  // kubelet's housekeeping
  // Resource usage (kubectl top, internal/resource_stats.h): how often the
  // containers' and the node's CPU time is sampled, and where the node's
  // usage is read (null: /proc).
  absl::Duration stats_period = absl::Seconds(10);
  std::function<Usage()> node_usage;
  absl::Duration eviction_pressure_transition_period = absl::Minutes(5);
};

// The default dedicated pod user and pids limit (--pod-user, --pod-pids-limit).
inline constexpr char kDefaultPodUser[] = "batchd-pod";
inline constexpr int64_t kDefaultPodPidsLimit = 4096;

// Fills the identity fields of `o` from this process: its uid/gid and, when
// it is root, the pod user `name` (looked up; created with `useradd
// --system` when missing). FailedPrecondition with what to do when the user
// neither exists nor can be created, or is root.
absl::Status ResolvePodUser(const std::string& name, AgentOptions& o);

// Whether user uid (primary group gid) may search every existing directory
// on the way to `path`, judged by mode bits as the kernel does for a user with
// no supplementary groups (ACLs are not consulted); the walk stops at the
// first component that does not exist yet. FailedPrecondition naming the
// directory, its mode and owner otherwise.
absl::Status CheckPathSearchable(const std::string& path, int64_t uid, int64_t gid);
// For a root agent: that its pod user can reach "/", `pod_root` and /bin/sh,
// so a host whose "/" is mode 0700 (a bare chroot) is refused at start with
// what to do instead of every pod failing with "Permission denied".
absl::Status CheckPodUserCanReach(const AgentOptions& o, const std::string& pod_root);

// "nodefs.available<10%" or "nodefs.available<2Gi" (kubelet's --eviction-hard,
// the nodefs signal only; "" turns eviction off) into `opts`.
absl::Status ParseEvictionHard(const std::string& s, AgentOptions& opts);
// A byte quantity ("10Mi", "512Ki", "1048576") as a positive number of bytes.
absl::StatusOr<int64_t> ParseByteQuantity(const std::string& s);

// Whether this process may give pods their own mount and UTS namespaces:
// it is root and a child can unshare both and make its mounts private.
bool CanIsolatePods();
// The content of /etc/hosts ("127.0.0.1 localhost" when unreadable).
std::string ReadNodeHosts();

// "k=v,k2=v2" -> map; "k=v:NoSchedule,k2:NoExecute" -> taints.
absl::StatusOr<std::map<std::string, std::string>> ParseLabels(const std::string& s);
absl::StatusOr<api::Json> ParseTaints(const std::string& s);

class NodeAgent {
 public:
  NodeAgent(AgentOptions opts, client::Client& client, Clock& clock,
            std::unique_ptr<PodRuntime> runtime, HostProbe& probe);
  ~NodeAgent();
  NodeAgent(const NodeAgent&) = delete;
  NodeAgent& operator=(const NodeAgent&) = delete;

  // Registers the Node and Lease, syncs the pod informer and queues every
  // pod and on-disk sandbox (re-adoption). No threads.
  absl::Status Sync();
  // Reconciles until nothing is ready (tests / simulation); returns the count.
  int RunUntilIdle();
  // Sync, then informer and worker threads until Stop.
  absl::Status Start();
  void Stop();

  // Logs of pods on this node (reads the runtime's log files).
  apiserver::PodLogSource& logs();
  // The HTTP handler of the agent's log endpoint:
  //   GET /containerLogs/<ns>/<pod>/<container>?follow=&tailLines=&...
  // and of its resource usage (the kubelet Summary API's subset,
  // apiserver/resource_metrics.h):
  //   GET /stats/summary
  void ServeLogs(const apiserver::HttpRequest& req, apiserver::ResponseWriter& w);
  // The usage of this node and its running pods now (samples them).
  apiserver::NodeUsageSummary ResourceUsage();

  const AgentOptions& options() const { return opts_; }
  PodRuntime& runtime() { return *runtime_; }
  // Status writes made so far (benchmarks, tests).
  int64_t status_writes() const;

  // Keeps `probe` alive as long as the agent (the probe given to the
  // constructor must be this one).
  void AdoptProbe(std::unique_ptr<HostProbe> probe);

 private:
  struct Impl;
  AgentOptions opts_;
  std::unique_ptr<PodRuntime> runtime_;
  std::unique_ptr<Impl> impl_;
};

// How the API server reaches remote agents' log ports (kube-apiserver's
// --kubelet-client-certificate/--kubelet-client-key): its client certificate.
// The agent is found only through its Node's auth::kKubeletEndpointAnnotation
// (which only that node can write): HTTPS to the address and port it names,
// the agent's serving certificate verified against the CA it names (and the
// address against the certificate's names). Without the annotation, or
// without a client certificate, remote logs and usage are refused.
struct KubeletClientOptions {
  std::string cert_file;
  std::string key_file;
};

// A PodLogSource for the API server: pods on `local_node` are read through
// `local` (may be null when the server runs no agent); others are proxied to
// their node's agent (GET https://<endpoint>/containerLogs/...), looked up
// through `client`. Thread-safe.
std::unique_ptr<apiserver::PodLogSource> NewProxyLogSource(client::Client& client,
                                                           std::string local_node,
                                                           apiserver::PodLogSource* local,
                                                           KubeletClientOptions kubelet = {});

// The metrics.k8s.io source of the API server (kubectl top): `local`'s
// usage for `local_node` (local may be null), a remote node's from its
// agent's GET /stats/summary (as NewProxyLogSource reaches it), and a
// simulated node's (annotation batchd.io/simulated) from the requests of its
// Running pods. Thread-safe.
std::unique_ptr<apiserver::ResourceMetricsSource> NewResourceMetricsSource(
    client::Client& client, Clock& clock, std::string local_node, NodeAgent* local,
    KubeletClientOptions kubelet = {});

// The agent of `batchd server` for this machine: a ProcessRuntime under
// `pod_root`, the system HostProbe, node name = the host name unless
// given. The caller starts it (NodeAgent::Start) after the API is up.
struct LocalAgentOptions {
  std::string node_name;  // "" = host name.
  std::string data_dir;
  // Pods and claim directories: <pod_root>/<uid>, <pod_root>/claims. Never the
  // store's directory (its files must stay out of pods' reach).
  std::string pod_root;
  std::string pod_user = kDefaultPodUser;
  int64_t pod_pids_limit = kDefaultPodPidsLimit;
  std::string shim_path;  // "" = batchd-shim next to /proc/self/exe.
  int log_port = 0;
  client::Informer* shared_pods = nullptr;  // see AgentOptions::shared_pods
  client::Informer* shared_endpoint_slices = nullptr;  // see AgentOptions
  reconcile::EventRecorder* events = nullptr;          // see AgentOptions::events
  // See AgentOptions (the same defaults).
  int64_t container_log_max_bytes = 10 << 20;
  int container_log_max_files = 5;
  double eviction_nodefs_available_fraction = 0.10;
  int64_t eviction_nodefs_available_bytes = 0;
  absl::Duration eviction_pressure_transition_period = absl::Minutes(5);
};
// `batchd-shim` next to the running executable.
std::string DefaultShimPath();

absl::StatusOr<std::unique_ptr<NodeAgent>> NewLocalAgent(const LocalAgentOptions& opts,
                                                         client::Client& client, Clock& clock);

}  // namespace batchd::agent
