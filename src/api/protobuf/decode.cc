#include "api/protobuf/decode.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "api/protobuf/internal/tables.h"
#include "api/protobuf/internal/values.h"
#include "api/protobuf/internal/wire.h"
#include "common/status_macros.h"

namespace batchd::api::protobuf {
namespace {

using internal::FieldDesc;
using internal::FieldType;
using internal::MessageDesc;
using internal::WireField;
using internal::WireReader;
using internal::WireType;

constexpr std::string_view kMagic("k8s\0", 4);

const FieldDesc* FindField(const MessageDesc& d, uint32_t number) {
  const FieldDesc* end = d.fields + d.num_fields;
  const FieldDesc* it = std::lower_bound(
      d.fields, end, number, [](const FieldDesc& f, uint32_t n) { return f.number < n; });
  return it != end && it->number == number ? it : nullptr;
}

bool IsScalar(FieldType t) {
  return t == FieldType::kString || t == FieldType::kBytes || t == FieldType::kBool ||
         t == FieldType::kInt32 || t == FieldType::kInt64;
}

bool IsVarint(FieldType t) {
  return t == FieldType::kBool || t == FieldType::kInt32 || t == FieldType::kInt64;
}

// The JSON of a Go zero value for fields emitted even when unset.
Json ZeroValue(FieldType t) {
  switch (t) {
    case FieldType::kString:
    case FieldType::kBytes:
      return "";
    case FieldType::kBool:
      return false;
    case FieldType::kInt32:
    case FieldType::kInt64:
    case FieldType::kIntOrString:
      return 0;
    case FieldType::kQuantity:
      return "0";
    case FieldType::kDuration:
      return "0s";
    default:
      return nullptr;  // Time, MicroTime, RawExtension, FieldsV1.
  }
}

bool IsZeroScalar(const Json& v) {
  return (v.is_string() && v.get_ref<const std::string&>().empty()) ||
         (v.is_boolean() && !v.get<bool>()) || (v.is_number_integer() && v.get<int64_t>() == 0);
}

// Walks one message into a JSON object. Keeps the current JSON path for
// unknown-field reports and error messages.
class Decoder {
 public:
  explicit Decoder(std::vector<std::string>* unknown) : unknown_(unknown) {}

  absl::Status DecodeMessage(const MessageDesc& d, std::string_view data, Json& out, int depth);

 private:
  struct PathElem {
    const char* name;
    int64_t index;  // -1: not a list element.
  };
  absl::Status DecodeField(const FieldDesc& f, const WireField& w, Json& out, int depth);
  absl::Status DecodeRepeated(const FieldDesc& f, const WireField& w, Json& out, int depth);
  absl::StatusOr<Json> DecodeValue(const FieldDesc& f, const WireField& w, int depth);
  absl::Status DecodeMapEntry(const FieldDesc& f, std::string_view data, Json& map, int depth);
  absl::Status Finish(const MessageDesc& d, Json& out, int depth);
  absl::Status Count();
  absl::Status Error(absl::string_view what) const;
  std::string Path() const;

  std::vector<std::string>* unknown_;
  std::vector<PathElem> path_;
  size_t nodes_ = 0;
};

std::string Decoder::Path() const {
  std::string p;
  for (const PathElem& e : path_) {
    if (e.name != nullptr && *e.name != '\0') absl::StrAppend(&p, p.empty() ? "" : ".", e.name);
    if (e.index >= 0) absl::StrAppend(&p, "[", e.index, "]");
  }
  return p;
}

absl::Status Decoder::Error(absl::string_view what) const {
  std::string p = Path();
  return absl::InvalidArgumentError(p.empty() ? std::string(what) : absl::StrCat(p, ": ", what));
}

absl::Status Decoder::Count() {
  if (++nodes_ > kMaxProtobufNodes) return Error("the object has too many fields");
  return absl::OkStatus();
}

absl::Status Decoder::DecodeMessage(const MessageDesc& d, std::string_view data, Json& out,
                                    int depth) {
  if (depth > kMaxProtobufDepth) return Error("the object nests too deeply");
  if (!out.is_object()) out = Json::object();
  WireReader r(data);
  while (!r.Done()) {
    WireField w;
    if (absl::Status s = r.Next(&w); !s.ok()) return Error(s.message());
    const FieldDesc* f = FindField(d, w.number);
    if (f == nullptr) {
      if (unknown_ != nullptr && unknown_->size() < 1000) {
        std::string p = Path();
        unknown_->push_back(absl::StrCat(p, p.empty() ? "" : ".", "#", w.number));
      }
      continue;
    }
    BATCHD_RETURN_IF_ERROR(Count());
    BATCHD_RETURN_IF_ERROR(DecodeField(*f, w, out, depth));
  }
  return Finish(d, out, depth);
}

absl::Status Decoder::DecodeField(const FieldDesc& f, const WireField& w, Json& out, int depth) {
  if (f.flags & internal::kInline) {
    if (w.wire != WireType::kLen) return Error(absl::StrCat("wrong wire type for ", f.json_name));
    return DecodeMessage(*f.message, w.bytes, out, depth + 1);
  }
  if (f.type == FieldType::kMap || (f.flags & internal::kRepeated)) {
    return DecodeRepeated(f, w, out, depth);
  }
  path_.push_back({f.json_name, -1});
  if (f.type == FieldType::kMessage) {
    if (w.wire != WireType::kLen) return Error("wrong wire type");
    // A repeated occurrence of a message field merges into the earlier one.
    BATCHD_RETURN_IF_ERROR(DecodeMessage(*f.message, w.bytes, out[f.json_name], depth + 1));
  } else {
    BATCHD_ASSIGN_OR_RETURN(out[f.json_name], DecodeValue(f, w, depth));
  }
  path_.pop_back();
  return absl::OkStatus();
}

absl::Status Decoder::DecodeRepeated(const FieldDesc& f, const WireField& w, Json& out, int depth) {
  Json& list = out[f.json_name];
  if (f.type == FieldType::kMap) {
    if (!list.is_object()) list = Json::object();
    if (w.wire != WireType::kLen) return Error(absl::StrCat("wrong wire type for ", f.json_name));
    return DecodeMapEntry(f, w.bytes, list, depth);
  }
  if (!list.is_array()) list = Json::array();
  if (IsVarint(f.type) && w.wire == WireType::kLen) {  // Packed encoding.
    WireReader r(w.bytes);
    while (!r.Done()) {
      WireField v{w.number, WireType::kVarint, 0, {}};
      if (absl::Status s = r.NextVarint(&v.varint); !s.ok()) return Error(s.message());
      BATCHD_RETURN_IF_ERROR(Count());
      BATCHD_ASSIGN_OR_RETURN(Json item, DecodeValue(f, v, depth));
      list.push_back(std::move(item));
    }
    return absl::OkStatus();
  }
  path_.push_back({f.json_name, static_cast<int64_t>(list.size())});
  BATCHD_ASSIGN_OR_RETURN(Json item, DecodeValue(f, w, depth));
  path_.pop_back();
  list.push_back(std::move(item));
  return absl::OkStatus();
}

absl::StatusOr<Json> Decoder::DecodeValue(const FieldDesc& f, const WireField& w, int depth) {
  bool want_varint = IsVarint(f.type);
  if (w.wire != (want_varint ? WireType::kVarint : WireType::kLen)) {
    return Error(absl::StrCat("proto: wrong wire type ", static_cast<int>(w.wire), " for field ",
                              f.json_name));
  }
  absl::StatusOr<Json> v;
  switch (f.type) {
    case FieldType::kString:
      return Json(internal::SanitizeUtf8(w.bytes));
    case FieldType::kBytes:
      return Json(absl::Base64Escape(absl::string_view(w.bytes.data(), w.bytes.size())));
    case FieldType::kBool:
      return Json(w.varint != 0);
    case FieldType::kInt32:
      return Json(static_cast<int32_t>(static_cast<uint32_t>(w.varint)));
    case FieldType::kInt64:
      return Json(static_cast<int64_t>(w.varint));
    case FieldType::kMessage: {
      Json obj = Json::object();
      BATCHD_RETURN_IF_ERROR(DecodeMessage(*f.message, w.bytes, obj, depth + 1));
      return obj;
    }
    case FieldType::kTime:
      v = internal::DecodeTime(w.bytes, false);
      break;
    case FieldType::kMicroTime:
      v = internal::DecodeTime(w.bytes, true);
      break;
    case FieldType::kQuantity:
      v = internal::DecodeQuantity(w.bytes);
      break;
    case FieldType::kIntOrString:
      v = internal::DecodeIntOrString(w.bytes);
      break;
    case FieldType::kDuration:
      v = internal::DecodeDuration(w.bytes);
      break;
    case FieldType::kRawExtension:
    case FieldType::kFieldsV1:
      v = internal::DecodeEmbeddedJson(w.bytes);
      break;
    case FieldType::kMap:
      return Error("map outside a map field");
  }
  if (!v.ok()) return Error(v.status().message());
  return v;
}

absl::Status Decoder::DecodeMapEntry(const FieldDesc& f, std::string_view data, Json& map,
                                     int depth) {
  if (depth + 1 > kMaxProtobufDepth) return Error("the object nests too deeply");
  const MessageDesc& entry = *f.message;
  const FieldDesc* value_desc = FindField(entry, 2);
  if (value_desc == nullptr) return Error("map entry without a value");
  std::string key;
  std::optional<Json> value;
  WireReader r(data);
  while (!r.Done()) {
    WireField w;
    if (absl::Status s = r.Next(&w); !s.ok()) return Error(s.message());
    if (w.number == 1) {
      if (w.wire != WireType::kLen) return Error("wrong wire type for a map key");
      key = internal::SanitizeUtf8(w.bytes);
    } else if (w.number == 2) {
      path_.push_back({f.json_name, -1});
      BATCHD_ASSIGN_OR_RETURN(value, DecodeValue(*value_desc, w, depth + 1));
      path_.pop_back();
    }
  }
  if (!value.has_value()) {
    value = ZeroValue(value_desc->type);
    if (value_desc->type == FieldType::kMessage) {
      value = Json::object();
      BATCHD_RETURN_IF_ERROR(Finish(*value_desc->message, *value, depth + 1));
    }
  }
  map[key] = std::move(*value);
  return absl::OkStatus();
}

// Applies Go's JSON rules to a decoded message: omitempty drops zero values
// of non-pointer fields; fields without omitempty and non-pointer structs
// appear even when absent from the wire.
absl::Status Decoder::Finish(const MessageDesc& d, Json& out, int depth) {
  if (depth > kMaxProtobufDepth) return Error("the object nests too deeply");
  for (size_t i = 0; i < d.num_fields; ++i) {
    const FieldDesc& f = d.fields[i];
    if (f.flags & internal::kInline) {
      BATCHD_RETURN_IF_ERROR(Finish(*f.message, out, depth + 1));
      continue;
    }
    auto it = out.find(f.json_name);
    if (f.type == FieldType::kMap || (f.flags & internal::kRepeated)) {
      if (it != out.end() && it->empty()) out.erase(it);
      continue;
    }
    if (it != out.end()) {
      bool omit = IsScalar(f.type) && !(f.flags & (internal::kPointer | internal::kKeepZero));
      if (omit && IsZeroScalar(*it)) out.erase(it);
      continue;
    }
    if ((f.flags & internal::kPointer) || (IsScalar(f.type) && !(f.flags & internal::kKeepZero))) {
      continue;
    }
    BATCHD_RETURN_IF_ERROR(Count());
    Json& slot = out[f.json_name];
    slot = ZeroValue(f.type);
    if (f.type == FieldType::kMessage) {
      slot = Json::object();
      BATCHD_RETURN_IF_ERROR(Finish(*f.message, slot, depth + 1));
    }
  }
  return absl::OkStatus();
}

struct Envelope {
  std::string api_version;
  std::string kind;
  std::string_view raw;
  std::string content_encoding;
  std::string content_type;
};

absl::Status ParseTypeMeta(std::string_view data, Envelope* e) {
  WireReader r(data);
  while (!r.Done()) {
    WireField w;
    BATCHD_RETURN_IF_ERROR(r.Next(&w));
    if (w.number != 1 && w.number != 2) continue;
    if (w.wire != WireType::kLen) return absl::InvalidArgumentError("proto: bad TypeMeta");
    (w.number == 1 ? e->api_version : e->kind) = std::string(w.bytes);
  }
  return absl::OkStatus();
}

absl::StatusOr<Envelope> ParseEnvelope(std::string_view body) {
  if (body.size() > kMaxProtobufBodyBytes) {
    return absl::InvalidArgumentError("the protobuf body is too large");
  }
  if (body.substr(0, kMagic.size()) != kMagic) {
    return absl::InvalidArgumentError(
        "the body is not a Kubernetes protobuf object: it lacks the \"k8s\\x00\" prefix");
  }
  Envelope e;
  WireReader r(body.substr(kMagic.size()));
  while (!r.Done()) {
    WireField w;
    BATCHD_RETURN_IF_ERROR(r.Next(&w));
    if (w.number < 1 || w.number > 4) continue;
    if (w.wire != WireType::kLen) return absl::InvalidArgumentError("proto: bad runtime.Unknown");
    switch (w.number) {
      case 1:
        BATCHD_RETURN_IF_ERROR(ParseTypeMeta(w.bytes, &e));
        break;
      case 2:
        e.raw = w.bytes;
        break;
      case 3:
        e.content_encoding = std::string(w.bytes);
        break;
      case 4:
        e.content_type = std::string(w.bytes);
        break;
    }
  }
  return e;
}

const MessageDesc* FindKind(std::string_view api_version, std::string_view kind) {
  for (size_t i = 0; i < internal::kNumKinds; ++i) {
    const internal::KindDesc& k = internal::kKinds[i];
    if (api_version == k.api_version && kind == k.kind) return k.message;
  }
  return nullptr;
}

}  // namespace

bool IsProtobufContentType(std::string_view content_type) {
  std::string_view media = content_type.substr(0, content_type.find(';'));
  absl::string_view trimmed =
      absl::StripAsciiWhitespace(absl::string_view(media.data(), media.size()));
  return absl::EqualsIgnoreCase(
      trimmed, absl::string_view(kProtobufMediaType.data(), kProtobufMediaType.size()));
}

absl::StatusOr<Json> DecodeKubernetesProtobuf(std::string_view body,
                                              std::vector<std::string>* unknown_fields) {
  BATCHD_ASSIGN_OR_RETURN(Envelope e, ParseEnvelope(body));
  if (!e.content_encoding.empty()) {
    return absl::UnimplementedError("protobuf bodies with a content encoding are not supported");
  }
  if (!e.content_type.empty() && !IsProtobufContentType(e.content_type)) {
    return absl::UnimplementedError("runtime.Unknown with a non-protobuf content type");
  }
  const MessageDesc* d = FindKind(e.api_version, e.kind);
  if (d == nullptr) {
    return absl::UnimplementedError(
        absl::StrCat("no protobuf decoding for ", e.api_version, ", Kind=", e.kind));
  }
  Decoder decoder(unknown_fields);
  Json out = Json::object();
  BATCHD_RETURN_IF_ERROR(decoder.DecodeMessage(*d, e.raw, out, 1));
  if (!e.api_version.empty()) out["apiVersion"] = internal::SanitizeUtf8(e.api_version);
  if (!e.kind.empty()) out["kind"] = internal::SanitizeUtf8(e.kind);
  return out;
}

}  // namespace batchd::api::protobuf
