// Strategic merge patch with Kubernetes' (apimachinery `strategicpatch`)
// semantics; list behaviour comes from the schema's patch strategy and merge
// key. Our own implementation of the documented behaviour.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/patch/patch.h"
#include "common/status_macros.h"

namespace batchd::api {
namespace {

constexpr char kPatchKey[] = "$patch";
constexpr char kRetainKeys[] = "$retainKeys";
constexpr char kDeletePrefix[] = "$deleteFromPrimitiveList/";
constexpr char kOrderPrefix[] = "$setElementOrder/";
constexpr size_t kDeletePrefixLen = sizeof(kDeletePrefix) - 1;
constexpr size_t kOrderPrefixLen = sizeof(kOrderPrefix) - 1;

struct ListMeta {
  bool merge = false;
  std::string merge_key;
  const Schema* items = nullptr;
};

// The schema of `key` inside an object described by `s` (or null).
const Schema* FieldSchema(const Schema* s, std::string_view key) {
  if (s == nullptr) return nullptr;
  if (s->type == Schema::Type::kObject) return s->Property(key);
  if (s->type == Schema::Type::kMap) return s->items.get();
  return nullptr;
}

ListMeta ListInfo(const Schema* field) {
  ListMeta m;
  if (field == nullptr || field->type != Schema::Type::kArray) return m;
  m.merge = absl::StrContains(field->patch_strategy, "merge");
  m.merge_key = field->patch_merge_key;
  m.items = field->items.get();
  return m;
}

std::string Fingerprint(const Json& v) {
  return v.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// The identity of a list element: its merge key's value, or itself.
std::string ElementId(const Json& e, const std::string& merge_key) {
  if (!merge_key.empty() && e.is_object()) {
    auto it = e.find(merge_key);
    if (it != e.end()) return Fingerprint(*it);
  }
  return Fingerprint(e);
}

bool IsDirectiveElement(const Json& e) { return e.is_object() && e.contains(kPatchKey); }

absl::StatusOr<std::string> DirectiveValue(const Json& obj) {
  const Json& v = obj.at(kPatchKey);
  if (!v.is_string()) return absl::InvalidArgumentError("$patch must be a string");
  std::string s = v.get<std::string>();
  if (s != "replace" && s != "delete" && s != "merge") {
    return absl::InvalidArgumentError(absl::StrCat("unknown patch type \"", s, "\" in $patch"));
  }
  return s;
}

// Directives of one map-level patch, split out of the ordinary fields.
struct MapDirectives {
  std::vector<std::pair<std::string, const Json*>> delete_from;  // field -> values
  std::vector<std::pair<std::string, const Json*>> order;        // field -> order list
};

class Merger {
 public:
  absl::StatusOr<Json> MergeMap(Json original, const Json& patch, const Schema* s, int depth);

 private:
  absl::StatusOr<Json> MergeValue(Json original, const Json& patch, const Schema* field,
                                  int depth);
  absl::StatusOr<Json> MergeList(Json original, const Json& patch, const ListMeta& m, int depth);
  absl::StatusOr<Json> MergeMapList(Json original, const Json& patch, const ListMeta& m,
                                    int depth);
  absl::Status ApplyRetainKeys(Json& original, const Json& keys);
};

absl::Status CheckDepth(int depth) {
  if (depth > kMaxPatchDepth) {
    return absl::InvalidArgumentError(
        absl::StrCat("strategic merge patch nests deeper than ", kMaxPatchDepth, " levels"));
  }
  return absl::OkStatus();
}

absl::Status Merger::ApplyRetainKeys(Json& original, const Json& keys) {
  if (!keys.is_array()) return absl::InvalidArgumentError("$retainKeys must be a list of strings");
  absl::flat_hash_set<std::string> keep;
  for (const Json& k : keys) {
    if (!k.is_string()) return absl::InvalidArgumentError("$retainKeys must be a list of strings");
    keep.insert(k.get<std::string>());
  }
  for (auto it = original.begin(); it != original.end();) {
    it = keep.contains(it.key()) ? std::next(it) : original.erase(it);
  }
  return absl::OkStatus();
}

// Removes from `list` every element equal to one of `values`.
absl::Status DeleteFromPrimitiveList(Json& list, const Json& values) {
  if (!values.is_array()) {
    return absl::InvalidArgumentError("$deleteFromPrimitiveList must be a list");
  }
  if (!list.is_array()) return absl::OkStatus();
  absl::flat_hash_set<std::string> drop;
  for (const Json& v : values) drop.insert(Fingerprint(v));
  Json kept = Json::array();
  for (Json& e : list) {
    if (!drop.contains(Fingerprint(e))) kept.push_back(std::move(e));
  }
  list = std::move(kept);
  return absl::OkStatus();
}

// Reorders `merged` so that elements named in `order` come in that order;
// the others ("server-only") keep their place relative to `before`.
absl::StatusOr<Json> ApplyElementOrder(Json merged, const Json& order, const Json& before,
                                       const std::string& key) {
  if (!order.is_array()) return absl::InvalidArgumentError("$setElementOrder must be a list");
  absl::flat_hash_map<std::string, size_t> want, was;
  for (size_t i = 0; i < order.size(); ++i) want.emplace(ElementId(order[i], key), i);
  if (before.is_array()) {
    for (size_t i = 0; i < before.size(); ++i) was.emplace(ElementId(before[i], key), i);
  }
  std::vector<std::pair<size_t, Json>> ordered;  // (position in `order`, element)
  std::vector<Json> server_only;
  for (Json& e : merged) {
    auto it = want.find(ElementId(e, key));
    if (it != want.end()) {
      ordered.emplace_back(it->second, std::move(e));
    } else {
      server_only.push_back(std::move(e));
    }
  }
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  auto was_at = [&](const Json& e) {
    auto it = was.find(ElementId(e, key));
    return it == was.end() ? SIZE_MAX : it->second;
  };
  std::vector<Json> out;
  size_t next = 0;  // Next element of `ordered` not yet emitted.
  for (Json& s : server_only) {
    size_t pos = was_at(s);
    // Emit ordered elements until one that followed `s` in the original list.
    while (next < ordered.size() &&
           !(was_at(ordered[next].second) != SIZE_MAX && was_at(ordered[next].second) > pos)) {
      out.push_back(std::move(ordered[next++].second));
    }
    out.push_back(std::move(s));
  }
  for (; next < ordered.size(); ++next) out.push_back(std::move(ordered[next].second));
  Json result = Json::array();
  for (Json& e : out) result.push_back(std::move(e));
  return result;
}

absl::StatusOr<Json> Merger::MergeValue(Json original, const Json& patch, const Schema* field,
                                        int depth) {
  if (patch.is_object()) {
    if (!original.is_object()) original = Json::object();
    return MergeMap(std::move(original), patch, field, depth + 1);
  }
  if (patch.is_array()) {
    ListMeta m = ListInfo(field);
    if (!m.merge) return patch;  // Replaced, as JSON merge patch does.
    if (!original.is_array()) original = Json::array();
    return MergeList(std::move(original), patch, m, depth + 1);
  }
  return patch;
}

absl::StatusOr<Json> Merger::MergeList(Json original, const Json& patch, const ListMeta& m,
                                       int depth) {
  BATCHD_RETURN_IF_ERROR(CheckDepth(depth));
  bool maps = false;
  for (const Json& e : patch) {
    if (IsDirectiveElement(e)) {
      BATCHD_ASSIGN_OR_RETURN(std::string d, DirectiveValue(e));
      if (d == "replace") {
        Json replaced = Json::array();
        for (const Json& x : patch) {
          if (IsDirectiveElement(x)) continue;
          BATCHD_ASSIGN_OR_RETURN(Json v, MergeValue(nullptr, x, m.items, depth));
          replaced.push_back(std::move(v));
        }
        return replaced;
      }
    }
    maps = maps || e.is_object();
  }
  if (maps) return MergeMapList(std::move(original), patch, m, depth);
  // A list of primitives: the union, original order first.
  absl::flat_hash_set<std::string> seen;
  for (const Json& e : original) seen.insert(Fingerprint(e));
  for (const Json& e : patch) {
    if (seen.insert(Fingerprint(e)).second) original.push_back(e);
  }
  return original;
}

absl::StatusOr<Json> Merger::MergeMapList(Json original, const Json& patch, const ListMeta& m,
                                          int depth) {
  if (m.merge_key.empty()) {
    return absl::InvalidArgumentError("a merge list of objects needs a patch merge key");
  }
  // 1. Deletions ({"$patch": "delete", key: v}).
  absl::flat_hash_set<std::string> deleted;
  for (const Json& e : patch) {
    if (!IsDirectiveElement(e) || e.at(kPatchKey) != "delete") continue;
    if (!e.contains(m.merge_key)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "a $patch: delete list element needs the merge key \"", m.merge_key, "\""));
    }
    deleted.insert(Fingerprint(e.at(m.merge_key)));
  }
  Json result = Json::array();
  absl::flat_hash_map<std::string, size_t> index;
  for (Json& e : original) {
    std::string id = ElementId(e, m.merge_key);
    if (deleted.contains(id)) continue;
    if (e.is_object() && e.contains(m.merge_key)) index.emplace(id, result.size());
    result.push_back(std::move(e));
  }
  // 2. Merges and additions, in patch order.
  for (const Json& e : patch) {
    if (IsDirectiveElement(e) && e.at(kPatchKey) != "merge") continue;
    if (!e.is_object()) {
      return absl::InvalidArgumentError("a list mixes objects and other values");
    }
    auto key = e.find(m.merge_key);
    if (key == e.end()) {
      if (IsDirectiveElement(e) && e.size() == 1) continue;  // A bare {"$patch": "merge"}.
      return absl::InvalidArgumentError(
          absl::StrCat("a list element does not contain the merge key \"", m.merge_key, "\""));
    }
    std::string id = Fingerprint(*key);
    auto it = index.find(id);
    if (it != index.end()) {
      BATCHD_ASSIGN_OR_RETURN(result[it->second],
                              MergeMap(std::move(result[it->second]), e, m.items, depth + 1));
    } else {
      BATCHD_ASSIGN_OR_RETURN(Json added, MergeMap(Json::object(), e, m.items, depth + 1));
      index.emplace(id, result.size());
      result.push_back(std::move(added));
    }
  }
  return result;
}

// The `$deleteFromPrimitiveList/` and `$setElementOrder/` keys of `patch`.
MapDirectives CollectDirectives(const Json& patch) {
  MapDirectives d;
  for (const auto& [k, v] : patch.items()) {
    if (absl::StartsWith(k, kDeletePrefix)) {
      d.delete_from.emplace_back(k.substr(kDeletePrefixLen), &v);
    } else if (absl::StartsWith(k, kOrderPrefix)) {
      d.order.emplace_back(k.substr(kOrderPrefixLen), &v);
    }
  }
  return d;
}

bool IsDirectiveKey(const std::string& k) {
  return k == kPatchKey || k == kRetainKeys || absl::StartsWith(k, kDeletePrefix) ||
         absl::StartsWith(k, kOrderPrefix);
}

absl::StatusOr<Json> Merger::MergeMap(Json original, const Json& patch, const Schema* s,
                                      int depth) {
  BATCHD_RETURN_IF_ERROR(CheckDepth(depth));
  if (!original.is_object()) original = Json::object();
  if (patch.contains(kPatchKey)) {
    BATCHD_ASSIGN_OR_RETURN(std::string d, DirectiveValue(patch));
    if (d == "delete") return Json::object();
    if (d == "replace") original = Json::object();
  }
  if (auto it = patch.find(kRetainKeys); it != patch.end() && !it->is_null()) {
    BATCHD_RETURN_IF_ERROR(ApplyRetainKeys(original, *it));
  }
  MapDirectives d = CollectDirectives(patch);
  for (const auto& [field, values] : d.delete_from) {
    if (auto it = original.find(field); it != original.end()) {
      BATCHD_RETURN_IF_ERROR(DeleteFromPrimitiveList(*it, *values));
    }
  }
  std::vector<std::pair<std::string, Json>> before;  // Lists about to be reordered.
  for (const auto& [field, order] : d.order) {
    auto it = original.find(field);
    before.emplace_back(field, it == original.end() ? Json(nullptr) : *it);
  }
  for (const auto& [k, v] : patch.items()) {
    if (IsDirectiveKey(k)) continue;
    if (v.is_null()) {
      original.erase(k);
      continue;
    }
    auto it = original.find(k);
    Json current = it == original.end() ? Json(nullptr) : std::move(*it);
    BATCHD_ASSIGN_OR_RETURN(original[k], MergeValue(std::move(current), v, FieldSchema(s, k), depth));
  }
  for (size_t i = 0; i < d.order.size(); ++i) {
    const auto& [field, order] = d.order[i];
    ListMeta m = ListInfo(FieldSchema(s, field));
    auto it = original.find(field);
    if (!m.merge || it == original.end() || !it->is_array()) continue;
    BATCHD_ASSIGN_OR_RETURN(*it, ApplyElementOrder(std::move(*it), *order, before[i].second,
                                                   m.merge_key));
  }
  return original;
}

}  // namespace

absl::StatusOr<Json> ApplyStrategicMergePatch(const Json& original, const Json& patch,
                                              const Schema* schema) {
  if (!patch.is_object()) {
    return absl::InvalidArgumentError("a strategic merge patch must be a JSON object");
  }
  Merger merger;
  return merger.MergeMap(original, patch, schema, 0);
}

}  // namespace batchd::api
