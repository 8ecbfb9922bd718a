#include "api/meta/object_meta.h"

#include <algorithm>
#include <cstdio>

#include "absl/random/distributions.h"
#include "api/json_access.h"
#include "api/meta/compare.h"
#include "api/meta/time_util.h"

namespace batchd::api::meta {
namespace {

std::string MetaString(const Json& obj, const char* key) {
  const Json* m = Metadata(obj);
  if (m == nullptr) return "";
  auto it = m->find(key);
  if (it == m->end() || !it->is_string()) return "";
  return it->get<std::string>();
}

void SetMetaString(Json& obj, const char* key, std::string_view value) {
  (*MutableMetadata(obj))[key] = std::string(value);
}

std::map<std::string, std::string> StringMap(const Json& obj, const char* key) {
  std::map<std::string, std::string> out;
  const Json* m = Metadata(obj);
  if (m == nullptr) return out;
  auto it = m->find(key);
  if (it == m->end() || !it->is_object()) return out;
  for (auto kv = it->begin(); kv != it->end(); ++kv) {
    if (kv->is_string()) out.emplace(kv.key(), kv->get<std::string>());
  }
  return out;
}

std::optional<std::string> StringMapEntry(const Json& obj, const char* map_key,
                                          std::string_view key) {
  const Json* m = Metadata(obj);
  if (m == nullptr) return std::nullopt;
  auto it = m->find(map_key);
  if (it == m->end() || !it->is_object()) return std::nullopt;
  auto kv = it->find(key);
  if (kv == it->end() || !kv->is_string()) return std::nullopt;
  return kv->get<std::string>();
}

void SetStringMapEntry(Json& obj, const char* map_key, std::string_view key,
                       std::string_view value) {
  Json& map = (*MutableMetadata(obj))[map_key];
  if (!map.is_object()) map = Json::object();
  map[std::string(key)] = std::string(value);
}

bool RemoveStringMapEntry(Json& obj, const char* map_key, std::string_view key) {
  if (Metadata(obj) == nullptr) return false;
  Json& m = *MutableMetadata(obj);
  auto it = m.find(map_key);
  if (it == m.end() || !it->is_object()) return false;
  bool removed = it->erase(std::string(key)) > 0;
  if (it->empty()) m.erase(it);
  return removed;
}

std::optional<absl::Time> MetaTime(const Json& obj, const char* key) {
  std::string s = MetaString(obj, key);
  if (s.empty()) return std::nullopt;
  absl::StatusOr<absl::Time> t = ParseRfc3339(s);
  if (!t.ok()) return std::nullopt;
  return *t;
}

}  // namespace

const Json* Metadata(const Json& obj) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find("metadata");
  if (it == obj.end() || !it->is_object()) return nullptr;
  return &*it;
}

Json* MutableMetadata(Json& obj) {
  if (obj.is_null()) obj = Json::object();
  Json& m = obj["metadata"];
  if (!m.is_object()) m = Json::object();
  return &m;
}

std::string GetName(const Json& obj) { return MetaString(obj, "name"); }
std::string GetNamespace(const Json& obj) { return MetaString(obj, "namespace"); }
std::string GetUid(const Json& obj) { return MetaString(obj, "uid"); }
std::string GetResourceVersion(const Json& obj) { return MetaString(obj, "resourceVersion"); }

int64_t GetGeneration(const Json& obj) {
  const Json* m = Metadata(obj);
  if (m == nullptr) return 0;
  auto it = m->find("generation");
  return it != m->end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

std::optional<absl::Time> GetCreationTimestamp(const Json& obj) {
  return MetaTime(obj, "creationTimestamp");
}
std::optional<absl::Time> GetDeletionTimestamp(const Json& obj) {
  return MetaTime(obj, "deletionTimestamp");
}
bool IsBeingDeleted(const Json& obj) { return !MetaString(obj, "deletionTimestamp").empty(); }

bool MetadataEqualButResourceVersion(const Json& a, const Json& b) {
  if (!a.is_object() || !b.is_object()) return a == b;
  size_t compared = 0;
  for (auto it = a.begin(); it != a.end(); ++it) {
    if (it.key() == "resourceVersion") continue;
    auto jt = b.find(it.key());
    if (jt == b.end() || *it != *jt) return false;
    ++compared;
  }
  return compared == b.size() - (b.contains("resourceVersion") ? 1 : 0);
}

void SetName(Json& obj, std::string_view name) { SetMetaString(obj, "name", name); }

std::map<std::string, std::string> Labels(const Json& obj) { return StringMap(obj, "labels"); }
std::map<std::string, std::string> Annotations(const Json& obj) {
  return StringMap(obj, "annotations");
}
std::optional<std::string> GetLabel(const Json& obj, std::string_view key) {
  return StringMapEntry(obj, "labels", key);
}
std::optional<std::string> GetAnnotation(const Json& obj, std::string_view key) {
  return StringMapEntry(obj, "annotations", key);
}
void SetLabel(Json& obj, std::string_view key, std::string_view value) {
  SetStringMapEntry(obj, "labels", key, value);
}
void SetAnnotation(Json& obj, std::string_view key, std::string_view value) {
  SetStringMapEntry(obj, "annotations", key, value);
}
bool RemoveLabel(Json& obj, std::string_view key) {
  return RemoveStringMapEntry(obj, "labels", key);
}
bool RemoveAnnotation(Json& obj, std::string_view key) {
  return RemoveStringMapEntry(obj, "annotations", key);
}

std::vector<std::string> Finalizers(const Json& obj) {
  std::vector<std::string> out;
  const Json* m = Metadata(obj);
  if (m == nullptr) return out;
  auto it = m->find("finalizers");
  if (it == m->end() || !it->is_array()) return out;
  for (const Json& f : *it) {
    if (f.is_string()) out.push_back(f.get<std::string>());
  }
  return out;
}

bool HasFinalizer(const Json& obj, std::string_view finalizer) {
  std::vector<std::string> fs = Finalizers(obj);
  return std::find(fs.begin(), fs.end(), finalizer) != fs.end();
}

bool AddFinalizer(Json& obj, std::string_view finalizer) {
  if (HasFinalizer(obj, finalizer)) return false;
  Json& list = (*MutableMetadata(obj))["finalizers"];
  if (!list.is_array()) list = Json::array();
  list.push_back(std::string(finalizer));
  return true;
}

bool RemoveFinalizer(Json& obj, std::string_view finalizer) {
  if (!HasFinalizer(obj, finalizer)) return false;
  Json& m = *MutableMetadata(obj);
  Json kept = Json::array();
  for (const Json& f : m["finalizers"]) {
    if (!(f.is_string() && f.get_ref<const std::string&>() == finalizer)) kept.push_back(f);
  }
  if (kept.empty()) {
    m.erase("finalizers");
  } else {
    m["finalizers"] = std::move(kept);
  }
  return true;
}

Json OwnerReference::ToJson() const {
  Json j = {{"apiVersion", api_version}, {"kind", kind}, {"name", name}, {"uid", uid}};
  if (controller) j["controller"] = true;
  if (block_owner_deletion) j["blockOwnerDeletion"] = true;
  return j;
}

std::optional<OwnerReference> OwnerReference::FromJson(const Json& ref) {
  if (!ref.is_object()) return std::nullopt;
  return OwnerReference{api::CopyStringMember(ref, "apiVersion"),
                        api::CopyStringMember(ref, "kind"),
                        api::CopyStringMember(ref, "name"),
                        api::CopyStringMember(ref, "uid"),
                        api::BoolMember(ref, "controller"),
                        api::BoolMember(ref, "blockOwnerDeletion")};
}

namespace {

// metadata.ownerReferences, or [] when it is absent or not a list.
const Json& OwnerReferenceList(const Json& obj) {
  return api::MemberArray(api::MemberObject(obj, "metadata"), "ownerReferences");
}

// The first owner reference with `controller: true`, or null.
const Json* FindControllerRef(const Json& obj) {
  for (const Json& r : OwnerReferenceList(obj)) {
    if (api::BoolMember(r, "controller")) return &r;
  }
  return nullptr;
}

}  // namespace

std::vector<OwnerReference> GetOwnerReferences(const Json& obj) {
  std::vector<OwnerReference> out;
  const Json& list = OwnerReferenceList(obj);
  out.reserve(list.size());
  for (const Json& r : list) {
    if (std::optional<OwnerReference> ref = OwnerReference::FromJson(r)) {
      out.push_back(std::move(*ref));
    }
  }
  return out;
}

std::optional<OwnerReference> GetControllerRef(const Json& obj) {
  // Only the controller's entry is decoded.
  const Json* r = FindControllerRef(obj);
  if (r == nullptr) return std::nullopt;
  return OwnerReference::FromJson(*r);
}

std::optional<OwnerRefView> ControllerRefView(const Json& obj) {
  const Json* r = FindControllerRef(obj);
  if (r == nullptr) return std::nullopt;
  return OwnerRefView{api::StringMember(*r, "apiVersion"), api::StringMember(*r, "kind"),
                      api::StringMember(*r, "name"), api::StringMember(*r, "uid")};
}

std::string ControllerKey(const Json& obj, std::string_view api_version, std::string_view kind) {
  std::optional<OwnerRefView> ref = ControllerRefView(obj);
  if (!ref || ref->kind != kind || ref->api_version != api_version) return "";
  std::string key = GetNamespace(obj);
  key.reserve(key.size() + 1 + ref->name.size());
  key += '/';
  key += ref->name;
  return key;
}

bool IsControlledBy(const Json& obj, std::string_view owner_uid) {
  std::optional<OwnerRefView> ref = ControllerRefView(obj);
  return ref.has_value() && ref->uid == owner_uid;
}

void SetOwnerReference(Json& obj, const OwnerReference& ref) {
  Json& list = (*MutableMetadata(obj))["ownerReferences"];
  if (!list.is_array()) list = Json::array();
  for (Json& existing : list) {
    std::optional<OwnerReference> parsed = OwnerReference::FromJson(existing);
    if (parsed && parsed->uid == ref.uid) {
      existing = ref.ToJson();
      return;
    }
  }
  list.push_back(ref.ToJson());
}

OwnerReference NewControllerRef(const Json& owner) {
  auto top = [&owner](const char* key) {
    auto it = owner.is_object() ? owner.find(key) : owner.end();
    return owner.is_object() && it != owner.end() && it->is_string() ? it->get<std::string>()
                                                                     : std::string();
  };
  return OwnerReference{top("apiVersion"),   top("kind"),
                        GetName(owner),      GetUid(owner),
                        /*controller=*/true, /*block_owner_deletion=*/true};
}

std::string NewUid(absl::BitGenRef gen) {
  uint8_t b[16];
  for (uint8_t& x : b) x = absl::Uniform<uint8_t>(absl::IntervalClosed, gen, 0, 255);
  b[6] = static_cast<uint8_t>((b[6] & 0x0f) | 0x40);  // Version 4.
  b[8] = static_cast<uint8_t>((b[8] & 0x3f) | 0x80);  // RFC 4122 variant.
  char out[37];
  std::snprintf(out, sizeof(out),
                "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                b[15]);
  return out;
}

}  // namespace batchd::api::meta
