#include "api/meta/object_view.h"

#include <string>

#include "api/json_access.h"
#include "api/meta/time_util.h"

namespace batchd::api::meta {

namespace {

const Json* ObjectOrNull(const Json& v) { return v.is_object() ? &v : nullptr; }
const Json* ArrayOrNull(const Json& v) { return v.is_array() ? &v : nullptr; }

std::optional<std::string_view> StringEntry(const Json* map, std::string_view key) {
  if (map == nullptr) return std::nullopt;
  const Json& v = Member(*map, key);
  if (!v.is_string()) return std::nullopt;
  return AsString(v);
}

}  // namespace

ObjectMetaView ObjectMetaView::Parse(const Json& obj) {
  const Json& m = Member(obj, "metadata");
  ObjectMetaView v;
  v.name = StringMember(m, "name");
  v.namespace_ = StringMember(m, "namespace");
  v.generate_name = StringMember(m, "generateName");
  v.uid = StringMember(m, "uid");
  v.resource_version = StringMember(m, "resourceVersion");
  v.generation = IntMember(m, "generation");
  v.creation_timestamp = StringMember(m, "creationTimestamp");
  v.deletion_timestamp = StringMember(m, "deletionTimestamp");
  v.deletion_grace_period_seconds = AsOptionalInt(Member(m, "deletionGracePeriodSeconds"));
  v.labels = ObjectOrNull(Member(m, "labels"));
  v.annotations = ObjectOrNull(Member(m, "annotations"));
  v.finalizers = ArrayOrNull(Member(m, "finalizers"));
  v.owner_references = ArrayOrNull(Member(m, "ownerReferences"));
  return v;
}

std::string ObjectMetaView::Key() const {
  std::string key(namespace_);
  if (!key.empty()) key += '/';
  key += name;
  return key;
}

std::optional<std::string_view> ObjectMetaView::Label(std::string_view key) const {
  return StringEntry(labels, key);
}

std::optional<std::string_view> ObjectMetaView::Annotation(std::string_view key) const {
  return StringEntry(annotations, key);
}

bool ObjectMetaView::HasFinalizer(std::string_view finalizer) const {
  if (finalizers == nullptr) return false;
  for (const Json& f : *finalizers) {
    if (AsString(f) == finalizer) return true;
  }
  return false;
}

std::string_view ObjectMetaView::ControllerUid() const {
  if (owner_references == nullptr) return "";
  for (const Json& ref : *owner_references) {
    if (BoolMember(ref, "controller")) return StringMember(ref, "uid");
  }
  return "";
}

std::optional<absl::Time> ObjectMetaView::CreationTime() const {
  return ParseOptionalRfc3339(creation_timestamp);
}

std::optional<absl::Time> ObjectMetaView::DeletionTime() const {
  return ParseOptionalRfc3339(deletion_timestamp);
}

}  // namespace batchd::api::meta
