#include "api/protobuf/internal/values.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "api/codec/codec.h"
#include "api/meta/time_util.h"
#include "api/protobuf/internal/wire.h"
#include "api/resource/quantity.h"
#include "common/status_macros.h"

namespace batchd::api::protobuf::internal {
namespace {

absl::Status WrongWire(const char* type, uint32_t number) {
  return absl::InvalidArgumentError(
      absl::StrCat("proto: wrong wire type for field ", number, " of ", type));
}

// Depth of a JSON value, iteratively (values here nest at most
// kMaxNestingDepth deep, so the explicit stack stays small).
int JsonDepth(const Json& v) {
  int max_depth = 0;
  std::vector<std::pair<const Json*, int>> stack = {{&v, 1}};
  while (!stack.empty()) {
    auto [j, d] = stack.back();
    stack.pop_back();
    if (!j->is_structured()) continue;
    max_depth = std::max(max_depth, d);
    for (const Json& child : *j) stack.push_back({&child, d + 1});
  }
  return max_depth;
}

}  // namespace

absl::StatusOr<Json> DecodeTime(std::string_view msg, bool micro) {
  if (msg.empty()) return Json(nullptr);
  int64_t seconds = 0;
  int64_t nanos = 0;
  WireReader r(msg);
  while (!r.Done()) {
    WireField f;
    BATCHD_RETURN_IF_ERROR(r.Next(&f));
    if (f.number != 1 && f.number != 2) continue;
    if (f.wire != WireType::kVarint) return WrongWire("Timestamp", f.number);
    if (f.number == 1) seconds = static_cast<int64_t>(f.varint);
    if (f.number == 2) nanos = static_cast<int32_t>(static_cast<uint32_t>(f.varint));
  }
  absl::Time t = absl::FromUnixSeconds(seconds);
  if (!micro) return Json(meta::FormatRfc3339(t));
  return Json(meta::FormatRfc3339Micro(t + absl::Nanoseconds(nanos)));
}

absl::StatusOr<Json> DecodeDuration(std::string_view msg) {
  int64_t ns = 0;
  WireReader r(msg);
  while (!r.Done()) {
    WireField f;
    BATCHD_RETURN_IF_ERROR(r.Next(&f));
    if (f.number != 1) continue;
    if (f.wire != WireType::kVarint) return WrongWire("Duration", f.number);
    ns = static_cast<int64_t>(f.varint);
  }
  return Json(FormatGoDuration(ns));
}

absl::StatusOr<Json> DecodeQuantity(std::string_view msg) {
  std::string_view s;
  bool present = false;
  WireReader r(msg);
  while (!r.Done()) {
    WireField f;
    BATCHD_RETURN_IF_ERROR(r.Next(&f));
    if (f.number != 1) continue;
    if (f.wire != WireType::kLen) return WrongWire("Quantity", f.number);
    s = f.bytes;
    present = true;
  }
  if (!present) return Json("0");
  auto q = Quantity::Parse(s);
  if (!q.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("quantities must match the regular expression "
                     "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': \"",
                     SanitizeUtf8(s), "\""));
  }
  return Json(q->String());
}

absl::StatusOr<Json> DecodeIntOrString(std::string_view msg) {
  int64_t type = 0;
  int32_t int_val = 0;
  std::string_view str_val;
  WireReader r(msg);
  while (!r.Done()) {
    WireField f;
    BATCHD_RETURN_IF_ERROR(r.Next(&f));
    if (f.number < 1 || f.number > 3) continue;
    WireType want = f.number == 3 ? WireType::kLen : WireType::kVarint;
    if (f.wire != want) return WrongWire("IntOrString", f.number);
    if (f.number == 1) type = static_cast<int64_t>(f.varint);
    if (f.number == 2) int_val = static_cast<int32_t>(static_cast<uint32_t>(f.varint));
    if (f.number == 3) str_val = f.bytes;
  }
  if (type == 0) return Json(int_val);
  if (type == 1) return Json(SanitizeUtf8(str_val));
  return absl::InvalidArgumentError(absl::StrCat("impossible IntOrString.Type ", type));
}

absl::StatusOr<Json> DecodeEmbeddedJson(std::string_view msg) {
  std::string_view raw;
  WireReader r(msg);
  while (!r.Done()) {
    WireField f;
    BATCHD_RETURN_IF_ERROR(r.Next(&f));
    if (f.number != 1) continue;
    if (f.wire != WireType::kLen) return WrongWire("RawExtension", f.number);
    raw = f.bytes;
  }
  if (raw.empty()) return Json(nullptr);
  auto j = ParseJson(raw);
  if (!j.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("embedded object is not JSON: ", j.status().message()));
  }
  if (JsonDepth(*j) > kMaxEmbeddedJsonDepth) {
    return absl::InvalidArgumentError("embedded object nests too deeply");
  }
  return j;
}

std::string FormatGoDuration(int64_t ns) {
  bool neg = ns < 0;
  uint64_t u = neg ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  std::string sign = neg ? "-" : "";
  if (u == 0) return "0s";
  // Fraction digits with trailing zeros trimmed: (1500, 3) -> ".5".
  auto frac = [](uint64_t v, int digits) {
    std::string s = std::to_string(v);
    s.insert(0, digits - s.size(), '0');
    while (!s.empty() && s.back() == '0') s.pop_back();
    return s.empty() ? s : "." + s;
  };
  if (u < 1000) return absl::StrCat(sign, u, "ns");
  if (u < 1000000) return absl::StrCat(sign, u / 1000, frac(u % 1000, 3), "\xC2\xB5s");
  if (u < 1000000000) {
    return absl::StrCat(sign, u / 1000000, frac(u % 1000000, 6), "ms");
  }
  uint64_t secs = u / 1000000000;
  std::string out = sign;
  if (secs >= 3600) absl::StrAppend(&out, secs / 3600, "h");
  if (secs >= 60) absl::StrAppend(&out, secs / 60 % 60, "m");
  absl::StrAppend(&out, secs % 60, frac(u % 1000000000, 9), "s");
  return out;
}

std::string SanitizeUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<uint8_t>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    bool ok = n > 0 && i + n <= s.size();
    for (size_t k = 1; ok && k < n; ++k) ok = (static_cast<uint8_t>(s[i + k]) & 0xc0) == 0x80;
    if (ok && n > 1) {
      uint32_t cp = c & (0x7f >> n);
      for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<uint8_t>(s[i + k]) & 0x3f);
      static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
      ok = cp >= kMin[n] && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff);
    }
    if (ok) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out.append("\xEF\xBF\xBD");
      ++i;
    }
  }
  return out;
}

}  // namespace batchd::api::protobuf::internal
