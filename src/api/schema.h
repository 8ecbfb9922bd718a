// Schema: the description of a kind's JSON shape, written once per kind and
// used for everything that depends on shape: unknown-field pruning and
// `fieldValidation=Strict` errors, type checking of decoded bodies, strategic
// merge patch list semantics (patch strategy / merge key), the OpenAPI v3
// documents kubectl validates and explains with, and table helpers.
//
// Schemas are immutable after construction and shared (`SchemaPtr`); build
// them once at start-up with the helpers below:
//
//   auto container = Object("io.k8s.api.core.v1.Container", "A single application container.")
//       .Field("name", Str("Name of the container."))
//       .Field("env", ArrayOf(envVar).MergeKey("name").Doc("Environment variables."))
//       .Require("name")
//       .Build();
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace batchd::api {

struct Schema;
using SchemaPtr = std::shared_ptr<const Schema>;

struct Schema {
  enum class Type {
    kObject,       // Fixed properties.
    kArray,        // `items`.
    kMap,          // String keys, values of `items` (additionalProperties).
    kString,
    kInteger,      // `format` int32 or int64.
    kNumber,
    kBoolean,
    kIntOrString,  // int or string (e.g. maxUnavailable, port).
    kQuantity,     // resource.Quantity: int/number/string, canonicalised on write.
    kTime,         // RFC 3339 string.
    kAny,          // Anything, kept as given (x-kubernetes-preserve-unknown-fields).
  };

  Type type = Type::kAny;
  std::string description;
  std::string format;
  // kObject: properties in declaration order, and the required ones.
  std::vector<std::pair<std::string, SchemaPtr>> properties;
  std::vector<std::string> required;
  // kObject whose unknown fields are kept rather than pruned.
  bool preserve_unknown = false;
  // kArray element / kMap value.
  SchemaPtr items;
  std::vector<std::string> enum_values;
  // Strategic merge patch metadata for kArray (and `retainKeys` for kObject):
  // x-kubernetes-patch-strategy / x-kubernetes-patch-merge-key.
  std::string patch_strategy;
  std::string patch_merge_key;
  // x-kubernetes-list-type ("atomic", "map", "set") and list-map-keys.
  std::string list_type;
  std::vector<std::string> list_map_keys;
  // Component name for OpenAPI `$ref`s, e.g. "io.k8s.api.batch.v1.JobSpec";
  // empty for inline schemas.
  std::string ref;

  // The property schema, or nullptr when `name` is not a declared property.
  const Schema* Property(std::string_view name) const {
    for (const auto& [n, s] : properties) {
      if (n == name) return s.get();
    }
    return nullptr;
  }
};

// Fluent builder; every setter returns *this, `Build()` freezes it.
class SchemaBuilder {
 public:
  explicit SchemaBuilder(Schema::Type t) : s_(std::make_shared<Schema>()) { s_->type = t; }
  explicit SchemaBuilder(SchemaPtr base) : s_(std::make_shared<Schema>(*base)) {}

  SchemaBuilder& Doc(std::string d) { s_->description = std::move(d); return *this; }
  SchemaBuilder& Format(std::string f) { s_->format = std::move(f); return *this; }
  SchemaBuilder& Field(std::string name, SchemaPtr s) {
    s_->properties.emplace_back(std::move(name), std::move(s));
    return *this;
  }
  SchemaBuilder& Field(std::string name, SchemaBuilder& b) { return Field(std::move(name), b.Build()); }
  SchemaBuilder& Field(std::string name, SchemaBuilder&& b) { return Field(std::move(name), b.Build()); }
  SchemaBuilder& Require(std::string name) { s_->required.push_back(std::move(name)); return *this; }
  SchemaBuilder& PreserveUnknown() { s_->preserve_unknown = true; return *this; }
  SchemaBuilder& Enum(std::vector<std::string> v) { s_->enum_values = std::move(v); return *this; }
  // List of objects merged by `key` in strategic merge patch (patchStrategy=merge).
  SchemaBuilder& MergeKey(std::string key) {
    s_->patch_strategy = "merge";
    s_->patch_merge_key = key;
    s_->list_type = "map";
    s_->list_map_keys = {std::move(key)};
    return *this;
  }
  SchemaBuilder& PatchStrategy(std::string st) { s_->patch_strategy = std::move(st); return *this; }
  SchemaBuilder& ListType(std::string t) { s_->list_type = std::move(t); return *this; }
  SchemaBuilder& ListMapKeys(std::vector<std::string> k) { s_->list_map_keys = std::move(k); return *this; }

  SchemaPtr Build() const { return s_; }
  operator SchemaPtr() const { return s_; }  // NOLINT: lets builders be passed as schemas.

 private:
  std::shared_ptr<Schema> s_;
};

inline SchemaBuilder Object(std::string ref, std::string doc) {
  SchemaBuilder b(Schema::Type::kObject);
  b.Doc(std::move(doc));
  const_cast<Schema&>(*b.Build()).ref = std::move(ref);
  return b;
}
inline SchemaBuilder InlineObject(std::string doc) { return SchemaBuilder(Schema::Type::kObject).Doc(std::move(doc)); }
inline SchemaBuilder Str(std::string doc = "") { return SchemaBuilder(Schema::Type::kString).Doc(std::move(doc)); }
inline SchemaBuilder Int32(std::string doc = "") { return SchemaBuilder(Schema::Type::kInteger).Format("int32").Doc(std::move(doc)); }
inline SchemaBuilder Int64(std::string doc = "") { return SchemaBuilder(Schema::Type::kInteger).Format("int64").Doc(std::move(doc)); }
inline SchemaBuilder Number(std::string doc = "") { return SchemaBuilder(Schema::Type::kNumber).Format("double").Doc(std::move(doc)); }
inline SchemaBuilder Bool(std::string doc = "") { return SchemaBuilder(Schema::Type::kBoolean).Doc(std::move(doc)); }
inline SchemaBuilder IntOrString(std::string doc = "") { return SchemaBuilder(Schema::Type::kIntOrString).Format("int-or-string").Doc(std::move(doc)); }
inline SchemaBuilder QuantitySchema(std::string doc = "") { return SchemaBuilder(Schema::Type::kQuantity).Doc(std::move(doc)); }
inline SchemaBuilder TimeSchema(std::string doc = "") { return SchemaBuilder(Schema::Type::kTime).Format("date-time").Doc(std::move(doc)); }
inline SchemaBuilder AnyValue(std::string doc = "") { return SchemaBuilder(Schema::Type::kAny).Doc(std::move(doc)); }
inline SchemaBuilder ArrayOf(SchemaPtr item, std::string doc = "") {
  SchemaBuilder b(Schema::Type::kArray);
  b.Doc(std::move(doc));
  const_cast<Schema&>(*b.Build()).items = std::move(item);
  return b;
}
// A list of strings.
inline SchemaBuilder StrList(std::string doc = "") { return ArrayOf(Str(), std::move(doc)); }
inline SchemaBuilder MapOf(SchemaPtr value, std::string doc = "") {
  SchemaBuilder b(Schema::Type::kMap);
  b.Doc(std::move(doc));
  const_cast<Schema&>(*b.Build()).items = std::move(value);
  return b;
}

}  // namespace batchd::api
