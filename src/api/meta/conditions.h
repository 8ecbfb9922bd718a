// Status conditions, the one implementation for every kind.
//
// Kubernetes has four condition shapes that differ in their timestamps and in
// how a write changes them:
//   kMeta  metav1.Condition (Kueue's Workload/ClusterQueue/LocalQueue,
//          JobSet, PodGroup): {type, status, reason, message,
//          observedGeneration, lastTransitionTime}. Set as apimachinery's
//          SetStatusCondition: lastTransitionTime moves only when the status
//          changes; observedGeneration is the object's metadata.generation
//          (omitted while that is 0).
//   kJob   batch/v1 JobCondition: {type, status, reason?, message?,
//          lastProbeTime, lastTransitionTime}. Set as the Job controller's
//          ensureJobConditionStatus: any change rewrites the condition with
//          both times now; a False condition that is absent is not added.
//   kPod   core/v1 PodCondition: {type, status, reason?, message?,
//          lastProbeTime: null, lastTransitionTime}; the transition time
//          moves only when the status changes.
//   kNode  core/v1 NodeCondition: {type, status, reason, message,
//          lastHeartbeatTime, lastTransitionTime}; every set is a heartbeat
//          (lastHeartbeatTime = now), the transition time moves only when
//          the status changes.
// Readers take the whole object and look in `status.conditions`; the `...In`
// forms take the conditions array itself.
//
// Thread-safety: free functions over JSON the caller owns.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/time/time.h"
#include "api/field_error.h"

namespace batchd::api::meta {

inline constexpr char kConditionTrue[] = "True";
inline constexpr char kConditionFalse[] = "False";
inline constexpr char kConditionUnknown[] = "Unknown";

enum class ConditionShape { kMeta, kJob, kPod, kNode };

// A condition as a controller sets it; the shape adds the timestamps.
struct Condition {
  std::string type;
  std::string status = kConditionTrue;
  std::string reason;
  std::string message;

  friend bool operator==(const Condition&, const Condition&) = default;
};

// The entry of `type` in `obj.status.conditions` (in `conditions`), or
// nullptr when there is none.
const Json* FindCondition(const Json& obj, std::string_view type);
const Json* FindConditionIn(const Json& conditions, std::string_view type);
// The condition of `type` as a value, or nullopt.
std::optional<Condition> GetCondition(const Json& obj, std::string_view type);
// Its status ("True", "False", "Unknown"), or "" when there is none.
std::string_view ConditionStatus(const Json& obj, std::string_view type);
bool IsConditionTrue(const Json& obj, std::string_view type);
// Its parsed lastTransitionTime, or nullopt when absent or unparsable.
std::optional<absl::Time> ConditionTransitionTime(const Json& obj, std::string_view type);

// Sets `c` in `obj.status.conditions` by the rules of `shape` (creating
// `status` and `conditions` when needed); returns whether anything changed.
bool SetCondition(Json& obj, ConditionShape shape, const Condition& c, absl::Time now);
// The same over a conditions array (made one when it is not). `generation`
// is the observedGeneration a kMeta condition records (0 = none).
bool SetConditionIn(Json& conditions, ConditionShape shape, const Condition& c, absl::Time now,
                    int64_t generation = 0);
// Removes every condition of `type`; returns whether one was removed.
bool RemoveCondition(Json& obj, std::string_view type);
// The same over a conditions array (false when it is not one).
bool RemoveConditionIn(Json& conditions, std::string_view type);

}  // namespace batchd::api::meta
