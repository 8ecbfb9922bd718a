// Taints (Node `spec.taints`) and tolerations (Pod `spec.tolerations`, Kueue
// ResourceFlavor `spec.nodeTaints` / `spec.tolerations`) as typed values, with
// Kubernetes' matching rule. One set shared by the pod scheduler, the node
// lifecycle controller and the admission core.
//
// Matching (Kubernetes' Toleration.ToleratesTaint): a toleration with an
// effect matches only taints of that effect; `Exists` matches any value of its
// key, or every taint when the key is empty; `Equal` (the default) matches
// key and value exactly, so an empty key with `Equal` matches nothing.
//
// Thread-safety: value types and pure functions; safe to use concurrently.
// Parsers are lenient (the registry has validated the objects): entries with an
// effect or operator Kubernetes does not define are skipped, since such a
// taint is never considered and such a toleration tolerates nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/field_error.h"

namespace batchd::api::core_v1 {

enum class TaintEffect { kNoSchedule, kPreferNoSchedule, kNoExecute };
enum class TolerationOperator { kEqual, kExists };

// "NoSchedule", "PreferNoSchedule", "NoExecute"; nullopt for anything else.
std::optional<TaintEffect> ParseTaintEffect(std::string_view s);
const char* TaintEffectName(TaintEffect effect);

struct Taint {
  std::string key;
  std::string value;
  TaintEffect effect = TaintEffect::kNoSchedule;
  std::string time_added;  // RFC 3339; may be empty

  friend bool operator==(const Taint&, const Taint&) = default;
};

struct Toleration {
  std::string key;  // empty with kExists: tolerates every taint
  TolerationOperator op = TolerationOperator::kEqual;
  std::string value;
  std::optional<TaintEffect> effect;  // nullopt: every effect
  std::optional<int64_t> toleration_seconds;  // NoExecute: how long the pod stays bound

  friend bool operator==(const Toleration&, const Toleration&) = default;
};

// One taint / toleration object; nullopt when it is not an object or names an
// undefined effect or operator.
std::optional<Taint> ParseTaint(const Json& taint);
std::optional<Toleration> ParseToleration(const Json& toleration);
// A JSON array of taint / toleration objects (non-arrays read as empty).
std::vector<Taint> ParseTaintList(const Json& array);
std::vector<Toleration> ParseTolerationList(const Json& array);
// `spec.taints` of a Node object.
std::vector<Taint> ParseTaints(const Json& node);
// `tolerations` of a pod spec (the `spec` object).
std::vector<Toleration> ParseTolerations(const Json& pod_spec);

bool ToleratesTaint(const Toleration& toleration, const Taint& taint);
// The first toleration in `tolerations` matching `taint`, or nullptr.
const Toleration* FindToleration(const std::vector<Toleration>& tolerations, const Taint& taint);
// Whether some toleration of `tolerations` matches `taint`.
inline bool Tolerated(const std::vector<Toleration>& tolerations, const Taint& taint) {
  return FindToleration(tolerations, taint) != nullptr;
}

}  // namespace batchd::api::core_v1
