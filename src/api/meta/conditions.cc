#include "api/meta/conditions.h"

#include <utility>

#include "api/json_access.h"
#include "api/meta/object_meta.h"
#include "api/meta/time_util.h"

namespace batchd::api::meta {

namespace {

bool SameContent(const Json& existing, const Condition& c) {
  return StringMember(existing, "status") == c.status &&
         StringMember(existing, "reason") == c.reason &&
         StringMember(existing, "message") == c.message;
}

// The whole condition `c` of `shape` as written now; `transition` is the
// lastTransitionTime to keep.
Json Build(ConditionShape shape, const Condition& c, const std::string& now,
           const std::string& transition, int64_t generation) {
  Json j = {{"type", c.type}, {"status", c.status}, {"lastTransitionTime", transition}};
  const bool always_text = shape == ConditionShape::kMeta || shape == ConditionShape::kNode;
  if (always_text || !c.reason.empty()) j["reason"] = c.reason;
  if (always_text || !c.message.empty()) j["message"] = c.message;
  switch (shape) {
    case ConditionShape::kMeta:
      if (generation > 0) j["observedGeneration"] = generation;
      break;
    case ConditionShape::kJob:
      j["lastProbeTime"] = now;
      break;
    case ConditionShape::kPod:
      j["lastProbeTime"] = nullptr;
      break;
    case ConditionShape::kNode:
      j["lastHeartbeatTime"] = now;
      break;
  }
  return j;
}

// Rewrites `existing` (a condition of c.type) to `c`; returns whether it changed.
bool Update(Json& existing, ConditionShape shape, const Condition& c, const std::string& now,
            int64_t generation) {
  const bool same_status = StringMember(existing, "status") == c.status;
  switch (shape) {
    case ConditionShape::kMeta: {
      const bool same_generation =
          generation <= 0 || IntMember(existing, "observedGeneration") == generation;
      if (SameContent(existing, c) && same_generation) return false;
      // Fields other writers added are kept, as SetStatusCondition keeps them.
      if (!same_status) existing["lastTransitionTime"] = now;
      existing["status"] = c.status;
      existing["reason"] = c.reason;
      existing["message"] = c.message;
      if (generation > 0) existing["observedGeneration"] = generation;
      return true;
    }
    case ConditionShape::kJob:
      if (SameContent(existing, c)) return false;
      existing = Build(shape, c, now, now, generation);
      return true;
    case ConditionShape::kPod:
    case ConditionShape::kNode: {
      if (shape == ConditionShape::kPod && SameContent(existing, c)) return false;
      std::string transition = now;
      if (same_status && Member(existing, "lastTransitionTime").is_string()) {
        transition = existing["lastTransitionTime"].get<std::string>();
      }
      Json next = Build(shape, c, now, transition, generation);
      if (next == existing) return false;
      existing = std::move(next);
      return true;
    }
  }
  return false;
}

}  // namespace

const Json* FindConditionIn(const Json& conditions, std::string_view type) {
  if (!conditions.is_array()) return nullptr;
  for (const Json& c : conditions) {
    if (StringMember(c, "type") == type) return &c;
  }
  return nullptr;
}

const Json* FindCondition(const Json& obj, std::string_view type) {
  return FindConditionIn(MemberAt(obj, {"status", "conditions"}), type);
}

std::optional<Condition> GetCondition(const Json& obj, std::string_view type) {
  const Json* c = FindCondition(obj, type);
  if (c == nullptr) return std::nullopt;
  return Condition{std::string(type), std::string(StringMember(*c, "status")),
                   std::string(StringMember(*c, "reason")),
                   std::string(StringMember(*c, "message"))};
}

std::string_view ConditionStatus(const Json& obj, std::string_view type) {
  const Json* c = FindCondition(obj, type);
  return c == nullptr ? std::string_view() : StringMember(*c, "status");
}

bool IsConditionTrue(const Json& obj, std::string_view type) {
  return ConditionStatus(obj, type) == kConditionTrue;
}

std::optional<absl::Time> ConditionTransitionTime(const Json& obj, std::string_view type) {
  const Json* c = FindCondition(obj, type);
  if (c == nullptr) return std::nullopt;
  auto t = ParseRfc3339(StringMember(*c, "lastTransitionTime"));
  if (!t.ok()) return std::nullopt;
  return *t;
}

bool SetConditionIn(Json& conditions, ConditionShape shape, const Condition& c, absl::Time now,
                    int64_t generation) {
  if (!conditions.is_array()) conditions = Json::array();
  const std::string ts = FormatRfc3339(now);
  for (Json& existing : conditions) {
    if (StringMember(existing, "type") == c.type) {
      return Update(existing, shape, c, ts, generation);
    }
  }
  // ensureJobConditionStatus never adds a False condition.
  if (shape == ConditionShape::kJob && c.status == kConditionFalse) return false;
  conditions.push_back(Build(shape, c, ts, ts, generation));
  return true;
}

bool SetCondition(Json& obj, ConditionShape shape, const Condition& c, absl::Time now) {
  Json& status = MutableObject(obj, "status");
  if (shape == ConditionShape::kJob && c.status == kConditionFalse &&
      FindConditionIn(Member(status, "conditions"), c.type) == nullptr) {
    // Not added, and no empty `conditions` left behind (the Job controller
    // writes `conditions` only when it has one).
    if (const Json& conds = Member(status, "conditions"); conds.is_array() && conds.empty()) {
      status.erase("conditions");
    }
    return false;
  }
  return SetConditionIn(MutableArray(status, "conditions"), shape, c, now, GetGeneration(obj));
}

bool RemoveCondition(Json& obj, std::string_view type) {
  Json* conditions = FindMutableMemberAt(obj, {"status", "conditions"});
  return conditions != nullptr && RemoveConditionIn(*conditions, type);
}

bool RemoveConditionIn(Json& conditions, std::string_view type) {
  if (!conditions.is_array()) return false;
  Json kept = Json::array();
  for (Json& c : conditions) {
    if (StringMember(c, "type") != type) kept.push_back(std::move(c));
  }
  const bool removed = kept.size() != conditions.size();
  conditions = std::move(kept);
  return removed;
}

}  // namespace batchd::api::meta
