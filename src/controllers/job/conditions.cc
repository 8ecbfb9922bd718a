#include "controllers/job/conditions.h"

#include "api/meta/time_util.h"

namespace batchd::controllers::job {

using api::Json;

namespace {

std::string Str(const Json& o, const char* k) {
  if (!o.is_object()) return "";
  auto it = o.find(k);
  return it != o.end() && it->is_string() ? it->get<std::string>() : "";
}

Json ConditionJson(const Condition& c, absl::Time now) {
  std::string t = api::meta::FormatRfc3339(now);
  Json j = {{"type", c.type}, {"status", c.status}, {"lastProbeTime", t},
            {"lastTransitionTime", t}};
  if (!c.reason.empty()) j["reason"] = c.reason;
  if (!c.message.empty()) j["message"] = c.message;
  return j;
}

}  // namespace

std::optional<Condition> FindCondition(const Json& job, const std::string& type) {
  if (!job.contains("status") || !job["status"].is_object()) return std::nullopt;
  const Json& status = job["status"];
  auto it = status.find("conditions");
  if (it == status.end() || !it->is_array()) return std::nullopt;
  for (const Json& c : *it) {
    if (Str(c, "type") == type) {
      return Condition{type, Str(c, "status"), Str(c, "reason"), Str(c, "message")};
    }
  }
  return std::nullopt;
}

bool HasTrueCondition(const Json& job, const std::string& type) {
  auto c = FindCondition(job, type);
  return c && c->status == "True";
}

bool EnsureCondition(Json& job, const Condition& c, absl::Time now) {
  Json& status = job["status"];
  if (!status.is_object()) status = Json::object();
  Json& conds = status["conditions"];
  if (!conds.is_array()) conds = Json::array();
  for (Json& existing : conds) {
    if (Str(existing, "type") != c.type) continue;
    if (Str(existing, "status") == c.status && Str(existing, "reason") == c.reason &&
        Str(existing, "message") == c.message) {
      return false;
    }
    existing = ConditionJson(c, now);
    return true;
  }
  if (c.status == "False") {
    if (conds.empty()) status.erase("conditions");
    return false;
  }
  conds.push_back(ConditionJson(c, now));
  return true;
}

}  // namespace batchd::controllers::job
