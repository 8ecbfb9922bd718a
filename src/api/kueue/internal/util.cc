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

ErrorList ValidateSchemaConstraints(const Schema& schema, const Json& value, const Path& path) {
  ErrorList errs;
  switch (schema.type) {
    case Schema::Type::kObject:
      if (!value.is_object()) break;
      for (const std::string& r : schema.required) {
        if (!HasMember(value, r)) errs.push_back(Required(path.Child(r)));
      }
      for (const auto& [name, prop] : schema.properties) {
        auto it = value.find(name);
        if (prop && it != value.end()) {
          AppendErrors(errs, ValidateSchemaConstraints(*prop, *it, path.Child(name)));
        }
      }
      break;
    case Schema::Type::kArray:
      if (!value.is_array() || !schema.items) break;
      for (size_t i = 0; i < value.size(); ++i) {
        AppendErrors(errs, ValidateSchemaConstraints(*schema.items, value[i], path.Index(i)));
      }
      break;
    case Schema::Type::kMap:
      if (!value.is_object() || !schema.items) break;
      for (const auto& [k, v] : value.items()) {
        AppendErrors(errs, ValidateSchemaConstraints(*schema.items, v, path.Key(k)));
      }
      break;
    case Schema::Type::kString:
      if (!schema.enum_values.empty() && value.is_string()) {
        bool ok = false;
        for (const auto& e : schema.enum_values) ok = ok || e == value.get<std::string>();
        if (!ok) errs.push_back(NotSupported(path, value, schema.enum_values));
      }
      break;
    default:
      break;
  }
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
