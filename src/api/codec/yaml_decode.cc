// YAML decoding: yaml-cpp's event parser feeding a DOM builder that resolves
// scalars as go-yaml v2 does, expands aliases under a budget, applies `<<`
// merge keys, bounds depth and reports duplicate keys.
#include <cmath>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "api/codec/codec.h"
#include "api/codec/internal/yaml_scalar.h"
#include "yaml-cpp/depthguard.h"
#include "yaml-cpp/eventhandler.h"
#include "yaml-cpp/exceptions.h"
#include "yaml-cpp/mark.h"
#include "yaml-cpp/parser.h"

namespace batchd::api {
namespace {

using internal::PlainScalar;

// Thrown from event callbacks to abort yaml-cpp; caught in `ParseStream`.
struct BuildError {
  std::string message;
};

// A decoded value with the facts the alias budget and depth limit need.
struct Value {
  Json json;
  int depth = 0;      // 0 for scalars, 1 + deepest child for containers.
  size_t nodes = 1;   // Values in the tree.
  bool merge_key = false;  // A plain `<<` scalar.
};

class Builder : public YAML::EventHandler {
 public:
  explicit Builder(std::vector<std::string>* duplicates) : duplicates_(duplicates) {}

  // Resets per-document state; the result of the last document is `result_`.
  void OnDocumentStart(const YAML::Mark& mark) override {
    // yaml-cpp 0.7 can loop forever on some malformed input, starting empty
    // documents at the same position; treat that as a syntax error.
    if (documents_++ > 0 && mark.pos <= last_document_pos_) {
      throw BuildError{absl::StrCat("malformed document at line ", mark.line + 1, ", column ",
                                    mark.column + 1)};
    }
    last_document_pos_ = mark.pos;
    stack_.clear();
    anchors_.clear();
    alias_nodes_ = 0;
    result_ = Value{};
    result_.json = nullptr;
  }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark&, YAML::anchor_t anchor) override {
    Emit(Value{Json(nullptr)}, anchor);
  }
  void OnAlias(const YAML::Mark&, YAML::anchor_t anchor) override {
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) throw BuildError{"alias refers to an anchor that is not complete"};
    const Value& v = it->second;
    ChargeCopy(v.nodes);
    if (static_cast<int>(stack_.size()) + v.depth > kMaxNestingDepth) TooDeep();
    Emit(v, 0);
  }
  void OnScalar(const YAML::Mark&, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    Emit(ResolveScalar(tag, value), anchor);
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(Json::array(), anchor);
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(Json::object(), anchor);
  }
  void OnMapEnd() override { Close(); }

  Json TakeResult() { return std::move(result_.json); }

 private:
  struct Frame {
    Value value;
    YAML::anchor_t anchor = 0;
    bool has_key = false;
    bool key_is_merge = false;
    std::string key;
    absl::flat_hash_set<std::string> merged_keys;  // Keys that came from `<<`.
  };

  [[noreturn]] static void TooDeep() {
    throw BuildError{
        absl::StrCat("YAML nesting exceeds the maximum depth of ", kMaxNestingDepth)};
  }

  static Value ResolveScalar(const std::string& tag, const std::string& text) {
    Value v;
    std::string clean = internal::SanitizeUtf8(text);
    // "!" marks quoted and block scalars; they, and `!!str`, are strings.
    if (tag == "!" || tag == "tag:yaml.org,2002:str" || tag == "tag:yaml.org,2002:binary") {
      v.json = std::move(clean);
      return v;
    }
    PlainScalar p = internal::ResolvePlain(clean);
    switch (p.kind) {
      case PlainScalar::Kind::kString: v.json = std::move(clean); break;
      case PlainScalar::Kind::kNull: v.json = nullptr; break;
      case PlainScalar::Kind::kBool: v.json = p.b; break;
      case PlainScalar::Kind::kInt: v.json = p.i; break;
      case PlainScalar::Kind::kUint: v.json = p.u; break;
      case PlainScalar::Kind::kFloat: v.json = FloatToJson(p.f); break;
      case PlainScalar::Kind::kMergeKey:
        v.json = "<<";
        v.merge_key = true;
        break;
      case PlainScalar::Kind::kNonFinite:
        throw BuildError{absl::StrCat("the value ", clean, " cannot be represented in JSON")};
    }
    return v;
  }

  // Go re-reads the JSON it writes: an integral float64 prints as an integer.
  static Json FloatToJson(double f) {
    if (std::nearbyint(f) == f && std::fabs(f) < 9.2e18) return Json(static_cast<int64_t>(f));
    return Json(f);
  }

  static std::string KeyString(const Json& k) {
    if (k.is_string()) return k.get<std::string>();
    if (k.is_boolean()) return k.get<bool>() ? "true" : "false";
    if (k.is_number()) return k.dump();
    throw BuildError{absl::StrCat("unsupported map key: ", k.dump(-1, ' ', false,
                                                              Json::error_handler_t::replace))};
  }

  void Open(Json container, YAML::anchor_t anchor) {
    if (!stack_.empty() && stack_.back().value.json.is_object() && !stack_.back().has_key) {
      throw BuildError{"map keys must be strings, numbers or booleans, not collections"};
    }
    if (stack_.size() >= static_cast<size_t>(kMaxNestingDepth)) TooDeep();
    Frame f;
    f.value.json = std::move(container);
    f.anchor = anchor;
    stack_.push_back(std::move(f));
  }

  void Close() {
    Frame f = std::move(stack_.back());
    stack_.pop_back();
    Emit(std::move(f.value), f.anchor);
  }

  // Anchors and aliases copy values; their total size is bounded.
  void ChargeCopy(size_t nodes) {
    alias_nodes_ += nodes;
    if (alias_nodes_ > kMaxYamlAliasNodes) {
      throw BuildError{absl::StrCat("YAML anchors and aliases expand to more than ",
                                    kMaxYamlAliasNodes, " values")};
    }
  }

  void Emit(Value v, YAML::anchor_t anchor) {
    if (anchor != 0) {
      ChargeCopy(v.nodes);
      anchors_[anchor] = v;
    }
    if (stack_.empty()) {
      result_ = std::move(v);
      return;
    }
    Frame& f = stack_.back();
    Value& parent = f.value;
    parent.nodes += v.nodes;
    parent.depth = std::max(parent.depth, v.depth + 1);
    if (parent.json.is_array()) {
      parent.json.push_back(std::move(v.json));
    } else if (!f.has_key) {
      f.key_is_merge = v.merge_key;
      f.key = KeyString(v.json);
      f.has_key = true;
    } else {
      f.has_key = false;
      if (f.key_is_merge) {
        Merge(f, v.json);
      } else {
        SetKey(f, std::move(v.json));
      }
    }
  }

  void SetKey(Frame& f, Json v) {
    if (f.value.json.contains(f.key) && f.merged_keys.erase(f.key) == 0 && duplicates_) {
      duplicates_->push_back(ChildPath(f.key));
    }
    f.value.json[f.key] = std::move(v);
  }

  // `<<: map` or `<<: [map, ...]`: keys not already present are added;
  // explicit keys later in the map still override them.
  void Merge(Frame& f, const Json& source) {
    if (source.is_object()) {
      MergeOne(f, source);
      return;
    }
    if (source.is_array()) {
      for (const Json& m : source) {
        if (!m.is_object()) throw BuildError{"a << merge list must contain only maps"};
        MergeOne(f, m);
      }
      return;
    }
    throw BuildError{"a << merge value must be a map or a list of maps"};
  }
  void MergeOne(Frame& f, const Json& source) {
    for (const auto& [k, v] : source.items()) {
      if (f.value.json.contains(k)) continue;
      f.value.json[k] = v;
      f.merged_keys.insert(k);
    }
  }

  std::string ChildPath(std::string_view key) const {
    Path p;
    for (size_t i = 0; i + 1 < stack_.size(); ++i) {
      const Frame& f = stack_[i];
      p = f.value.json.is_object() ? p.Child(f.key) : p.Index(f.value.json.size());
    }
    return p.Child(key).String();
  }

  std::vector<std::string>* duplicates_;
  std::vector<Frame> stack_;
  absl::flat_hash_map<YAML::anchor_t, Value> anchors_;
  size_t alias_nodes_ = 0;
  Value result_;
  size_t documents_ = 0;
  int last_document_pos_ = -1;
};

// Calls `on_doc` with each document of `body`.
template <typename F>
absl::Status ParseStream(std::string_view body, std::vector<std::string>* duplicates, F on_doc) {
  try {
    std::istringstream in{std::string(body)};
    YAML::Parser parser(in);
    Builder builder(duplicates);
    while (parser.HandleNextDocument(builder)) {
      absl::Status st = on_doc(builder.TakeResult());
      if (!st.ok()) return st;
    }
    return absl::OkStatus();
  } catch (const BuildError& e) {
    return absl::InvalidArgumentError(absl::StrCat("invalid YAML: ", e.message));
  } catch (const YAML::DeepRecursion& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid YAML: line ", e.mark.line + 1, ": nesting exceeds the maximum depth"));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("invalid YAML: line ", e.mark.line + 1,
                                                   ", column ", e.mark.column + 1, ": ", e.msg));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("invalid YAML: ", e.what()));
  } catch (...) {
    return absl::InvalidArgumentError("invalid YAML");
  }
}

}  // namespace

absl::StatusOr<Json> ParseYaml(std::string_view body, std::vector<std::string>* duplicate_fields) {
  Json result = nullptr;
  int non_null = 0;
  absl::Status st = ParseStream(body, duplicate_fields, [&](Json doc) {
    if (doc.is_null()) return absl::OkStatus();
    if (++non_null > 1) {
      return absl::InvalidArgumentError(
          "invalid YAML: expected a single document, found several (separated by ---)");
    }
    result = std::move(doc);
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return result;
}

absl::StatusOr<std::vector<Json>> ParseYamlDocuments(std::string_view body) {
  std::vector<Json> docs;
  absl::Status st = ParseStream(body, nullptr, [&](Json doc) {
    if (!doc.is_null()) docs.push_back(std::move(doc));
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return docs;
}

}  // namespace batchd::api
