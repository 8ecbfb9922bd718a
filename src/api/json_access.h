// Read-only access to a JSON member without copying it.
//
// `obj.value("spec", Json::object())` returns the member *by value*: bound to
// a `const Json&` it silently deep-copies the whole subtree. These return a
// reference into `obj`, or to a shared empty value when the member is absent
// or of another type.
#pragma once

#include <string_view>

#include "api/field_error.h"

namespace batchd::api {

// obj[key], or null when `obj` is not an object or lacks `key`.
inline const Json& Member(const Json& obj, std::string_view key) {
  static const Json* const kNull = new Json();
  if (!obj.is_object()) return *kNull;
  auto it = obj.find(key);
  return it == obj.end() ? *kNull : *it;
}

// obj[key] when it is an object, else {}.
inline const Json& MemberObject(const Json& obj, std::string_view key) {
  static const Json* const kEmpty = new Json(Json::object());
  const Json& v = Member(obj, key);
  return v.is_object() ? v : *kEmpty;
}

// obj[key] when it is an array, else [].
inline const Json& MemberArray(const Json& obj, std::string_view key) {
  static const Json* const kEmpty = new Json(Json::array());
  const Json& v = Member(obj, key);
  return v.is_array() ? v : *kEmpty;
}

}  // namespace batchd::api
