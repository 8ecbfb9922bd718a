#include "api/core/v1/taint.h"

#include "api/json_access.h"

namespace batchd::api::core_v1 {

namespace {

std::string StringOf(const Json& obj, std::string_view key) {
  const Json& v = Member(obj, key);
  return v.is_string() ? v.get<std::string>() : std::string();
}

}  // namespace

std::optional<TaintEffect> ParseTaintEffect(std::string_view s) {
  if (s == "NoSchedule") return TaintEffect::kNoSchedule;
  if (s == "PreferNoSchedule") return TaintEffect::kPreferNoSchedule;
  if (s == "NoExecute") return TaintEffect::kNoExecute;
  return std::nullopt;
}

const char* TaintEffectName(TaintEffect effect) {
  switch (effect) {
    case TaintEffect::kNoSchedule: return "NoSchedule";
    case TaintEffect::kPreferNoSchedule: return "PreferNoSchedule";
    case TaintEffect::kNoExecute: return "NoExecute";
  }
  return "";
}

std::optional<Taint> ParseTaint(const Json& taint) {
  if (!taint.is_object()) return std::nullopt;
  std::optional<TaintEffect> effect = ParseTaintEffect(StringOf(taint, "effect"));
  if (!effect) return std::nullopt;
  return Taint{StringOf(taint, "key"), StringOf(taint, "value"), *effect,
               StringOf(taint, "timeAdded")};
}

std::optional<Toleration> ParseToleration(const Json& toleration) {
  if (!toleration.is_object()) return std::nullopt;
  Toleration out;
  out.key = StringOf(toleration, "key");
  std::string op = StringOf(toleration, "operator");
  if (op == "Exists") {
    out.op = TolerationOperator::kExists;
  } else if (op.empty() || op == "Equal") {
    out.op = TolerationOperator::kEqual;
  } else {
    return std::nullopt;
  }
  out.value = StringOf(toleration, "value");
  std::string effect = StringOf(toleration, "effect");
  if (!effect.empty()) {
    out.effect = ParseTaintEffect(effect);
    if (!out.effect) return std::nullopt;
  }
  const Json& seconds = Member(toleration, "tolerationSeconds");
  if (seconds.is_number_integer()) out.toleration_seconds = seconds.get<int64_t>();
  return out;
}

std::vector<Taint> ParseTaintList(const Json& array) {
  std::vector<Taint> out;
  if (!array.is_array()) return out;
  for (const Json& t : array) {
    if (std::optional<Taint> taint = ParseTaint(t)) out.push_back(std::move(*taint));
  }
  return out;
}

std::vector<Toleration> ParseTolerationList(const Json& array) {
  std::vector<Toleration> out;
  if (!array.is_array()) return out;
  for (const Json& t : array) {
    if (std::optional<Toleration> toleration = ParseToleration(t)) {
      out.push_back(std::move(*toleration));
    }
  }
  return out;
}

std::vector<Taint> ParseTaints(const Json& node) {
  return ParseTaintList(Member(Member(node, "spec"), "taints"));
}

std::vector<Toleration> ParseTolerations(const Json& pod_spec) {
  return ParseTolerationList(Member(pod_spec, "tolerations"));
}

bool ToleratesTaint(const Toleration& toleration, const Taint& taint) {
  if (toleration.effect && *toleration.effect != taint.effect) return false;
  switch (toleration.op) {
    case TolerationOperator::kExists:
      return toleration.key.empty() || toleration.key == taint.key;
    case TolerationOperator::kEqual:
      return toleration.key == taint.key && toleration.value == taint.value;
  }
  return false;
}

const Toleration* FindToleration(const std::vector<Toleration>& tolerations, const Taint& taint) {
  for (const Toleration& t : tolerations) {
    if (ToleratesTaint(t, taint)) return &t;
  }
  return nullptr;
}

}  // namespace batchd::api::core_v1
