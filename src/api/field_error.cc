#include "api/field_error.h"

namespace batchd::api {
namespace {

// Kubernetes prints bad values with Go's %#v for strings ("\"x\"") and %v
// otherwise; JSON dump is the closest faithful rendering.
std::string ShowValue(const Json& v) {
  if (v.is_null()) return "null";
  return v.dump();
}

}  // namespace

std::string FieldError::Reason() const {
  switch (type) {
    case Type::kRequired: return "FieldValueRequired";
    case Type::kInvalid: return "FieldValueInvalid";
    case Type::kNotSupported: return "FieldValueNotSupported";
    case Type::kDuplicate: return "FieldValueDuplicate";
    case Type::kForbidden: return "FieldValueForbidden";
    case Type::kTooLong: return "FieldValueTooLong";
    case Type::kTooMany: return "FieldValueTooMany";
    case Type::kNotFound: return "FieldValueNotFound";
  }
  return "FieldValueInvalid";
}

std::string FieldError::CauseMessage() const {
  std::string m;
  switch (type) {
    case Type::kRequired: m = "Required value"; break;
    case Type::kInvalid: m = "Invalid value: " + ShowValue(bad_value); break;
    case Type::kNotSupported: {
      m = "Unsupported value: " + ShowValue(bad_value);
      if (!supported.empty()) {
        m += ": supported values: ";
        for (size_t i = 0; i < supported.size(); ++i) {
          if (i) m += ", ";
          m += "\"" + supported[i] + "\"";
        }
      }
      break;
    }
    case Type::kDuplicate: m = "Duplicate value: " + ShowValue(bad_value); break;
    case Type::kForbidden: m = "Forbidden"; break;
    case Type::kTooLong: m = "Too long"; break;
    case Type::kTooMany:
      m = bad_value.is_null() ? "Too many" : "Too many: " + ShowValue(bad_value);
      break;
    case Type::kNotFound: m = "Not found: " + ShowValue(bad_value); break;
  }
  if (!detail.empty()) m += ": " + detail;
  return m;
}

std::string FieldError::Message() const {
  return field.empty() ? CauseMessage() : field + ": " + CauseMessage();
}

FieldError Required(const Path& p, std::string detail) {
  return {FieldError::Type::kRequired, p.String(), nullptr, std::move(detail), {}};
}
FieldError Invalid(const Path& p, Json value, std::string detail) {
  return {FieldError::Type::kInvalid, p.String(), std::move(value), std::move(detail), {}};
}
FieldError NotSupported(const Path& p, Json value, std::vector<std::string> supported) {
  return {FieldError::Type::kNotSupported, p.String(), std::move(value), "", std::move(supported)};
}
FieldError Duplicate(const Path& p, Json value) {
  return {FieldError::Type::kDuplicate, p.String(), std::move(value), "", {}};
}
FieldError Forbidden(const Path& p, std::string detail) {
  return {FieldError::Type::kForbidden, p.String(), nullptr, std::move(detail), {}};
}
FieldError TooLong(const Path& p, Json value, size_t max) {
  return {FieldError::Type::kTooLong, p.String(), std::move(value),
          "may not be more than " + std::to_string(max) + " bytes", {}};
}
FieldError TooMany(const Path& p, size_t actual, size_t max) {
  return {FieldError::Type::kTooMany, p.String(), static_cast<int64_t>(actual),
          "must have at most " + std::to_string(max) + " items", {}};
}

std::string JoinMessages(const ErrorList& errs) {
  if (errs.size() == 1) return errs[0].Message();
  std::string s = "[";
  for (size_t i = 0; i < errs.size(); ++i) {
    if (i) s += ", ";
    s += errs[i].Message();
  }
  return s + "]";
}

}  // namespace batchd::api
