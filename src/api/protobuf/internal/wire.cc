#include "api/protobuf/internal/wire.h"

#include "absl/strings/str_cat.h"

namespace batchd::api::protobuf::internal {

bool WireReader::ReadVarint(uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos_ >= buf_.size()) return false;
    uint8_t b = static_cast<uint8_t>(buf_[pos_++]);
    result |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (b < 0x80) {
      *v = result;
      return true;
    }
  }
  return false;  // More than 10 bytes: Go reports an integer overflow.
}

absl::Status WireReader::NextVarint(uint64_t* v) {
  if (!ReadVarint(v)) return absl::InvalidArgumentError("proto: truncated or overlong varint");
  return absl::OkStatus();
}

absl::Status WireReader::Next(WireField* f) {
  uint64_t tag = 0;
  if (!ReadVarint(&tag)) return absl::InvalidArgumentError("proto: truncated field tag");
  uint64_t number = tag >> 3;
  if (number == 0 || number > 0x1fffffff) {
    return absl::InvalidArgumentError(absl::StrCat("proto: illegal field number ", number));
  }
  f->number = static_cast<uint32_t>(number);
  f->wire = static_cast<WireType>(tag & 7);
  f->varint = 0;
  f->bytes = {};
  switch (f->wire) {
    case WireType::kVarint:
      if (!ReadVarint(&f->varint)) return absl::InvalidArgumentError("proto: truncated varint");
      return absl::OkStatus();
    case WireType::kFixed64:
    case WireType::kFixed32: {
      size_t n = f->wire == WireType::kFixed64 ? 8 : 4;
      if (buf_.size() - pos_ < n) return absl::InvalidArgumentError("proto: truncated fixed");
      for (size_t i = 0; i < n; ++i) {
        f->varint |= static_cast<uint64_t>(static_cast<uint8_t>(buf_[pos_ + i])) << (8 * i);
      }
      pos_ += n;
      return absl::OkStatus();
    }
    case WireType::kLen: {
      uint64_t len = 0;
      if (!ReadVarint(&len)) return absl::InvalidArgumentError("proto: truncated length");
      if (len > buf_.size() - pos_) {
        return absl::InvalidArgumentError("proto: length past the end of the message");
      }
      f->bytes = buf_.substr(pos_, static_cast<size_t>(len));
      pos_ += static_cast<size_t>(len);
      return absl::OkStatus();
    }
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("proto: unsupported wire type ", static_cast<int>(f->wire)));
  }
}

}  // namespace batchd::api::protobuf::internal
