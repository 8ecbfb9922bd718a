// JSON decoding (an iterative SAX parser with depth and duplicate-key
// tracking), JSON encoding, and Content-Type dispatch.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/codec/codec.h"

namespace batchd::api {
namespace {

// Builds the DOM from nlohmann's SAX events. nlohmann's SAX driver keeps its
// own state on the heap, so the only recursion is bounded by `depth_`.
class DomBuilder {
 public:
  explicit DomBuilder(std::vector<std::string>* duplicates) : duplicates_(duplicates) {}

  bool null() { return Put(Json(nullptr)); }
  bool boolean(bool v) { return Put(Json(v)); }
  bool number_integer(Json::number_integer_t v) { return Put(Json(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return Put(Json(v)); }
  bool number_float(Json::number_float_t v, const std::string& text) {
    if (!std::isfinite(v)) {
      return Fail(absl::StrCat("number ", text, " is out of range"));
    }
    return Put(Json(v));
  }
  bool string(std::string& v) { return Put(Json(std::move(v))); }
  bool binary(Json::binary_t& /*v*/) { return Fail("binary values are not JSON"); }
  bool start_object(std::size_t /*n*/) { return Open(Json::object()); }
  bool start_array(std::size_t /*n*/) { return Open(Json::array()); }
  bool end_object() { return Close(); }
  bool end_array() { return Close(); }
  bool key(std::string& k) {
    Frame& f = stack_.back();
    if (duplicates_ != nullptr && f.node->contains(k)) {
      duplicates_->push_back(ChildPath(k));
    }
    f.key = std::move(k);
    return true;
  }
  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& ex) {
    std::string_view what = ex.what();
    // Drop nlohmann's "[json.exception.parse_error.101] " prefix.
    if (auto pos = what.find("] "); pos != std::string_view::npos) what.remove_prefix(pos + 2);
    error_ = absl::InvalidArgumentError(
        absl::StrCat("invalid JSON at byte ", position, ": ", std::string(what)));
    return false;
  }

  absl::Status error() const { return error_; }
  Json TakeRoot() { return std::move(root_); }

 private:
  struct Frame {
    Json* node;
    std::string key;  // Objects: the key of the value being parsed.
  };

  bool Fail(std::string msg) {
    error_ = absl::InvalidArgumentError(std::move(msg));
    return false;
  }

  // Places `v` where the next value goes and returns a pointer to it.
  Json* Place(Json v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Frame& f = stack_.back();
    if (f.node->is_object()) {
      Json& slot = (*f.node)[f.key];
      slot = std::move(v);
      return &slot;
    }
    f.node->push_back(std::move(v));
    return &f.node->back();
  }
  bool Put(Json v) {
    Place(std::move(v));
    return true;
  }
  bool Open(Json container) {
    if (stack_.size() >= static_cast<size_t>(kMaxNestingDepth)) {
      return Fail(absl::StrCat("JSON nesting exceeds the maximum depth of ", kMaxNestingDepth));
    }
    Json* node = Place(std::move(container));
    stack_.push_back(Frame{node, {}});
    return true;
  }
  bool Close() {
    stack_.pop_back();
    return true;
  }

  // The field path of `key` within the innermost open object.
  std::string ChildPath(std::string_view key) const {
    Path p;
    for (size_t i = 0; i + 1 < stack_.size(); ++i) {
      const Frame& f = stack_[i];
      p = f.node->is_object() ? p.Child(f.key) : p.Index(f.node->size() - 1);
    }
    return p.Child(key).String();
  }

  std::vector<std::string>* duplicates_;
  std::vector<Frame> stack_;
  Json root_;
  absl::Status error_;
};

enum class MediaKind { kJson, kYaml, kUnsupported };

MediaKind ClassifyMediaType(std::string_view content_type) {
  std::string_view base = content_type.substr(0, content_type.find(';'));
  std::string type = absl::AsciiStrToLower(absl::StripAsciiWhitespace(std::string(base)));
  if (type.empty() || type == "application/json" || absl::EndsWith(type, "+json")) {
    return MediaKind::kJson;
  }
  if (type == "application/yaml" || type == "text/yaml" || type == "application/x-yaml" ||
      absl::EndsWith(type, "+yaml")) {
    return MediaKind::kYaml;
  }
  return MediaKind::kUnsupported;
}

}  // namespace

absl::StatusOr<Json> ParseJson(std::string_view body, std::vector<std::string>* duplicate_fields) {
  DomBuilder builder(duplicate_fields);
  bool ok = false;
  try {
    ok = Json::sax_parse(body.begin(), body.end(), &builder, nlohmann::detail::input_format_t::json,
                         /*strict=*/true);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("invalid JSON: ", e.what()));
  }
  if (!ok) {
    absl::Status st = builder.error();
    return st.ok() ? absl::InvalidArgumentError("invalid JSON") : st;
  }
  return builder.TakeRoot();
}

absl::StatusOr<Json> ParseBody(std::string_view body, std::string_view content_type,
                               std::vector<std::string>* duplicate_fields) {
  switch (ClassifyMediaType(content_type)) {
    case MediaKind::kJson:
      return ParseJson(body, duplicate_fields);
    case MediaKind::kYaml:
      return ParseYaml(body, duplicate_fields);
    case MediaKind::kUnsupported:
      break;
  }
  return absl::UnimplementedError(
      absl::StrCat("the body of the request was in an unknown format - accepted media types "
                   "include: application/json, application/yaml; got \"",
                   std::string(content_type), "\""));
}

namespace {

// True when any byte of the 8 in `w` is one dump() escapes or writes in a
// form of its own: a control character (< 0x20), DEL or beyond (>= 0x7f),
// '"' or '\\'. Exact: when every byte is printable ASCII but those two, no
// subtraction below borrows across bytes, and each test is 0 byte by byte.
inline bool AnyByteToEscape(uint64_t w) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHigh = 0x8080808080808080ULL;
  const auto has_zero = [](uint64_t v) { return (v - kOnes) & ~v & kHigh; };
  const uint64_t below_space = (w - kOnes * 0x20) & ~w & kHigh;
  return ((w & kHigh) | below_space | has_zero(w ^ (kOnes * 0x7f)) |
          has_zero(w ^ (kOnes * '"')) | has_zero(w ^ (kOnes * '\\'))) != 0;
}

// A string as dump() writes it: printable ASCII but '"' and '\\' as it is
// (nearly every string of an object, checked 8 bytes at a time; the last
// word padded with a byte written as is), anything else by nlohmann itself.
void AppendCompactString(const std::string& s, std::string* out) {
  constexpr uint64_t kPlainWord = 0x6161616161616161ULL;  // "aaaaaaaa"
  const char* p = s.data();
  const size_t n = s.size();
  for (size_t i = 0; i < n; i += 8) {
    uint64_t w = kPlainWord;
    std::memcpy(&w, p + i, n - i < 8 ? n - i : 8);
    if (AnyByteToEscape(w)) {
      out->append(Json(s).dump());
      return;
    }
  }
  const size_t at = out->size();
  out->resize(at + n + 2);
  char* d = out->data() + at;
  d[0] = '"';
  std::memcpy(d + 1, p, n);
  d[n + 1] = '"';
}

// Appends `v` as `v.dump()` writes it (compact, UTF-8 as is).
void AppendCompact(const Json& v, std::string* out) {
  switch (v.type()) {
    case Json::value_t::object: {
      out->push_back('{');
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!first) out->push_back(',');
        first = false;
        const std::string& key = it.key();
        AppendCompactString(key, out);
        out->push_back(':');
        AppendCompact(*it, out);
      }
      out->push_back('}');
      return;
    }
    case Json::value_t::array: {
      out->push_back('[');
      bool first = true;
      for (const Json& e : v) {
        if (!first) out->push_back(',');
        first = false;
        AppendCompact(e, out);
      }
      out->push_back(']');
      return;
    }
    case Json::value_t::string:
      AppendCompactString(v.get_ref<const std::string&>(), out);
      return;
    case Json::value_t::boolean:
      out->append(v.get<bool>() ? "true" : "false");
      return;
    case Json::value_t::null:
      out->append("null");
      return;
    case Json::value_t::number_integer:
      absl::StrAppend(out, v.get<int64_t>());
      return;
    case Json::value_t::number_unsigned:
      absl::StrAppend(out, v.get<uint64_t>());
      return;
    default:
      out->append(v.dump());  // Floats (nlohmann's shortest form), binary, discarded.
      return;
  }
}

}  // namespace

std::string DumpCompact(const Json& value) {
  std::string out;
  out.reserve(1024);
  AppendCompact(value, &out);
  return out;
}

std::string ToJson(const Json& value, bool pretty) {
  try {
    return value.dump(pretty ? 2 : -1, ' ', /*ensure_ascii=*/false,
                      Json::error_handler_t::replace);
  } catch (const std::exception&) {
    return "null";  // Unreachable with the replace handler; never throw.
  }
}

}  // namespace batchd::api
