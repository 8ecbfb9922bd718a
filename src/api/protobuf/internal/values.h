// JSON forms of the apimachinery types with custom encodings: metav1.Time,
// MicroTime, Duration, FieldsV1, resource.Quantity, intstr.IntOrString,
// runtime.RawExtension; plus Go's replacement of invalid UTF-8.
//
// Pure functions, thread-safe; never throw. Each takes the bytes of the
// embedded message (what follows its length prefix on the wire).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "api/field_error.h"

namespace batchd::api::protobuf::internal {

// Deepest JSON nesting accepted inside a RawExtension / FieldsV1.
inline constexpr int kMaxEmbeddedJsonDepth = 150;

// {1: int64 seconds, 2: int32 nanos} -> "2006-01-02T15:04:05Z" (nanos
// dropped, as metav1.Time does) or with `micro` six fractional digits.
// An empty message is the zero time: JSON null.
absl::StatusOr<Json> DecodeTime(std::string_view msg, bool micro);
// {1: int64 nanoseconds} -> Go duration string ("1h2m3.5s").
absl::StatusOr<Json> DecodeDuration(std::string_view msg);
// {1: string} -> canonical quantity string; "0" when absent.
absl::StatusOr<Json> DecodeQuantity(std::string_view msg);
// {1: int64 type, 2: int32 intVal, 3: string strVal} -> number or string.
absl::StatusOr<Json> DecodeIntOrString(std::string_view msg);
// {1: bytes raw} holding JSON -> that JSON value; null when raw is empty.
absl::StatusOr<Json> DecodeEmbeddedJson(std::string_view msg);

// Go's time.Duration.String().
std::string FormatGoDuration(int64_t ns);
// Invalid UTF-8 sequences replaced by U+FFFD, as encoding/json does.
std::string SanitizeUtf8(std::string_view s);

}  // namespace batchd::api::protobuf::internal
