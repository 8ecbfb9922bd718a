// JSON access and time-formatting helpers shared by the core/v1 sources.
#include <cinttypes>
#include <cstdio>

#include "api/meta/time_util.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "api/core/v1/internal/schemas.h"

namespace batchd::api::core_v1::internal {

const Json* Get(const Json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(std::string(key));
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

std::string GetString(const Json& obj, std::string_view key) {
  const Json* v = Get(obj, key);
  return v && v->is_string() ? v->get<std::string>() : std::string();
}

int64_t GetInt(const Json& obj, std::string_view key, int64_t def) {
  const Json* v = Get(obj, key);
  if (v && v->is_number_integer()) return v->get<int64_t>();
  return def;
}

bool GetBool(const Json& obj, std::string_view key, bool def) {
  const Json* v = Get(obj, key);
  return v && v->is_boolean() ? v->get<bool>() : def;
}

const Json& GetArray(const Json& obj, std::string_view key) {
  static const Json kEmpty = Json::array();
  const Json* v = Get(obj, key);
  return v && v->is_array() ? *v : kEmpty;
}

const Json& GetObject(const Json& obj, std::string_view key) {
  static const Json kEmpty = Json::object();
  const Json* v = Get(obj, key);
  return v && v->is_object() ? *v : kEmpty;
}

bool ParseTime(const Json& v, absl::Time* out) {
  if (!v.is_string()) return false;
  std::string err;
  return absl::ParseTime(absl::RFC3339_full, v.get<std::string>(), out, &err);
}

// Go's duration.HumanDuration as kubectl prints ages: "45s", "5m", "5m3s",
// "3h", "3h4m", "2d", "2d3h", "400d", "3y20d"...
std::string HumanDuration(absl::Duration d) { return meta::HumanDuration(d); }

std::string HumanAge(const Json& rfc3339, absl::Time now) {
  absl::Time t;
  if (!ParseTime(rfc3339, &t)) return "<unknown>";
  return HumanDuration(now - t);
}

}  // namespace batchd::api::core_v1::internal
