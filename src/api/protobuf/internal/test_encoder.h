// A tiny protobuf writer for tests: builds wire bytes field by field so the
// decoder's tests can describe objects without a protobuf library.
// Not thread-safe (a value type); test-only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace batchd::api::protobuf::testing {

class Encoder {
 public:
  Encoder& Varint(uint32_t field, uint64_t v) {
    Raw(field << 3);
    Raw(v);
    return *this;
  }
  Encoder& Int(uint32_t field, int64_t v) { return Varint(field, static_cast<uint64_t>(v)); }
  Encoder& Str(uint32_t field, std::string_view s) {
    Raw((field << 3) | 2);
    Raw(s.size());
    out_.append(s);
    return *this;
  }
  Encoder& Msg(uint32_t field, const Encoder& m) { return Str(field, m.out_); }
  // A map<string, string> entry {1: key, 2: value}.
  Encoder& Entry(uint32_t field, std::string_view k, std::string_view v) {
    return Msg(field, Encoder().Str(1, k).Str(2, v));
  }
  // A raw wire byte sequence (for malformed input).
  Encoder& Bytes(std::string_view b) {
    out_.append(b);
    return *this;
  }
  const std::string& str() const { return out_; }

 private:
  void Raw(uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<char>(v));
  }
  std::string out_;
};

// `k8s\0` + runtime.Unknown{typeMeta{apiVersion, kind}, raw}.
inline std::string Envelope(std::string_view api_version, std::string_view kind,
                            const Encoder& raw) {
  Encoder e;
  e.Msg(1, Encoder().Str(1, api_version).Str(2, kind)).Msg(2, raw);
  return std::string("k8s\0", 4) + e.str();
}

}  // namespace batchd::api::protobuf::testing
