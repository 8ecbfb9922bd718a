// The JSON value type every batchd object, request and file is held in:
// nlohmann's basic_json with one change, the comparison that orders an
// object's member names (see JsonKeyLess). Light enough for any header: it
// only forward-declares basic_json; a file that builds or reads values
// includes <nlohmann/json.hpp> (or api/field_error.h) as well.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace batchd::api {

// Orders member names exactly as std::less<std::string> does (bytes compared
// as unsigned char, a prefix before its extensions), so objects iterate and
// serialise in the same order as nlohmann::json's; it compares 8 bytes at a
// time in place instead of calling memcmp. Every lookup of a member walks the
// map's tree through this comparison, and most member names are shorter than
// 16 bytes: the call into memcmp was a tenth of a simulation's instructions
// (docs/benchmarks.md, "Object member names compared in place").
struct JsonKeyLess {
  using is_transparent = void;  // Looks up by string_view and literals too.
  bool operator()(std::string_view a, std::string_view b) const noexcept {
    const size_t n = a.size() < b.size() ? a.size() : b.size();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      uint64_t x, y;
      std::memcpy(&x, a.data() + i, 8);
      std::memcpy(&y, b.data() + i, 8);
      // Big-endian words compare as their bytes do, first byte first.
      if (x != y) return __builtin_bswap64(x) < __builtin_bswap64(y);
    }
    for (; i < n; ++i) {
      if (a[i] != b[i]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[i]);
    }
    return a.size() < b.size();
  }
};

// basic_json's object type: std::map with JsonKeyLess (the comparator and
// allocator basic_json passes are replaced by JsonKeyLess and the default).
template <class Key, class Value, class... Unused>
using JsonObjectMap = std::map<Key, Value, JsonKeyLess>;

using Json = nlohmann::basic_json<JsonObjectMap>;

}  // namespace batchd::api
