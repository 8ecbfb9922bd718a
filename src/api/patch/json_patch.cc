// RFC 6902 JSON patch, with JSON pointers (RFC 6901).
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "api/patch/internal/measure.h"
#include "api/patch/patch.h"
#include "common/status_macros.h"

namespace batchd::api {
namespace {

using Pointer = std::vector<std::string>;

absl::StatusOr<Pointer> ParsePointer(const std::string& text) {
  Pointer tokens;
  if (text.empty()) return tokens;
  if (text[0] != '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("JSON pointer \"", text, "\" must be empty or start with '/'"));
  }
  std::string cur;
  for (size_t i = 1; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == '/') {
      tokens.push_back(std::move(cur));
      cur.clear();
    } else if (text[i] == '~') {
      char next = i + 1 < text.size() ? text[i + 1] : '\0';
      if (next != '0' && next != '1') {
        return absl::InvalidArgumentError(
            absl::StrCat("JSON pointer \"", text, "\" has an invalid '~' escape"));
      }
      cur.push_back(next == '0' ? '~' : '/');
      ++i;
    } else {
      cur.push_back(text[i]);
    }
  }
  return tokens;
}

// An array index token: "0" or digits without a leading zero.
absl::StatusOr<size_t> ParseIndex(const std::string& tok, size_t limit, const std::string& path) {
  bool ok = !tok.empty() && tok.size() <= 18 && (tok == "0" || tok[0] != '0');
  for (char c : tok) ok = ok && c >= '0' && c <= '9';
  if (!ok) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid array index \"", tok, "\" in path ", path));
  }
  size_t idx = std::stoull(tok);
  if (idx > limit) {
    return absl::InvalidArgumentError(
        absl::StrCat("array index ", idx, " is out of range in path ", path));
  }
  return idx;
}

// The value at `ptr` (all tokens), or NotFound-style InvalidArgument.
absl::StatusOr<Json*> Resolve(Json& doc, const Pointer& ptr, size_t count, const std::string& path) {
  Json* cur = &doc;
  for (size_t i = 0; i < count; ++i) {
    const std::string& tok = ptr[i];
    if (cur->is_object()) {
      auto it = cur->find(tok);
      if (it == cur->end()) {
        return absl::InvalidArgumentError(absl::StrCat("path ", path, " does not exist"));
      }
      cur = &*it;
    } else if (cur->is_array()) {
      if (cur->empty()) {
        return absl::InvalidArgumentError(absl::StrCat("path ", path, " does not exist"));
      }
      BATCHD_ASSIGN_OR_RETURN(size_t idx, ParseIndex(tok, cur->size() - 1, path));
      cur = &(*cur)[idx];
    } else {
      return absl::InvalidArgumentError(absl::StrCat("path ", path, " does not exist"));
    }
  }
  return cur;
}

absl::StatusOr<std::string> StringMember(const Json& op, const char* name) {
  auto it = op.find(name);
  if (it == op.end() || !it->is_string()) {
    return absl::InvalidArgumentError(
        absl::StrCat("JSON patch operation needs a string \"", name, "\""));
  }
  return it->get<std::string>();
}

absl::StatusOr<const Json*> ValueMember(const Json& op, const std::string& name) {
  auto it = op.find("value");
  if (it == op.end()) {
    return absl::InvalidArgumentError(absl::StrCat("JSON patch \"", name, "\" needs a \"value\""));
  }
  return &*it;
}

class Patcher {
 public:
  explicit Patcher(Json doc) : doc_(std::move(doc)) {
    nodes_ = internal::MeasureJson(doc_, kMaxPatchResultNodes, kMaxPatchDepth).nodes;
  }

  absl::Status Apply(const Json& op);
  Json Take() { return std::move(doc_); }

 private:
  absl::Status Place(const Pointer& ptr, const std::string& path, Json value);
  absl::StatusOr<Json> Remove(const Pointer& ptr, const std::string& path);
  absl::Status Charge(const Json& value, size_t level, bool adds_nodes);
  absl::Status MoveOrCopy(const std::string& name, const Pointer& ptr, const std::string& path,
                          const Json& op);

  Json doc_;
  size_t nodes_ = 0;
};

// Enforces the result-size and depth bounds for `value` placed at `level`.
absl::Status Patcher::Charge(const Json& value, size_t level, bool adds_nodes) {
  internal::Measure m = internal::MeasureJson(value, kMaxPatchResultNodes, kMaxPatchDepth);
  if (adds_nodes) nodes_ += m.nodes;
  if (nodes_ > kMaxPatchResultNodes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("JSON patch result would exceed ", kMaxPatchResultNodes, " values"));
  }
  if (level + static_cast<size_t>(m.depth) > static_cast<size_t>(kMaxPatchDepth)) {
    return absl::ResourceExhaustedError(
        absl::StrCat("JSON patch result would nest deeper than ", kMaxPatchDepth, " levels"));
  }
  return absl::OkStatus();
}

// The "add" operation without accounting.
absl::Status Patcher::Place(const Pointer& ptr, const std::string& path, Json value) {
  if (ptr.empty()) {
    doc_ = std::move(value);
    return absl::OkStatus();
  }
  BATCHD_ASSIGN_OR_RETURN(Json * parent, Resolve(doc_, ptr, ptr.size() - 1, path));
  const std::string& last = ptr.back();
  if (parent->is_object()) {
    (*parent)[last] = std::move(value);
  } else if (parent->is_array()) {
    if (last == "-") {
      parent->push_back(std::move(value));
    } else {
      BATCHD_ASSIGN_OR_RETURN(size_t idx, ParseIndex(last, parent->size(), path));
      parent->insert(parent->begin() + static_cast<std::ptrdiff_t>(idx), std::move(value));
    }
  } else {
    return absl::InvalidArgumentError(absl::StrCat("path ", path, " does not exist"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Json> Patcher::Remove(const Pointer& ptr, const std::string& path) {
  if (ptr.empty()) return absl::InvalidArgumentError("cannot remove the whole document");
  BATCHD_ASSIGN_OR_RETURN(Json * target, Resolve(doc_, ptr, ptr.size(), path));
  Json removed = std::move(*target);
  Json* parent = Resolve(doc_, ptr, ptr.size() - 1, path).value();
  if (parent->is_object()) {
    parent->erase(ptr.back());
  } else {
    parent->erase(static_cast<size_t>(std::stoull(ptr.back())));
  }
  return removed;
}

absl::Status Patcher::MoveOrCopy(const std::string& name, const Pointer& ptr,
                                 const std::string& path, const Json& op) {
  BATCHD_ASSIGN_OR_RETURN(std::string from, StringMember(op, "from"));
  BATCHD_ASSIGN_OR_RETURN(Pointer from_ptr, ParsePointer(from));
  BATCHD_ASSIGN_OR_RETURN(Json * source, Resolve(doc_, from_ptr, from_ptr.size(), from));
  bool is_move = name == "move";
  if (is_move && from == path) return absl::OkStatus();
  if (is_move && path.size() > from.size() && path.compare(0, from.size(), from) == 0 &&
      path[from.size()] == '/') {
    return absl::InvalidArgumentError(absl::StrCat("cannot move ", from, " into its own child ",
                                                   path));
  }
  // Bound before copying: a copy grows the document, a move may deepen it.
  BATCHD_RETURN_IF_ERROR(Charge(*source, ptr.size(), /*adds_nodes=*/!is_move));
  if (!is_move) return Place(ptr, path, *source);
  // A failure leaves `doc_` half-changed; the caller discards it.
  BATCHD_ASSIGN_OR_RETURN(Json value, Remove(from_ptr, from));
  return Place(ptr, path, std::move(value));
}

absl::Status Patcher::Apply(const Json& op) {
  if (!op.is_object()) return absl::InvalidArgumentError("a JSON patch operation must be an object");
  BATCHD_ASSIGN_OR_RETURN(std::string name, StringMember(op, "op"));
  BATCHD_ASSIGN_OR_RETURN(std::string path, StringMember(op, "path"));
  BATCHD_ASSIGN_OR_RETURN(Pointer ptr, ParsePointer(path));
  if (name == "remove") return Remove(ptr, path).status();
  if (name == "move" || name == "copy") return MoveOrCopy(name, ptr, path, op);
  if (name != "add" && name != "replace" && name != "test") {
    return absl::InvalidArgumentError(absl::StrCat("unknown JSON patch operation \"", name, "\""));
  }
  BATCHD_ASSIGN_OR_RETURN(const Json* value, ValueMember(op, name));
  if (name == "test") {
    BATCHD_ASSIGN_OR_RETURN(Json * target, Resolve(doc_, ptr, ptr.size(), path));
    if (*target != *value) {
      return absl::FailedPreconditionError(
          absl::StrCat("test failed: the value at \"", path, "\" is not the expected value"));
    }
    return absl::OkStatus();
  }
  if (name == "replace") {
    BATCHD_ASSIGN_OR_RETURN(Json * target, Resolve(doc_, ptr, ptr.size(), path));
    BATCHD_RETURN_IF_ERROR(Charge(*value, ptr.size(), /*adds_nodes=*/true));
    *target = *value;
    return absl::OkStatus();
  }
  BATCHD_RETURN_IF_ERROR(Charge(*value, ptr.size(), /*adds_nodes=*/true));
  return Place(ptr, path, *value);
}

}  // namespace

absl::StatusOr<Json> ApplyJsonPatch(const Json& original, const Json& ops) {
  if (!ops.is_array()) return absl::InvalidArgumentError("a JSON patch must be an array");
  if (ops.size() > kMaxJsonPatchOperations) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "a JSON patch may have at most ", kMaxJsonPatchOperations, " operations"));
  }
  Patcher patcher(original);
  for (size_t i = 0; i < ops.size(); ++i) {
    absl::Status st = patcher.Apply(ops[i]);
    if (!st.ok()) {
      return absl::Status(st.code(), absl::StrCat("operation ", i, ": ", st.message()));
    }
  }
  return patcher.Take();
}

}  // namespace batchd::api
