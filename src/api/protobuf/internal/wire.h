// Protobuf wire-format reader: splits a buffer into (field number, wire type,
// value) triples with every varint and length bounds-checked.
//
// Thread-safety: a reader is a cursor over caller-owned bytes; use one per
// thread. The returned `bytes` views alias the buffer passed in, which must
// outlive them.
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"

namespace batchd::api::protobuf::internal {

enum class WireType : uint8_t {
  kVarint = 0,
  kFixed64 = 1,
  kLen = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5,
};

struct WireField {
  uint32_t number = 0;
  WireType wire = WireType::kVarint;
  uint64_t varint = 0;     // kVarint, kFixed64, kFixed32 (little-endian)
  std::string_view bytes;  // kLen
};

class WireReader {
 public:
  explicit WireReader(std::string_view buf) : buf_(buf) {}

  bool Done() const { return pos_ >= buf_.size(); }
  // Reads the next field. InvalidArgument on a truncated or over-long varint,
  // a length past the end, field number 0, or a group (unused by Kubernetes).
  absl::Status Next(WireField* f);
  // Reads one bare varint (packed repeated scalars).
  absl::Status NextVarint(uint64_t* v);

 private:
  bool ReadVarint(uint64_t* v);

  std::string_view buf_;
  size_t pos_ = 0;
};

}  // namespace batchd::api::protobuf::internal
