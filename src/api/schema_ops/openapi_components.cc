// components.schemas generation for the OpenAPI v3 documents.
#include "api/schema_ops/internal/openapi_internal.h"

namespace batchd::api::schema_ops::internal {
namespace {

using Type = Schema::Type;

constexpr char kQuantityRef[] = "io.k8s.apimachinery.pkg.api.resource.Quantity";
constexpr char kTimeRef[] = "io.k8s.apimachinery.pkg.apis.meta.v1.Time";
constexpr char kIntOrStringRef[] = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";

// The component name a schema is published under, or "" when it is inlined.
std::string ComponentName(const Schema& s) {
  switch (s.type) {
    case Type::kObject: return s.ref;
    case Type::kQuantity: return s.ref.empty() ? kQuantityRef : s.ref;
    case Type::kTime: return s.ref.empty() ? kTimeRef : s.ref;
    case Type::kIntOrString: return s.ref.empty() ? kIntOrStringRef : s.ref;
    default: return "";
  }
}

void AddListExtensions(const Schema& s, Json& out) {
  if (!s.patch_strategy.empty()) out["x-kubernetes-patch-strategy"] = s.patch_strategy;
  if (!s.patch_merge_key.empty()) out["x-kubernetes-patch-merge-key"] = s.patch_merge_key;
  if (!s.list_type.empty()) out["x-kubernetes-list-type"] = s.list_type;
  if (!s.list_map_keys.empty()) out["x-kubernetes-list-map-keys"] = s.list_map_keys;
}

}  // namespace

std::string RefPath(const std::string& component) { return "#/components/schemas/" + component; }

Json ComponentBuilder::Use(const Schema& s) {
  std::string name = ComponentName(s);
  if (name.empty()) return Body(s);
  Define(name, s);
  Json use = {{"allOf", Json::array({{{"$ref", RefPath(name)}}})}};
  if (!s.description.empty()) use["description"] = s.description;
  return use;
}

void ComponentBuilder::Define(const std::string& name, const Schema& s) {
  if (schemas_.contains(name)) return;
  schemas_[name] = Json::object();  // Placeholder: guards against cycles.
  Json body = Body(s);
  schemas_[name] = std::move(body);
}

Json ComponentBuilder::Body(const Schema& s) {
  Json out = Json::object();
  if (!s.description.empty()) out["description"] = s.description;
  switch (s.type) {
    case Type::kObject: {
      out["type"] = "object";
      Json props = Json::object();
      for (const auto& [name, prop] : s.properties) {
        if (prop) props[name] = Use(*prop);
      }
      if (!props.empty()) out["properties"] = std::move(props);
      if (!s.required.empty()) out["required"] = s.required;
      if (s.preserve_unknown) out["x-kubernetes-preserve-unknown-fields"] = true;
      if (!s.patch_strategy.empty()) out["x-kubernetes-patch-strategy"] = s.patch_strategy;
      break;
    }
    case Type::kArray:
      out["type"] = "array";
      out["items"] = s.items ? Use(*s.items) : Json::object();
      AddListExtensions(s, out);
      break;
    case Type::kMap:
      out["type"] = "object";
      out["additionalProperties"] = s.items ? Use(*s.items) : Json::object();
      break;
    case Type::kString:
      out["type"] = "string";
      if (!s.format.empty()) out["format"] = s.format;
      if (!s.enum_values.empty()) out["enum"] = s.enum_values;
      break;
    case Type::kInteger:
      out["type"] = "integer";
      out["format"] = s.format.empty() ? "int64" : s.format;
      break;
    case Type::kNumber:
      out["type"] = "number";
      out["format"] = "double";
      break;
    case Type::kBoolean: out["type"] = "boolean"; break;
    case Type::kIntOrString:
      out["type"] = "string";
      out["format"] = "int-or-string";
      out["x-kubernetes-int-or-string"] = true;
      break;
    case Type::kQuantity:
      out["type"] = "string";
      if (!out.contains("description")) {
        out["description"] = "Quantity is a fixed-point representation of a number, e.g. "
                             "500m, 1.5Gi, 2e3.";
      }
      break;
    case Type::kTime:
      out["type"] = "string";
      out["format"] = "date-time";
      break;
    case Type::kAny:
      out["type"] = "object";
      out["x-kubernetes-preserve-unknown-fields"] = true;
      break;
  }
  return out;
}

void ComponentBuilder::DefineKind(const std::string& name, const Schema& s, const Json& gvk) {
  Define(name, s);
  schemas_[name]["x-kubernetes-group-version-kind"] = Json::array({gvk});
}

}  // namespace batchd::api::schema_ops::internal
