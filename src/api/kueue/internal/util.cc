#include "api/kueue/internal/util.h"

#include "api/json_access.h"
#include "api/validation/names.h"
#include "api/validation/object_meta.h"

namespace batchd::api::kueue::internal {

void SetIfAbsent(Json& obj, std::string_view key, const Json& value) {
  if (!HasMember(obj, key)) obj[std::string(key)] = value;
}

std::optional<Quantity> QuantityAt(const Json& obj, std::string_view key) {
  if (!HasMember(obj, key)) return std::nullopt;
  auto q = Quantity::FromJson(obj[std::string(key)]);
  if (!q.ok()) return std::nullopt;
  return *q;
}

namespace {

// A step of the path to the value being checked, linked to its parent on the
// stack: the path's text is built only for an error, not for every value
// visited (a Workload's pod templates have hundreds).
struct Step {
  enum class Kind { kRoot, kChild, kIndex, kKey };
  const Step* parent = nullptr;
  const Path* root = nullptr;  // kRoot
  Kind kind = Kind::kRoot;
  std::string_view name;  // kChild, kKey
  size_t index = 0;       // kIndex

  Path Build() const {
    if (kind == Kind::kRoot) return *root;
    Path p = parent->Build();
    switch (kind) {
      case Kind::kChild: return p.Child(name);
      case Kind::kIndex: return p.Index(index);
      default: return p.Key(name);
    }
  }
};

void CheckConstraints(const Schema& schema, const Json& value, const Step& at, ErrorList& errs) {
  switch (schema.type) {
    case Schema::Type::kObject:
      if (!value.is_object()) break;
      for (const std::string& r : schema.required) {
        if (!HasMember(value, r)) errs.push_back(Required(at.Build().Child(r)));
      }
      for (const auto& [name, prop] : schema.properties) {
        if (!prop) continue;
        auto it = value.find(name);
        if (it == value.end()) continue;
        CheckConstraints(*prop, *it, Step{&at, nullptr, Step::Kind::kChild, name, 0}, errs);
      }
      break;
    case Schema::Type::kArray:
      if (!value.is_array() || !schema.items) break;
      for (size_t i = 0; i < value.size(); ++i) {
        CheckConstraints(*schema.items, value[i], Step{&at, nullptr, Step::Kind::kIndex, {}, i},
                         errs);
      }
      break;
    case Schema::Type::kMap:
      if (!value.is_object() || !schema.items) break;
      for (auto it = value.begin(); it != value.end(); ++it) {
        CheckConstraints(*schema.items, *it, Step{&at, nullptr, Step::Kind::kKey, it.key(), 0},
                         errs);
      }
      break;
    case Schema::Type::kString:
      if (!schema.enum_values.empty() && value.is_string()) {
        const std::string& v = value.get_ref<const std::string&>();
        bool ok = false;
        for (const auto& e : schema.enum_values) ok = ok || e == v;
        if (!ok) errs.push_back(NotSupported(at.Build(), value, schema.enum_values));
      }
      break;
    default:
      break;
  }
}

}  // namespace

ErrorList ValidateSchemaConstraints(const Schema& schema, const Json& value, const Path& path) {
  ErrorList errs;
  CheckConstraints(schema, value, Step{nullptr, &path, Step::Kind::kRoot, {}, 0}, errs);
  return errs;
}

void ValidateDNSSubdomain(const std::string& value, const Path& path, ErrorList& errs) {
  for (const auto& m : validation::IsDNS1123Subdomain(value)) {
    errs.push_back(Invalid(path, value, m));
  }
}

void ValidateQualifiedName(const std::string& value, const Path& path, ErrorList& errs) {
  for (const auto& m : validation::IsQualifiedName(value)) errs.push_back(Invalid(path, value, m));
}

void ValidateTolerations(const Json& tolerations, const Path& path, ErrorList& errs) {
  if (!tolerations.is_array()) return;
  const std::vector<std::string> effects = {"NoSchedule", "PreferNoSchedule", "NoExecute"};
  for (size_t i = 0; i < tolerations.size(); ++i) {
    const Json& t = tolerations[i];
    Path p = path.Index(i);
    std::string key = std::string(StringMember(t, "key")), op = std::string(StringMember(t, "operator")), effect = std::string(StringMember(t, "effect"));
    if (!key.empty()) ValidateQualifiedName(key, p.Child("key"), errs);
    if (key.empty() && op != "Exists") {
      errs.push_back(Invalid(p.Child("operator"), op, "operator must be Exists when 'key' is "
                                                      "empty, which means 'match all values "
                                                      "and all keys'"));
    }
    if (HasMember(t, "tolerationSeconds") && effect != "NoExecute") {
      errs.push_back(Invalid(p.Child("effect"), effect, "effect must be 'NoExecute' when "
                                                        "'tolerationSeconds' is set"));
    }
    if (!op.empty() && op != "Equal" && op != "Exists") {
      errs.push_back(NotSupported(p.Child("operator"), op, {"Equal", "Exists"}));
    }
    if (op == "Exists" && !StringMember(t, "value").empty()) {
      errs.push_back(Invalid(p.Child("operator"), op, "a value must be empty when 'operator' "
                                                      "is 'Exists'"));
    }
    if (!effect.empty() && effect != "NoSchedule" && effect != "PreferNoSchedule" &&
        effect != "NoExecute") {
      errs.push_back(NotSupported(p.Child("effect"), effect, effects));
    }
  }
}

void ValidateMaxItems(const Json& list, size_t max, const Path& path, ErrorList& errs) {
  if (list.is_array() && list.size() > max) errs.push_back(TooMany(path, list.size(), max));
  if (list.is_object() && list.size() > max) errs.push_back(TooMany(path, list.size(), max));
}

void ValidateNonNegative(const Json& obj, std::string_view key, const Path& path,
                         ErrorList& errs) {
  auto q = QuantityAt(obj, key);
  if (q && q->Sign() < 0) {
    errs.push_back(Invalid(path.Child(key), q->String(), "must be greater than or equal to 0"));
  }
}

ErrorList ValidateMeta(const Json& obj, bool namespaced) {
  return validation::ValidateObjectMeta(MemberObject(obj, "metadata"), namespaced,
                                        validation::NameIsDNSSubdomain, Path("metadata"));
}

ErrorList ValidateMetaUpdate(const Json& obj, const Json& old, bool namespaced) {
  ErrorList errs = ValidateMeta(obj, namespaced);
  AppendErrors(errs, validation::ValidateObjectMetaUpdate(MemberObject(obj, "metadata"), MemberObject(old, "metadata"),
                                                    Path("metadata")));
  return errs;
}


}  // namespace batchd::api::kueue::internal
