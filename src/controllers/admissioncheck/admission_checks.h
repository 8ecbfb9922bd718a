// Two-phase admission (Kueue's AdmissionChecks, KEP-993): the helpers the
// queue manager and the check controllers share. They read and write plain
// JSON objects; nothing here holds state.
//
//  - Which checks apply: a ClusterQueue's `spec.admissionChecksStrategy
//    .admissionChecks[]` rules, each for every flavor (no `onFlavors`) or only
//    when one of its `onFlavors` is assigned (v1beta1 `spec.admissionChecks`
//    arrive as rules without flavors).
//  - Which references are broken: a check that does not exist, or exists
//    without `Active=True` (no controller took it, or its parameters are bad),
//    makes the ClusterQueue inactive with Kueue's reasons
//    `AdmissionCheckNotFound` / `AdmissionCheckInactive`.
//  - The per-workload states in `status.admissionChecks[]` as Kueue writes
//    them: `Pending` on every new quota reservation (a check that was `Retry`
//    counts one more `retryCount`), `Ready` / `Retry` / `Rejected` from the
//    check's controller.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "api/field_error.h"

namespace batchd::controllers::admissioncheck {

using api::Json;

// Kueue's finalizer on ClusterQueues, ResourceFlavors and AdmissionChecks.
inline constexpr char kResourceInUseFinalizer[] = "kueue.k8s.io/resource-in-use";
// The built-in provisioning check's controller name.
inline constexpr char kProvisioningController[] = "kueue.x-k8s.io/provisioning-request";

inline constexpr char kPending[] = "Pending";
inline constexpr char kReady[] = "Ready";
inline constexpr char kRetry[] = "Retry";
inline constexpr char kRejected[] = "Rejected";

// Every check name the ClusterQueue references, sorted and distinct.
std::vector<std::string> ReferencedChecks(const Json& cq);

// The checks that apply to a workload of `cq` assigned `flavors`, sorted
// and distinct.
std::vector<std::string> ChecksFor(const Json& cq, const std::set<std::string>& flavors);

// The flavors an admission (`status.admission`) assigns: every pod set,
// every resource.
std::set<std::string> AssignedFlavors(const Json& admission);

// Looks up an AdmissionCheck by name (nullptr: none).
using CheckLookup = std::function<std::shared_ptr<const Json>(const std::string&)>;

// Kueue's reasons and messages for the ClusterQueue's broken references,
// appended in Kueue's order (missing, then inactive). Returns whether every
// referenced check exists and is active.
bool CheckReferencesUsable(const Json& cq, const CheckLookup& lookup,
                           std::vector<std::string>* reasons,
                           std::vector<std::string>* messages);

// Whether the AdmissionCheck has Active=True.
bool CheckActive(const Json& ac);

// `status.admissionChecks` for a new reservation under `checks` (the
// workload's `status` object is edited in place): every listed check
// Pending — kept as is when already Pending, a Retry counts one more
// retryCount, podSetUpdates dropped — and the others removed. Returns
// whether anything changed.
bool ResetForReservation(Json& status, const std::vector<std::string>& checks, absl::Time now);

// Makes the list hold exactly `checks` (a ClusterQueue changed while the
// workload waits): states of kept checks untouched, new ones Pending.
// Returns whether anything changed.
bool SyncCheckList(Json& status, const std::vector<std::string>& checks, absl::Time now);

// The state of check `name` in the workload (nullptr: none).
const Json* FindCheckState(const Json& wl, std::string_view name);

// Whether every entry of `status.admissionChecks` is Ready (true when none).
bool AllChecksReady(const Json& wl);

// Sets check `name`'s state (and message, requeueAfterSeconds when set,
// podSetUpdates when given) in the workload's `status` object; the
// transition time moves only when the state changes. Returns whether
// anything changed.
struct CheckStateUpdate {
  std::string state;
  std::string message;
  std::optional<int32_t> requeue_after_seconds;
  std::optional<Json> pod_set_updates;  // An array of PodSetUpdate.
};
bool SetCheckState(Json& status, std::string_view name, const CheckStateUpdate& update,
                   absl::Time now);

}  // namespace batchd::controllers::admissioncheck
