// batchctl's queue commands (in the spirit of kueuectl): list ClusterQueues,
// LocalQueues and Workloads with their usage and state, stop/resume a queue
// or a workload, and create ClusterQueues, LocalQueues and ResourceFlavors
// from flags.
//
// The pure parts (flag parsing into objects, table formatting, status
// filters) are free functions so they can be tested without a server;
// `QueueCommands` runs them against any client::Client (HttpClient in the
// binary, InProcessClient in tests). Objects are Kueue v1beta2 JSON.
//
// Thread-safety: none needed; one command per process.
#pragma once

#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/kind.h"
#include "client/client.h"

namespace batchd::cli {

inline constexpr char kKueueGroup[] = "kueue.x-k8s.io";
inline constexpr char kKueueVersion[] = "v1beta2";

// --- shared flag syntax -----------------------------------------------------
// Also used by node_commands (create simulated-nodes). Errors name `--flag`.

// "k=v,k2=v2" -> map (a repeated key keeps its last value). "" -> {}.
absl::StatusOr<std::map<std::string, std::string>> ParseKeyValues(const std::string& s,
                                                                   const std::string& flag);

// One entry of a taint or toleration list: "k=v:Effect", "k:Effect", "k=v"
// or "k". The effect, when given, is NoSchedule, PreferNoSchedule or
// NoExecute.
struct TaintFlag {
  std::string key, value, effect;
  bool has_value = false;
};
absl::StatusOr<std::vector<TaintFlag>> ParseTaints(const std::string& s, const std::string& flag,
                                                   bool effect_required);

// --- create -----------------------------------------------------------------

struct ClusterQueueFlags {
  std::string name;
  std::string cohort;
  std::string queueing_strategy;          // "" = server default (BestEffortFIFO).
  std::string namespace_selector;         // "k=v,k2=v2"; "" = all namespaces ({}).
  std::string reclaim_within_cohort;      // Never|LowerPriority|Any.
  std::string preemption_within_cluster_queue;  // Never|LowerPriority|LowerOrNewerEqualPriority.
  // kueuectl syntax: "flavor:res=qty;res2=qty2,flavor2:res=qty" — flavors
  // separated by ',', resources by ';'.
  std::string nominal_quota;
  std::string borrowing_limit;
  std::string lending_limit;
};
absl::StatusOr<api::Json> BuildClusterQueue(const ClusterQueueFlags& f);

absl::StatusOr<api::Json> BuildLocalQueue(const std::string& name, const std::string& ns,
                                          const std::string& cluster_queue);

struct ResourceFlavorFlags {
  std::string name;
  std::string node_labels;   // "k=v,k2=v2".
  std::string node_taints;   // "k=v:NoSchedule,k2:NoExecute".
  std::string tolerations;   // "k=v:NoSchedule,k:NoExecute,k" (operator Exists when no value).
};
absl::StatusOr<api::Json> BuildResourceFlavor(const ResourceFlavorFlags& f);

// Parses "flavor:res=qty;res2=qty,flavor2:res=qty" into flavor -> res -> qty
// (flavor order kept in `order`). Quantities are validated.
struct FlavorQuantities {
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> resources;
};
absl::StatusOr<FlavorQuantities> ParseFlavorQuantities(const std::string& s,
                                                       const std::string& flag);

// --- list -------------------------------------------------------------------

// "Pending", "QuotaReserved", "Admitted" or "Finished" from the conditions.
std::string WorkloadState(const api::Json& wl);
// `filter`: all | pending | quotareserved | admitted | finished (case-insensitive).
absl::StatusOr<bool> WorkloadMatches(const api::Json& wl, const std::string& filter);

std::string FormatClusterQueues(const std::vector<api::Json>& cqs, absl::Time now);
std::string FormatLocalQueues(const std::vector<api::Json>& lqs, bool with_namespace,
                              absl::Time now);
// A TOPOLOGY column is added when any workload has a topology assignment:
// per level the one value all its domains share ("rack=r2"), or how many
// ("hostname x4").
// `positions` ("ns/name" -> position in its ClusterQueue, from the
// visibility API): a POSITION IN QUEUE column, as kueuectl's; EXEC TIME is
// the time since admission of admitted workloads.
std::string FormatWorkloads(const std::vector<api::Json>& wls, bool with_namespace,
                            absl::Time now,
                            const std::map<std::string, int64_t>* positions = nullptr);
// One line per level of a pod set's topology assignment, as above; "" when none.
std::string TopologySummary(const api::Json& topology_assignment);
// `batchctl describe workload`: queue, state, conditions, each pod set's
// count and flavors, its placement per domain (pods per lowest-level
// domain), unhealthy nodes, and why it is pending.
std::string DescribeWorkload(const api::Json& wl, absl::Time now);

// --- runner -----------------------------------------------------------------

struct ListFlags {
  std::string namespace_ = "default";
  bool all_namespaces = false;
  std::string cluster_queue;   // Filter (localqueues, workloads).
  std::string local_queue;     // Filter (workloads).
  std::string status = "all";  // Filter (workloads).
  std::string active;          // Filter (clusterqueues): "", "true", "false".
  std::string label_selector;
};

class QueueCommands {
 public:
  QueueCommands(client::Client& client, std::ostream& out, absl::Time now)
      : client_(client), out_(out), now_(now) {}
  // A GET of a raw API path answering JSON (the visibility API is outside
  // the Scheme). Unset: no positions, blockers or estimates.
  using RawGet = std::function<absl::StatusOr<api::Json>(const std::string& path)>;
  void SetRawGet(RawGet get) { raw_get_ = std::move(get); }

  // what: clusterqueues|localqueues|workloads (singular and short names too).
  absl::Status List(const std::string& what, const ListFlags& f);
  // what: clusterqueue|localqueue|workload. `keep_running` stops a queue with
  // Hold (admitted workloads keep running) rather than HoldAndDrain.
  absl::Status Stop(const std::string& what, const std::string& name, const std::string& ns,
                    bool keep_running);
  absl::Status Resume(const std::string& what, const std::string& name, const std::string& ns);
  // what: workload (the one kind with a description here).
  absl::Status Describe(const std::string& what, const std::string& name, const std::string& ns);
  // Creates `obj` as `what` (clusterqueue|localqueue|resourceflavor).
  absl::Status Create(const std::string& what, const std::string& ns, api::Json obj);

 private:
  const api::KindDef& Kind(const std::string& plural) const;

  // "ns/name" -> positionInClusterQueue / positionInLocalQueue of the
  // pending workloads of LocalQueue ns/lq (visibility API).
  absl::Status Positions(const std::string& ns, const std::string& lq,
                         std::map<std::string, std::pair<int64_t, int64_t>>* out);
  // The describe lines of a pending workload: position, blocker, estimate.
  std::string PendingLines(const api::Json& wl);

  client::Client& client_;
  std::ostream& out_;
  absl::Time now_;
  RawGet raw_get_;
};

// Normalises a kind word ("cq", "clusterqueue", "ClusterQueues", ...) to the
// plural resource name, or "" when unknown.
std::string ResourceFor(const std::string& word);

}  // namespace batchd::cli
