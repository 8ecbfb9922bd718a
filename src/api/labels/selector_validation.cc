// ValidateLabelSelector (declared in selector.h): Kubernetes'
// metav1validation.ValidateLabelSelector paths and messages.
#include "api/labels/selector.h"
#include "api/json_access.h"
#include "api/validation/names.h"
#include "api/validation/object_meta.h"

namespace batchd::api::labels {
namespace {

void ValidateExpression(const Json& expr, const Path& p, ErrorList& errs) {
  if (!expr.is_object()) {
    errs.push_back(Invalid(p, expr, "must be an object"));
    return;
  }
  const Json* op_json = expr.contains("operator") ? &expr["operator"] : nullptr;
  std::string op = op_json && op_json->is_string() ? op_json->get<std::string>() : "";
  const Json& values =
      expr.contains("values") && !expr["values"].is_null() ? expr["values"] : EmptyArray();
  if (!values.is_array()) {
    errs.push_back(Invalid(p.Child("values"), values, "must be a list of strings"));
    return;
  }
  if (op == "In" || op == "NotIn") {
    if (values.empty()) {
      errs.push_back(
          Required(p.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'"));
    }
  } else if (op == "Exists" || op == "DoesNotExist") {
    if (!values.empty()) {
      errs.push_back(Forbidden(p.Child("values"),
                               "may not be specified when `operator` is 'Exists' or "
                               "'DoesNotExist'"));
    }
  } else {
    errs.push_back(Invalid(p.Child("operator"), op_json ? *op_json : Json(""),
                           "not a valid selector operator"));
  }
  const Json* key_json = expr.contains("key") ? &expr["key"] : nullptr;
  if (key_json && !key_json->is_string() && !key_json->is_null()) {
    errs.push_back(Invalid(p.Child("key"), *key_json, "must be a string"));
  } else {
    std::string key = key_json && key_json->is_string() ? key_json->get<std::string>() : "";
    for (const std::string& m : validation::IsQualifiedName(key)) {
      errs.push_back(Invalid(p.Child("key"), key, m));
    }
  }
  for (size_t j = 0; j < values.size(); ++j) {
    if (!values[j].is_string()) {
      errs.push_back(Invalid(p.Child("values").Index(j), values[j], "must be a string"));
      continue;
    }
    const std::string& v = values[j].get_ref<const std::string&>();
    for (const std::string& m : validation::IsValidLabelValue(v)) {
      errs.push_back(Invalid(p.Child("values").Index(j), v, m));
    }
  }
}

}  // namespace

ErrorList ValidateLabelSelector(const Json& selector, const Path& path) {
  ErrorList errs;
  if (selector.is_null()) return errs;
  if (!selector.is_object()) {
    errs.push_back(Invalid(path, selector, "must be an object"));
    return errs;
  }
  if (auto it = selector.find("matchLabels"); it != selector.end()) {
    ErrorList more = validation::ValidateLabels(*it, path.Child("matchLabels"));
    errs.insert(errs.end(), more.begin(), more.end());
  }
  auto it = selector.find("matchExpressions");
  if (it == selector.end() || it->is_null()) return errs;
  if (!it->is_array()) {
    errs.push_back(Invalid(path.Child("matchExpressions"), *it, "must be a list"));
    return errs;
  }
  for (size_t i = 0; i < it->size(); ++i) {
    ValidateExpression((*it)[i], path.Child("matchExpressions").Index(i), errs);
  }
  return errs;
}

}  // namespace batchd::api::labels
