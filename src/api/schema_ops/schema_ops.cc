#include "api/schema_ops/schema_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "api/resource/quantity.h"

namespace batchd::api::schema_ops {
namespace {

using Type = Schema::Type;

// "io.k8s.api.batch.v1.JobSpec" -> "JobSpec".
std::string ShortName(const std::string& ref) {
  size_t dot = ref.rfind('.');
  return dot == std::string::npos ? ref : ref.substr(dot + 1);
}

// "io.k8s.api.batch.v1.JobSpec" -> "v1.JobSpec", as Go prints a type.
std::string GoRefName(const std::string& ref) {
  size_t dot = ref.rfind('.');
  if (dot == std::string::npos || dot == 0) return ref;
  size_t prev = ref.rfind('.', dot - 1);
  return prev == std::string::npos ? ref : ref.substr(prev + 1);
}

std::string GoTypeName(const Schema& s) {
  switch (s.type) {
    case Type::kObject: return s.ref.empty() ? "struct" : GoRefName(s.ref);
    case Type::kArray: return "[]" + (s.items ? GoTypeName(*s.items) : "interface {}");
    case Type::kMap: return "map[string]" + (s.items ? GoTypeName(*s.items) : "interface {}");
    case Type::kString: return "string";
    case Type::kInteger: return s.format == "int32" ? "int32" : "int64";
    case Type::kNumber: return "float64";
    case Type::kBoolean: return "bool";
    case Type::kIntOrString: return "intstr.IntOrString";
    case Type::kQuantity: return "resource.Quantity";
    case Type::kTime: return s.ref.empty() ? "v1.Time" : GoRefName(s.ref);
    case Type::kAny: return "interface {}";
  }
  return "interface {}";
}

std::string JsonKindName(const Json& v) {
  if (v.is_string()) return "string";
  if (v.is_boolean()) return "bool";
  if (v.is_array()) return "array";
  if (v.is_object()) return "object";
  if (v.is_number()) return "number";
  return "null";
}

// The zero value Go would decode a JSON null element into.
Json ZeroValue(const Schema& s) {
  switch (s.type) {
    case Type::kObject: return Json::object();
    case Type::kString: return "";
    case Type::kInteger: return 0;
    case Type::kNumber: return 0.0;
    case Type::kBoolean: return false;
    default: return nullptr;
  }
}

// Where the walk is, as a chain of segments on the stack: the paths are
// only spelled out for an unknown field or an error (the walk runs on every
// write, and almost every write has neither).
struct PathSeg {
  enum Kind { kRoot, kField, kIndex, kKey };
  const PathSeg* parent = nullptr;
  Kind kind = kRoot;
  absl::string_view name;  // kField, kKey.
  size_t index = 0;       // kIndex.
};

// With indices and map keys: "spec.containers[0].env[1].name".
std::string FullPath(const PathSeg* p) {
  switch (p->kind) {
    case PathSeg::kRoot:
      return "";
    case PathSeg::kField: {
      std::string parent = FullPath(p->parent);
      return parent.empty() ? std::string(p->name) : absl::StrCat(parent, ".", p->name);
    }
    case PathSeg::kIndex:
      return absl::StrCat(FullPath(p->parent), "[", p->index, "]");
    case PathSeg::kKey:
      return absl::StrCat(FullPath(p->parent), "[", p->name, "]");
  }
  return "";
}

// Field names only, as Go reports a decode error: "spec.containers.env.name".
std::string GoPath(const PathSeg* p) {
  if (p->kind == PathSeg::kRoot) return "";
  std::string parent = GoPath(p->parent);
  if (p->kind != PathSeg::kField) return parent;
  return parent.empty() ? std::string(p->name) : absl::StrCat(parent, ".", p->name);
}

// Whether CheckTime would leave `s` as it is: "2006-01-02T15:04:05Z"
// (MicroTime: "2006-01-02T15:04:05.000000Z") with every field in range, in
// the years 1000-9999 (four digits either way).
bool IsCanonicalTime(const std::string& s, bool micro) {
  const size_t size = micro ? 27 : 20;
  if (s.size() != size || s[size - 1] != 'Z') return false;
  auto number = [&s](size_t at, size_t n, int* out) {
    int v = 0;
    for (size_t i = at; i < at + n; ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
      v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
  };
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, micros = 0;
  if (!number(0, 4, &year) || s[4] != '-' || !number(5, 2, &month) || s[7] != '-' ||
      !number(8, 2, &day) || s[10] != 'T' || !number(11, 2, &hour) || s[13] != ':' ||
      !number(14, 2, &minute) || s[16] != ':' || !number(17, 2, &second)) {
    return false;
  }
  if (micro && (s[19] != '.' || !number(20, 6, &micros))) return false;
  if (year < 1000 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 ||
      second > 59) {
    return false;
  }
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return day <= kDays[month - 1] + (month == 2 && leap ? 1 : 0);
}

// The canonical forms of quantity strings this thread has normalised, so
// the walk (on every write) does not parse the same "1" or "4Gi" again.
// Bounded: emptied when full.
class QuantityCache {
 public:
  static QuantityCache& ForThread() {
    thread_local QuantityCache cache;
    return cache;
  }
  std::string* Find(const std::string& s) {
    auto it = canonical_.find(s);
    return it == canonical_.end() ? nullptr : &it->second;
  }
  std::string* Insert(const std::string& s, std::string canonical) {
    if (canonical_.size() >= kMaxEntries) canonical_.clear();
    return &canonical_.insert_or_assign(s, std::move(canonical)).first->second;
  }

 private:
  static constexpr size_t kMaxEntries = 4096;
  std::unordered_map<std::string, std::string> canonical_;
};

class Normalizer {
 public:
  Normalizer(std::vector<std::string>* unknown, std::string root_owner)
      : unknown_(unknown), root_owner_(std::move(root_owner)) {}

  // `path` locates `v` (for unknown-field reports and decode errors);
  // `owner` is the innermost enclosing struct with a name (null: the root's).
  absl::Status Walk(const Schema& s, Json& v, const PathSeg* path, const Schema* owner) {
    switch (s.type) {
      case Type::kAny: return absl::OkStatus();
      case Type::kObject: return WalkObject(s, v, path, owner);
      case Type::kArray: return WalkArray(s, v, path, owner);
      case Type::kMap: return WalkMap(s, v, path, owner);
      case Type::kString:
        return v.is_string() ? absl::OkStatus() : TypeError(s, v, path, owner, false);
      case Type::kBoolean:
        return v.is_boolean() ? absl::OkStatus() : TypeError(s, v, path, owner, false);
      case Type::kNumber:
        return v.is_number() ? absl::OkStatus() : TypeError(s, v, path, owner, false);
      case Type::kInteger: return CheckInteger(s, v, path, owner);
      case Type::kIntOrString: {
        if (v.is_string()) return absl::OkStatus();
        if (v.is_number()) return CheckInteger(s, v, path, owner);
        return TypeError(s, v, path, owner, false);
      }
      case Type::kQuantity: {
        if (!v.is_string() && !v.is_number()) return TypeError(s, v, path, owner, false);
        if (v.is_string()) {
          // A quantity seen before: its canonical form without parsing it again.
          const std::string& str = v.get_ref<const std::string&>();
          std::string* canonical = quantities_.Find(str);
          if (canonical == nullptr) {
            absl::StatusOr<std::string> q = CanonicalQuantity(v);
            if (!q.ok()) return q.status();
            canonical = quantities_.Insert(str, *std::move(q));
          }
          if (s.format != kQuantityAsSentFormat && *canonical != str) v = *canonical;
          return absl::OkStatus();
        }
        absl::StatusOr<std::string> q = CanonicalQuantity(v);
        if (!q.ok()) return q.status();
        if (s.format != kQuantityAsSentFormat) v = *std::move(q);
        return absl::OkStatus();
      }
      case Type::kTime: return CheckTime(s, v, path, owner);
    }
    return absl::OkStatus();
  }

  // Walk of an object schema's listed members only.
  absl::Status WalkMembers(const Schema& s, Json& v, const PathSeg* path,
                           const std::vector<std::string_view>& only) {
    return WalkObject(s, v, path, nullptr, &only);
  }

 private:
  absl::Status TypeError(const Schema& s, const Json& v, const PathSeg* path,
                         const Schema* owner_schema, bool with_literal) {
    std::string value = JsonKindName(v);
    if (with_literal) value += " " + v.dump();
    const std::string go_path = GoPath(path);
    const std::string owner = owner_schema == nullptr ? root_owner_ : ShortName(owner_schema->ref);
    if (go_path.empty() || owner.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("json: cannot unmarshal ", value,
                                                     " into Go value of type ", GoTypeName(s)));
    }
    return absl::InvalidArgumentError(absl::StrCat("json: cannot unmarshal ", value,
                                                   " into Go struct field ", owner, ".", go_path,
                                                   " of type ", GoTypeName(s)));
  }

  absl::Status CheckInteger(const Schema& s, Json& v, const PathSeg* path, const Schema* owner) {
    if (!v.is_number()) return TypeError(s, v, path, owner, false);
    const bool is32 = s.format == "int32" || s.type == Type::kIntOrString;
    const int64_t lo = is32 ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int64_t>::min();
    const int64_t hi = is32 ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int64_t>::max();
    if (v.is_number_unsigned()) {
      uint64_t u = v.get<uint64_t>();
      if (u > static_cast<uint64_t>(hi)) return TypeError(s, v, path, owner, true);
      v = static_cast<int64_t>(u);
      return absl::OkStatus();
    }
    if (v.is_number_integer()) {
      int64_t i = v.get<int64_t>();
      if (i < lo || i > hi) return TypeError(s, v, path, owner, true);
      return absl::OkStatus();
    }
    // A float: accepted only when integral and in range (YAML sometimes yields 2.0).
    double d = v.get<double>();
    if (!std::isfinite(d) || std::trunc(d) != d || d < static_cast<double>(lo) ||
        d >= static_cast<double>(hi) + 1.0) {
      return TypeError(s, v, path, owner, true);
    }
    v = static_cast<int64_t>(d);
    return absl::OkStatus();
  }

  absl::Status CheckTime(const Schema& s, Json& v, const PathSeg* path, const Schema* owner) {
    if (!v.is_string()) return TypeError(s, v, path, owner, false);
    // Almost every time on a write is one the server wrote (the walk runs
    // on every write): already canonical, it would be rewritten as is.
    if (IsCanonicalTime(v.get_ref<const std::string&>(), s.ref == kMicroTimeRef)) {
      return absl::OkStatus();
    }
    const std::string str = v.get<std::string>();
    absl::Time t;
    std::string err;
    if (!absl::ParseTime(absl::RFC3339_full, str, &t, &err)) {
      return absl::InvalidArgumentError(
          absl::StrCat("parsing time \"", str, "\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"",
                       str, "\" as \"2006\""));
    }
    if (s.ref == kMicroTimeRef) {
      v = absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", t, absl::UTCTimeZone());
    } else {
      v = absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromUnixSeconds(absl::ToUnixSeconds(t)),
                           absl::UTCTimeZone());
    }
    return absl::OkStatus();
  }

  // `only`: when non-null, the members walked (the others are left as they are).
  absl::Status WalkObject(const Schema& s, Json& v, const PathSeg* path, const Schema* owner,
                          const std::vector<std::string_view>* only = nullptr) {
    if (!v.is_object()) return TypeError(s, v, path, owner, false);
    const Schema* me = s.ref.empty() ? owner : &s;
    for (auto it = v.begin(); it != v.end();) {
      if (only != nullptr && std::find(only->begin(), only->end(), it.key()) == only->end()) {
        ++it;
        continue;
      }
      if (it->is_null()) {
        it = v.erase(it);
        continue;
      }
      const std::string& key = it.key();
      const Schema* prop = s.Property(key);
      if (prop == nullptr) {
        if (s.preserve_unknown) {
          ++it;
          continue;
        }
        if (unknown_ != nullptr) {
          PathSeg child{path, PathSeg::kField, key, 0};
          unknown_->push_back(FullPath(&child));
        }
        it = v.erase(it);
        continue;
      }
      if (prop->type == Type::kTime && it->is_string() && it->get_ref<const std::string&>().empty()) {
        it = v.erase(it);  // "" reads as an unset time (lenient; Go rejects it).
        continue;
      }
      PathSeg child{path, PathSeg::kField, key, 0};
      absl::Status st = Walk(*prop, *it, &child, me);
      if (!st.ok()) return st;
      ++it;
    }
    return absl::OkStatus();
  }

  absl::Status WalkArray(const Schema& s, Json& v, const PathSeg* path, const Schema* owner) {
    if (!v.is_array()) return TypeError(s, v, path, owner, false);
    if (!s.items) return absl::OkStatus();
    for (size_t i = 0; i < v.size(); ++i) {
      Json& e = v[i];
      if (e.is_null()) {
        e = ZeroValue(*s.items);
        if (e.is_null()) continue;
      }
      PathSeg child{path, PathSeg::kIndex, {}, i};
      absl::Status st = Walk(*s.items, e, &child, owner);
      if (!st.ok()) return st;
    }
    return absl::OkStatus();
  }

  absl::Status WalkMap(const Schema& s, Json& v, const PathSeg* path, const Schema* owner) {
    if (!v.is_object()) return TypeError(s, v, path, owner, false);
    if (!s.items) return absl::OkStatus();
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (it->is_null()) {
        *it = ZeroValue(*s.items);
        if (it->is_null()) continue;
      }
      PathSeg child{path, PathSeg::kKey, it.key(), 0};
      absl::Status st = Walk(*s.items, *it, &child, owner);
      if (!st.ok()) return st;
    }
    return absl::OkStatus();
  }

  std::vector<std::string>* unknown_;
  std::string root_owner_;
  QuantityCache& quantities_ = QuantityCache::ForThread();
};

}  // namespace

absl::StatusOr<std::string> CanonicalQuantity(const Json& v) {
  if (!v.is_string() && !v.is_number()) {
    return absl::InvalidArgumentError("quantities must be a string or a number");
  }
  absl::StatusOr<Quantity> q = Quantity::FromJson(v);
  if (!q.ok()) return q.status();
  return q->String();
}

absl::Status NormalizeMembers(const Schema& schema, Json& obj,
                              const std::vector<std::string_view>& members,
                              std::vector<std::string>* unknown_fields) {
  if (schema.type != Type::kObject) return Normalize(schema, obj, unknown_fields);
  Normalizer n(unknown_fields, schema.ref.empty() ? "" : ShortName(schema.ref));
  const PathSeg root;
  return n.WalkMembers(schema, obj, &root, members);
}

absl::Status Normalize(const Schema& schema, Json& obj, std::vector<std::string>* unknown_fields) {
  Normalizer n(unknown_fields, schema.ref.empty() ? "" : ShortName(schema.ref));
  if (schema.type == Type::kObject && !obj.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat("json: cannot unmarshal ", JsonKindName(obj),
                                                   " into Go value of type ",
                                                   GoTypeName(schema)));
  }
  const PathSeg root;
  return n.Walk(schema, obj, &root, nullptr);
}

}  // namespace batchd::api::schema_ops
