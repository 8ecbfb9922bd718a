#include "api/meta/object_writers.h"

#include <string>

#include "api/json_access.h"

namespace batchd::api::meta {

void EnsureTypeMeta(Json& obj, std::string_view api_version, std::string_view kind) {
  if (!obj.contains("apiVersion")) obj["apiVersion"] = std::string(api_version);
  if (!obj.contains("kind")) obj["kind"] = std::string(kind);
}

void SetTypeMeta(Json& obj, std::string_view api_version, std::string_view kind) {
  obj["apiVersion"] = std::string(api_version);
  obj["kind"] = std::string(kind);
}

bool RemoveOwnerReferences(Json& obj, absl::FunctionRef<bool(std::string_view uid)> drop) {
  Json& meta = MutableObject(obj, "metadata");
  auto refs = meta.find("ownerReferences");
  if (refs == meta.end()) return false;
  Json kept = Json::array();
  bool changed = false;
  if (refs->is_array()) {
    for (Json& ref : *refs) {
      if (ref.is_object() && drop(StringMember(ref, "uid"))) {
        changed = true;
      } else {
        kept.push_back(std::move(ref));
      }
    }
  }
  if (kept.empty()) {
    meta.erase(refs);
  } else {
    *refs = std::move(kept);
  }
  return changed;
}

}  // namespace batchd::api::meta
