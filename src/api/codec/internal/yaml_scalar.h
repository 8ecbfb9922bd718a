// Internal to api/codec: go-yaml v2's resolution of plain (unquoted) YAML
// scalars, shared by the decoder (what does `yes` mean?) and the encoder
// (must this string be quoted?). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace batchd::api::internal {

struct PlainScalar {
  enum class Kind { kString, kNull, kBool, kInt, kUint, kFloat, kNonFinite, kMergeKey };
  Kind kind = Kind::kString;
  bool b = false;
  int64_t i = 0;
  uint64_t u = 0;
  double f = 0;
};

// What a plain scalar with this text decodes to (YAML 1.1 as go-yaml v2):
// null: "" ~ null Null NULL; bools: y Y yes Yes YES true True TRUE on On ON
// and their negatives; ints with 0x/0o/0b/leading-0 octal and `_`
// separators; floats matching [-+]?(\.d+|d+(\.d*)?)([eE][-+]?d+)?; `.inf`
// and `.nan` (kNonFinite); `<<` (kMergeKey); anything else is a string.
PlainScalar ResolvePlain(std::string_view text);

// `s` with every invalid UTF-8 sequence replaced by U+FFFD (as Go does), so
// decoded strings can always be serialised.
std::string SanitizeUtf8(std::string_view s);

}  // namespace batchd::api::internal
