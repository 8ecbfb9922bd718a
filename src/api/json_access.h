// The one set of accessors for objects held as JSON (`api::Json`).
//
// Reads never copy: `obj.value("spec", Json::object())` returns the member
// *by value*, and bound to a `const Json&` it silently deep-copies the whole
// subtree. These return a reference (or a `string_view`) into `obj`, or a
// shared empty value when the member is absent or of another type, so a
// missing or mistyped field reads as empty, never throws.
//
// Writes (`MutableObject`, `MutableArray`) create the member when it is
// absent, null or of another type, as controllers building a status need.
//
// Thread-safety: free functions over JSON the caller owns or holds shared and
// immutable; the empty values returned for absent members are immutable.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "api/field_error.h"

namespace batchd::api {

// Shared immutable null, {} and [] for readers that need a reference to
// "nothing" (never destroyed, so safe from any thread at any time). The one
// place such fallbacks live: no file keeps a static empty Json of its own.
inline const Json& NullJson() {
  static const Json* const kNull = new Json();
  return *kNull;
}
inline const Json& EmptyObject() {
  static const Json* const kEmpty = new Json(Json::object());
  return *kEmpty;
}
inline const Json& EmptyArray() {
  static const Json* const kEmpty = new Json(Json::array());
  return *kEmpty;
}

// obj[key], or null when `obj` is not an object or lacks `key`.
inline const Json& Member(const Json& obj, std::string_view key) {
  if (!obj.is_object()) return NullJson();
  auto it = obj.find(key);
  return it == obj.end() ? NullJson() : *it;
}

// obj[key] when it is an object, else {}.
inline const Json& MemberObject(const Json& obj, std::string_view key) {
  const Json& v = Member(obj, key);
  return v.is_object() ? v : EmptyObject();
}

// obj[key] when it is an array, else [].
inline const Json& MemberArray(const Json& obj, std::string_view key) {
  const Json& v = Member(obj, key);
  return v.is_array() ? v : EmptyArray();
}

// The member at `path` (`MemberAt(pod, {"spec", "nodeName"})`), or null when
// any step is absent or not an object.
inline const Json& MemberAt(const Json& obj, std::initializer_list<std::string_view> path) {
  const Json* v = &obj;
  for (std::string_view key : path) v = &Member(*v, key);
  return *v;
}

// obj[key], or nullptr when `obj` is not an object, lacks `key` or holds null
// there ("is the field set?").
inline const Json* FindMember(const Json& obj, std::string_view key) {
  const Json& v = Member(obj, key);
  return v.is_null() ? nullptr : &v;
}
inline bool HasMember(const Json& obj, std::string_view key) {
  return FindMember(obj, key) != nullptr;
}

// The member at `path`, or nullptr when a step is absent or the value null.
inline const Json* FindMemberAt(const Json& obj, std::initializer_list<std::string_view> path) {
  const Json& v = MemberAt(obj, path);
  return v.is_null() ? nullptr : &v;
}
// The same in an object the caller may edit, for writers that change a
// member only where it exists (never creating the steps to it).
inline Json* FindMutableMemberAt(Json& obj, std::initializer_list<std::string_view> path) {
  return const_cast<Json*>(FindMemberAt(obj, path));  // `obj` is not const.
}

// `v` as a string_view into it when it is a string, else `def`.
inline std::string_view AsString(const Json& v, std::string_view def = "") {
  return v.is_string() ? std::string_view(v.get_ref<const std::string&>()) : def;
}
// `v` as an integer when it is a number with an integral value, else `def`.
inline int64_t AsInt(const Json& v, int64_t def = 0) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (d == static_cast<double>(static_cast<int64_t>(d))) return static_cast<int64_t>(d);
  }
  return def;
}
// `v` when it is an integer, else nullopt.
inline std::optional<int64_t> AsOptionalInt(const Json& v) {
  if (!v.is_number_integer()) return std::nullopt;
  return v.get<int64_t>();
}
// `v` when it is a boolean, else `def`.
inline bool AsBool(const Json& v, bool def = false) { return v.is_boolean() ? v.get<bool>() : def; }

// obj[key] as a string (a view into `obj`), an integer or a boolean; `def`
// when absent or of another type.
inline std::string_view StringMember(const Json& obj, std::string_view key,
                                     std::string_view def = "") {
  return AsString(Member(obj, key), def);
}
// StringMember as an owned string, for callers that keep or concatenate it.
inline std::string CopyStringMember(const Json& obj, std::string_view key,
                                    std::string_view def = "") {
  return std::string(StringMember(obj, key, def));
}
inline int64_t IntMember(const Json& obj, std::string_view key, int64_t def = 0) {
  return AsInt(Member(obj, key), def);
}
inline bool BoolMember(const Json& obj, std::string_view key, bool def = false) {
  return AsBool(Member(obj, key), def);
}

// The string-valued entries of the object `v` (labels, annotations,
// nodeSelector); other entries are skipped.
inline std::map<std::string, std::string> StringMap(const Json& v) {
  std::map<std::string, std::string> out;
  if (!v.is_object()) return out;
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (it->is_string()) out.emplace(it.key(), it->get<std::string>());
  }
  return out;
}

// obj[key], made `{}` when absent, null or not an object; `obj` itself is
// made an object when it is not one.
inline Json& MutableObject(Json& obj, std::string_view key) {
  if (!obj.is_object()) obj = Json::object();
  Json& v = obj[std::string(key)];
  if (!v.is_object()) v = Json::object();
  return v;
}

// obj[path...], creating each intermediate step as an object (replacing a
// non-object); the last member is returned as it is (null when new).
inline Json& MutableMemberAt(Json& obj, std::initializer_list<std::string_view> path) {
  Json* v = &obj;
  for (std::string_view key : path) {
    if (!v->is_object()) *v = Json::object();
    v = &(*v)[std::string(key)];
  }
  return *v;
}

// obj[key], made `[]` when absent, null or not an array; `obj` itself is made
// an object when it is not one.
inline Json& MutableArray(Json& obj, std::string_view key) {
  if (!obj.is_object()) obj = Json::object();
  Json& v = obj[std::string(key)];
  if (!v.is_array()) v = Json::array();
  return v;
}

}  // namespace batchd::api
