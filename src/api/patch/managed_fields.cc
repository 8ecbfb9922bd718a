// Field sets, comparison, apply merge and ownership (see managed_fields.h).
#include "api/patch/managed_fields.h"

#include <algorithm>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace batchd::api::fieldmanager {
namespace {

using Type = Schema::Type;

// --- schema navigation ---

bool Granular(const Schema* s) {
  return s == nullptr || s->type == Type::kObject || s->type == Type::kMap ||
         s->type == Type::kAny;
}

const Schema* FieldSchema(const Schema* s, const std::string& key) {
  if (s == nullptr) return nullptr;
  if (s->type == Type::kObject) return s->Property(key);
  if (s->type == Type::kMap) return s->items.get();
  return nullptr;
}

enum class ListKind { kAtomic, kAssociative, kSet };

ListKind KindOfList(const Schema* s, std::vector<std::string>* keys) {
  if (s == nullptr || s->type != Type::kArray || s->list_type == "atomic") return ListKind::kAtomic;
  if (!s->list_map_keys.empty() || !s->patch_merge_key.empty()) {
    if (keys) *keys = s->list_map_keys.empty() ? std::vector<std::string>{s->patch_merge_key}
                                               : s->list_map_keys;
    return ListKind::kAssociative;
  }
  if (s->list_type == "set") return ListKind::kSet;
  const bool scalar_items = s->items && !Granular(s->items.get()) && s->items->type != Type::kArray;
  if (absl::StrContains(s->patch_strategy, "merge") && scalar_items) return ListKind::kSet;
  return ListKind::kAtomic;
}

const Schema* ItemSchema(const Schema* list) { return list ? list->items.get() : nullptr; }

// The path element of item `i` of a granular list.
std::string ItemElement(ListKind kind, const std::vector<std::string>& keys, const Json& item,
                        size_t i) {
  if (kind == ListKind::kSet) return "v:" + item.dump();
  if (item.is_object()) {
    Json k = Json::object();
    for (const std::string& key : keys) {
      auto it = item.find(key);
      if (it != item.end() && !it->is_null()) k[key] = *it;
    }
    if (!k.empty()) return "k:" + k.dump();
  }
  return absl::StrCat("i:", i);
}

// --- flattening: every member path of a value, with the leaf's value ---

// nullptr marks a list item (a member whose value is compared field by field).
using Flat = std::map<FieldPath, const Json*>;

void Flatten(const Json& v, const Schema* s, FieldPath& path, Flat& out) {
  if (v.is_object() && Granular(s)) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      path.push_back("f:" + it.key());
      Flatten(*it, FieldSchema(s, it.key()), path, out);
      path.pop_back();
    }
    return;
  }
  std::vector<std::string> keys;
  const ListKind kind = v.is_array() ? KindOfList(s, &keys) : ListKind::kAtomic;
  if (v.is_array() && kind != ListKind::kAtomic) {
    const Schema* is = ItemSchema(s);
    for (size_t i = 0; i < v.size(); ++i) {
      path.push_back(ItemElement(kind, keys, v[i], i));
      out[path] = nullptr;
      if (v[i].is_object() && Granular(is)) {
        for (auto it = v[i].begin(); it != v[i].end(); ++it) {
          path.push_back("f:" + it.key());
          Flatten(*it, FieldSchema(is, it.key()), path, out);
          path.pop_back();
        }
      }
      path.pop_back();
    }
    return;
  }
  if (!path.empty()) out[path] = &v;
}

Flat FlattenAll(const Json& v, const Schema* s) {
  Flat out;
  FieldPath path;
  Flatten(v, s, path, out);
  return out;
}

bool HasPrefix(const FieldPath& p, const FieldPath& prefix) {
  return p.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), p.begin());
}

void StripIgnored(FieldSet& set, const std::vector<FieldPath>& ignored) {
  for (auto it = set.begin(); it != set.end();) {
    bool drop = std::any_of(ignored.begin(), ignored.end(),
                            [&](const FieldPath& ig) { return HasPrefix(*it, ig); });
    it = drop ? set.erase(it) : std::next(it);
  }
}

FieldSet Minus(const FieldSet& a, const FieldSet& b) {
  FieldSet out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::inserter(out, out.end()));
  return out;
}

FieldSet Intersect(const FieldSet& a, const FieldSet& b) {
  FieldSet out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::inserter(out, out.end()));
  return out;
}

// True when `set` has `p` or a path below it.
bool OwnsAtOrBelow(const FieldSet& set, const FieldPath& p) {
  auto it = set.lower_bound(p);
  return it != set.end() && HasPrefix(*it, p);
}

// True when `p` is a key field of an associative-list item ("k:{\"name\":..}"
// then "f:name"): the item's identity, which goes only with the item.
bool IsItemKey(const FieldPath& p) {
  if (p.size() < 2 || !absl::StartsWith(p[p.size() - 2], "k:") || !absl::StartsWith(p.back(), "f:")) {
    return false;
  }
  Json keys = Json::parse(p[p.size() - 2].substr(2), nullptr, /*allow_exceptions=*/false);
  return keys.is_object() && keys.contains(p.back().substr(2));
}

// --- FieldsV1 ---

bool ValidElement(const std::string& e) {
  return e.size() >= 2 && e[1] == ':' && (e[0] == 'f' || e[0] == 'k' || e[0] == 'v' || e[0] == 'i');
}

absl::Status ParseTrie(const Json& node, FieldPath& path, FieldSet& out, int depth) {
  if (!node.is_object()) return absl::InvalidArgumentError("FieldsV1 nodes must be objects");
  if (depth > 400) return absl::InvalidArgumentError("FieldsV1 nests too deep");
  if (node.empty() && !path.empty()) {
    out.insert(path);
    return absl::OkStatus();
  }
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (it.key() == ".") {
      if (!it->is_object() || !it->empty()) {
        return absl::InvalidArgumentError("FieldsV1 \".\" must map to an empty object");
      }
      if (!path.empty()) out.insert(path);
      continue;
    }
    if (!ValidElement(it.key())) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown FieldsV1 path element \"", it.key(), "\""));
    }
    path.push_back(it.key());
    absl::Status st = ParseTrie(*it, path, out, depth + 1);
    path.pop_back();
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

std::string Quote(const Json& v) { return v.dump(); }

// Finds the child of `parent` an element names; nullptr when absent.
Json* Child(Json& parent, const std::string& elem, size_t* index) {
  const std::string rest = elem.substr(2);
  switch (elem[0]) {
    case 'f': {
      if (!parent.is_object()) return nullptr;
      auto it = parent.find(rest);
      return it == parent.end() ? nullptr : &*it;
    }
    case 'k': {
      if (!parent.is_array()) return nullptr;
      Json keys = Json::parse(rest, nullptr, /*allow_exceptions=*/false);
      if (!keys.is_object()) return nullptr;
      for (size_t i = 0; i < parent.size(); ++i) {
        Json& item = parent[i];
        if (!item.is_object()) continue;
        bool match = true;
        for (auto k = keys.begin(); k != keys.end() && match; ++k) {
          auto f = item.find(k.key());
          match = f != item.end() && *f == *k;
        }
        if (match) {
          *index = i;
          return &item;
        }
      }
      return nullptr;
    }
    case 'v': {
      if (!parent.is_array()) return nullptr;
      Json value = Json::parse(rest, nullptr, /*allow_exceptions=*/false);
      for (size_t i = 0; i < parent.size(); ++i) {
        if (parent[i] == value) {
          *index = i;
          return &parent[i];
        }
      }
      return nullptr;
    }
    case 'i': {
      size_t i = 0;
      if (!parent.is_array() || !absl::SimpleAtoi(rest, &i) || i >= parent.size()) return nullptr;
      *index = i;
      return &parent[i];
    }
  }
  return nullptr;
}

void RemoveOne(Json& obj, const FieldPath& path) {
  Json* node = &obj;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    size_t unused = 0;
    node = Child(*node, path[i], &unused);
    if (node == nullptr) return;
  }
  const std::string& last = path.back();
  if (last[0] == 'f') {
    if (node->is_object()) node->erase(last.substr(2));
    return;
  }
  size_t index = 0;
  if (Child(*node, last, &index) != nullptr) node->erase(index);
}

// The key of an entry in the manager map: Kubernetes' manager identifier
// (manager, operation, subresource, and the apiVersion of an Update).
std::string EntryKey(const Entry& e) {
  return absl::StrCat(e.manager, "\x1f", e.operation, "\x1f", e.subresource, "\x1f",
                      e.operation == "Update" ? e.api_version : "");
}

std::string PrintManager(const Entry& e) {
  std::string s = Json(e.manager).dump();
  if (!e.subresource.empty()) s += " with subresource " + Json(e.subresource).dump();
  if (e.operation == "Update") s += " using " + e.api_version;
  return s;
}

void DropEmpty(std::vector<Entry>& entries) {
  entries.erase(std::remove_if(entries.begin(), entries.end(),
                               [](const Entry& e) { return e.fields.empty(); }),
                entries.end());
}

// Merges the oldest Update entries into "ancient-changes" until at most
// kMaxUpdateManagers remain.
void CapUpdateManagers(std::vector<Entry>& entries) {
  std::vector<size_t> updates;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].operation == "Update") updates.push_back(i);
  }
  if (updates.size() <= kMaxUpdateManagers) return;
  // Oldest first; RFC 3339 UTC times order as strings; an entry without a
  // time counts as oldest.
  std::stable_sort(updates.begin(), updates.end(), [&](size_t a, size_t b) {
    return entries[a].time < entries[b].time;
  });
  const size_t merge = updates.size() - kMaxUpdateManagers + 1;
  Entry ancient{"ancient-changes", "Update", "", "", "", {}};
  std::vector<bool> drop(entries.size(), false);
  for (size_t n = 0; n < merge; ++n) {
    Entry& e = entries[updates[n]];
    ancient.fields.insert(e.fields.begin(), e.fields.end());
    if (ancient.api_version.empty() || e.time >= ancient.time) {
      ancient.api_version = e.api_version;
      ancient.time = e.time;
    }
    drop[updates[n]] = true;
  }
  std::vector<Entry> kept;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (!drop[i]) kept.push_back(std::move(entries[i]));
  }
  kept.push_back(std::move(ancient));
  entries = std::move(kept);
}

FieldSet Changed(const Comparison& c) {
  FieldSet out = c.added;
  out.insert(c.modified.begin(), c.modified.end());
  return out;
}

Comparison CompareStripped(const Json* old_obj, const Json& new_obj, const Schema* schema,
                           const std::vector<FieldPath>& ignored) {
  Comparison c = old_obj ? Compare(*old_obj, new_obj, schema)
                         : Comparison{FieldsOf(new_obj, schema), {}, {}};
  StripIgnored(c.added, ignored);
  StripIgnored(c.modified, ignored);
  StripIgnored(c.removed, ignored);
  return c;
}

}  // namespace

Json ToFieldsV1(const FieldSet& set) {
  Json root = Json::object();
  for (const FieldPath& p : set) {
    Json* node = &root;
    for (const std::string& e : p) node = &(*node)[e];
    if (node->is_null()) *node = Json::object();
  }
  // A member that also has children is marked with ".".
  for (const FieldPath& p : set) {
    Json* node = &root;
    for (const std::string& e : p) node = &(*node)[e];
    if (!node->empty()) (*node)["."] = Json::object();
  }
  return root;
}

absl::StatusOr<FieldSet> FromFieldsV1(const Json& fields) {
  FieldSet out;
  FieldPath path;
  absl::Status st = ParseTrie(fields, path, out, 0);
  if (!st.ok()) return st;
  return out;
}

std::string PathString(const FieldPath& path) {
  std::string out;
  for (const std::string& e : path) {
    if (e.size() < 2) continue;
    const std::string rest = e.substr(2);
    switch (e[0]) {
      case 'f': absl::StrAppend(&out, ".", rest); break;
      case 'k': {
        Json keys = Json::parse(rest, nullptr, /*allow_exceptions=*/false);
        std::vector<std::string> parts;
        if (keys.is_object()) {
          for (auto it = keys.begin(); it != keys.end(); ++it) {
            parts.push_back(absl::StrCat(it.key(), "=", Quote(*it)));
          }
        }
        absl::StrAppend(&out, "[", absl::StrJoin(parts, ","), "]");
        break;
      }
      case 'v': absl::StrAppend(&out, "[=", rest, "]"); break;
      case 'i': absl::StrAppend(&out, "[", rest, "]"); break;
    }
  }
  return out;
}

FieldSet FieldsOf(const Json& obj, const Schema* schema) {
  FieldSet out;
  for (const auto& [p, v] : FlattenAll(obj, schema)) out.insert(p);
  return out;
}

Comparison Compare(const Json& old_obj, const Json& new_obj, const Schema* schema) {
  Flat a = FlattenAll(old_obj, schema), b = FlattenAll(new_obj, schema);
  Comparison c;
  auto ia = a.begin();
  auto ib = b.begin();
  while (ia != a.end() || ib != b.end()) {
    if (ib == b.end() || (ia != a.end() && ia->first < ib->first)) {
      c.removed.insert(ia->first);
      ++ia;
    } else if (ia == a.end() || ib->first < ia->first) {
      c.added.insert(ib->first);
      ++ib;
    } else {
      const bool item_a = ia->second == nullptr, item_b = ib->second == nullptr;
      if (item_a != item_b || (!item_a && *ia->second != *ib->second)) {
        c.modified.insert(ib->first);
      }
      ++ia;
      ++ib;
    }
  }
  return c;
}

Json MergeApplied(const Json& live, const Json& config, const Schema* schema) {
  if (config.is_object() && live.is_object() && Granular(schema)) {
    Json out = live;
    for (auto it = config.begin(); it != config.end(); ++it) {
      auto cur = out.find(it.key());
      if (cur == out.end()) {
        out[it.key()] = *it;
      } else {
        *cur = MergeApplied(*cur, *it, FieldSchema(schema, it.key()));
      }
    }
    return out;
  }
  std::vector<std::string> keys;
  const ListKind kind = config.is_array() ? KindOfList(schema, &keys) : ListKind::kAtomic;
  if (config.is_array() && live.is_array() && kind != ListKind::kAtomic) {
    Json out = live;
    const Schema* is = ItemSchema(schema);
    // Elements of the live list by path element.
    std::map<std::string, size_t> at;
    for (size_t i = 0; i < out.size(); ++i) at.emplace(ItemElement(kind, keys, out[i], i), i);
    for (size_t i = 0; i < config.size(); ++i) {
      const std::string elem = ItemElement(kind, keys, config[i], i);
      auto found = absl::StartsWith(elem, "i:") ? at.end() : at.find(elem);
      if (found == at.end()) {
        out.push_back(config[i]);
      } else if (kind == ListKind::kAssociative) {
        out[found->second] = MergeApplied(out[found->second], config[i], is);
      }
    }
    return out;
  }
  return config;
}

void RemoveFields(Json& obj, const FieldSet& paths, const Schema* /*schema*/) {
  // Deepest and last first, so that removing a list item never shifts an
  // index another path still names.
  for (auto it = paths.rbegin(); it != paths.rend(); ++it) {
    if (!it->empty()) RemoveOne(obj, *it);
  }
}

absl::StatusOr<std::vector<Entry>> ParseManagedFields(const Json& managed_fields) {
  std::vector<Entry> out;
  if (managed_fields.is_null()) return out;
  if (!managed_fields.is_array()) {
    return absl::InvalidArgumentError("metadata.managedFields must be a list");
  }
  for (size_t i = 0; i < managed_fields.size(); ++i) {
    const Json& m = managed_fields[i];
    auto bad = [&](const std::string& why) {
      return absl::InvalidArgumentError(absl::StrCat("metadata.managedFields[", i, "]: ", why));
    };
    if (!m.is_object()) return bad("must be an object");
    Entry e;
    auto str = [&](const char* k) {
      auto it = m.find(k);
      return it != m.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    e.manager = str("manager");
    e.operation = str("operation");
    e.api_version = str("apiVersion");
    e.subresource = str("subresource");
    e.time = str("time");
    if (e.operation != "Apply" && e.operation != "Update") {
      return bad("operation must be Apply or Update");
    }
    const std::string type = str("fieldsType");
    if (!type.empty() && type != "FieldsV1") return bad("fieldsType must be FieldsV1");
    if (auto f = m.find("fieldsV1"); f != m.end() && !f->is_null()) {
      absl::StatusOr<FieldSet> set = FromFieldsV1(*f);
      if (!set.ok()) return bad(std::string(set.status().message()));
      e.fields = *std::move(set);
    }
    out.push_back(std::move(e));
  }
  return out;
}

Json EncodeManagedFields(const std::vector<Entry>& entries) {
  Json out = Json::array();
  for (const Entry& e : entries) {
    Json m = {{"manager", e.manager}, {"operation", e.operation}, {"apiVersion", e.api_version}};
    if (!e.time.empty()) m["time"] = e.time;
    m["fieldsType"] = "FieldsV1";
    m["fieldsV1"] = ToFieldsV1(e.fields);
    if (!e.subresource.empty()) m["subresource"] = e.subresource;
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<FieldPath> IgnoredPaths(bool status, bool has_status) {
  std::vector<FieldPath> out = {{"f:apiVersion"}, {"f:kind"}};
  for (const char* f : {"name", "namespace", "creationTimestamp", "selfLink", "uid",
                        "clusterName", "generation", "managedFields", "resourceVersion",
                        "deletionTimestamp", "deletionGracePeriodSeconds"}) {
    out.push_back({"f:metadata", std::string("f:") + f});
  }
  if (has_status) out.push_back({status ? "f:spec" : "f:status"});
  return out;
}

void RecordUpdate(std::vector<Entry>& entries, const Json* old_obj, const Json& new_obj,
                  const Schema* schema, const Operation& op) {
  const Comparison c = CompareStripped(old_obj, new_obj, schema, op.ignored);
  if (c.Empty()) return;
  Entry mine{op.manager, "Update", op.api_version, op.subresource, op.time, {}};
  const std::string key = EntryKey(mine);
  const FieldSet changed = Changed(c);
  bool found = false;
  for (Entry& e : entries) {
    if (EntryKey(e) == key) {
      found = true;
      e.fields = Minus(e.fields, c.removed);
      e.fields.insert(changed.begin(), changed.end());
      e.time = op.time;
      continue;
    }
    e.fields = Minus(Minus(e.fields, changed), c.removed);
  }
  if (!found) {
    mine.fields = changed;
    entries.push_back(std::move(mine));
  }
  DropEmpty(entries);
  CapUpdateManagers(entries);
}

ApplyResult Apply(const std::vector<Entry>& entries, const Json* live, const Json& config,
                  const Schema* schema, const Operation& op, bool force) {
  ApplyResult r;
  r.entries = entries;
  Entry mine{op.manager, "Apply", op.api_version, op.subresource, op.time, {}};
  const std::string key = EntryKey(mine);
  // An object nobody has claimed yet: what it holds belongs to
  // "before-first-apply", so the first apply conflicts with values it changes.
  if (live && r.entries.empty()) {
    Entry before{"before-first-apply", "Update", op.api_version, "", "", FieldsOf(*live, schema)};
    StripIgnored(before.fields, op.ignored);
    if (!before.fields.empty()) r.entries.push_back(std::move(before));
  }
  mine.fields = FieldsOf(config, schema);
  StripIgnored(mine.fields, op.ignored);
  FieldSet last;
  for (const Entry& e : r.entries) {
    if (EntryKey(e) == key) last = e.fields;
  }
  FieldSet others;
  for (const Entry& e : r.entries) {
    if (EntryKey(e) != key) others.insert(e.fields.begin(), e.fields.end());
  }
  r.object = live ? MergeApplied(*live, config, schema) : config;
  // Prune what this manager applied before, applies no more, and nobody
  // else owns (a field, or an item with nothing of anyone else's inside).
  FieldSet prune;
  for (const FieldPath& p : Minus(last, mine.fields)) {
    if (OwnsAtOrBelow(others, p) || OwnsAtOrBelow(mine.fields, p) || IsItemKey(p)) continue;
    bool under = false;
    for (size_t n = 1; n < p.size() && !under; ++n) {
      under = prune.count(FieldPath(p.begin(), p.begin() + static_cast<long>(n))) > 0;
    }
    if (!under) prune.insert(p);
  }
  RemoveFields(r.object, prune, schema);
  const Comparison c = CompareStripped(live, r.object, schema, op.ignored);
  const FieldSet changed = Changed(c);
  for (const Entry& e : r.entries) {
    if (EntryKey(e) == key) continue;
    for (const FieldPath& p : Intersect(e.fields, changed)) {
      r.conflicts.push_back({PrintManager(e), p});
    }
  }
  if (!r.conflicts.empty() && !force) return r;
  r.conflicts.clear();
  bool found = false;
  for (Entry& e : r.entries) {
    if (EntryKey(e) == key) {
      found = true;
      if (e.fields != mine.fields || !c.Empty()) e.time = op.time;
      e.fields = mine.fields;
      e.api_version = op.api_version;
      continue;
    }
    e.fields = Minus(Minus(e.fields, changed), c.removed);
  }
  if (!found) r.entries.push_back(std::move(mine));
  DropEmpty(r.entries);
  CapUpdateManagers(r.entries);
  return r;
}

std::string ConflictMessage(const std::vector<Conflict>& conflicts) {
  if (conflicts.size() == 1) {
    return absl::StrCat("Apply failed with 1 conflict: conflict with ", conflicts[0].manager, ": ",
                        PathString(conflicts[0].path));
  }
  std::map<std::string, std::vector<std::string>> by_manager;
  for (const Conflict& c : conflicts) by_manager[c.manager].push_back(PathString(c.path));
  std::vector<std::string> lines;
  for (const auto& [m, paths] : by_manager) {
    lines.push_back(absl::StrCat("conflicts with ", m, ":"));
    for (const std::string& p : paths) lines.push_back("- " + p);
  }
  return absl::StrCat("Apply failed with ", conflicts.size(), " conflicts: ",
                      absl::StrJoin(lines, "\n"));
}

}  // namespace batchd::api::fieldmanager
