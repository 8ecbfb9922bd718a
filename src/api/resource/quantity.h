// Quantity: an exact fixed-point number with Kubernetes' `resource.Quantity`
// semantics — the same grammar (`100m`, `1.5Gi`, `1e3`), the same error
// messages, the same rounding (values are rounded up to 1n on parse;
// BinarySI values are capped at 2^63-1), the same remembered format
// (BinarySI / DecimalSI / DecimalExponent) and the same canonical `String()`
// ("0.1" → "100m", "1.5Gi" → "1536Mi", "1e3" → "1e3"). Like Kubernetes, an
// input already in canonical-looking form is echoed back as written
// (`+1` stays `+1`, `1E3` stays `1E3`).
//
// The value is exact: an int64 mantissa times 10^scale, promoted to an
// arbitrary-precision mantissa when it does not fit. No floating point.
// Deviation: inputs whose integer part would exceed 1000 decimal digits
// (e.g. `1e5000`) are rejected instead of being expanded.
//
// Thread-safety: a value type; const methods may run concurrently, mutation
// needs external synchronization. Copies share the immutable big mantissa.
#pragma once

#include <compare>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace batchd::api {

namespace resource_internal {
struct BigMantissa;  // Arbitrary-precision integer; defined in quantity.cc.
}  // namespace resource_internal

enum class QuantityFormat { kDecimalExponent, kBinarySI, kDecimalSI };

// Power-of-ten scales for `ScaledValue` / `FromScaled` / `RoundUp`.
inline constexpr int32_t kNano = -9;
inline constexpr int32_t kMicro = -6;
inline constexpr int32_t kMilli = -3;

class Quantity {
 public:
  using Format = QuantityFormat;

  // Zero, DecimalSI.
  Quantity() = default;

  // Parses Kubernetes' quantity syntax. Errors (InvalidArgument) carry
  // Kubernetes' messages, e.g. "quantities must match the regular expression
  // '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'". No whitespace allowed.
  static absl::StatusOr<Quantity> Parse(std::string_view s);
  // Parse for literals known to be valid; aborts on error.
  static Quantity MustParse(std::string_view s);
  // Decodes a JSON value as Kubernetes' UnmarshalJSON does: a string (outer
  // whitespace trimmed) or a bare number; null gives zero.
  static absl::StatusOr<Quantity> FromJson(const nlohmann::json& v);

  static Quantity FromInt(int64_t value, Format format = Format::kDecimalSI);
  static Quantity FromMilli(int64_t milli, Format format = Format::kDecimalSI);
  // value * 10^scale.
  static Quantity FromScaled(int64_t value, int32_t scale, Format format = Format::kDecimalSI);

  // Canonical form (or the original text when Kubernetes would keep it).
  std::string String() const;
  nlohmann::json ToJson() const { return String(); }

  Format format() const { return format_; }

  bool IsZero() const;
  int Sign() const;  // -1, 0 or 1.
  // -1, 0, 1 as this is less than, equal to or greater than `y` (by value).
  int Cmp(const Quantity& y) const;
  int CmpInt64(int64_t y) const;

  // In-place arithmetic. When this value is zero it takes `y`'s format.
  void Add(const Quantity& y);
  void Sub(const Quantity& y);
  void Neg();
  // Multiplies by `y`; returns false when the result's mantissa no longer
  // fits an int64 (the value stays exact either way).
  bool Mul(int64_t y);

  // ceil(|q| / 10^scale) with q's sign (rounded away from zero), saturated to
  // the int64 range.
  int64_t ScaledValue(int32_t scale) const;
  int64_t Value() const { return ScaledValue(0); }
  int64_t MilliValue() const { return ScaledValue(kMilli); }
  // The value when it is an integer that fits an int64.
  std::optional<int64_t> AsInt64() const;
  double AsApproximateDouble() const;
  // Rounds away from zero to a multiple of 10^scale; returns whether exact.
  bool RoundUp(int32_t scale);

  friend bool operator==(const Quantity& a, const Quantity& b) { return a.Cmp(b) == 0; }
  friend std::strong_ordering operator<=>(const Quantity& a, const Quantity& b) {
    int c = a.Cmp(b);
    return c < 0 ? std::strong_ordering::less
                 : (c > 0 ? std::strong_ordering::greater : std::strong_ordering::equal);
  }

 private:
  friend struct QuantityAccess;  // quantity.cc helpers.

  // Value = mantissa * 10^scale_, mantissa = big_ ? *big_ : small_.
  int64_t small_ = 0;
  int32_t scale_ = 0;
  std::shared_ptr<const resource_internal::BigMantissa> big_;
  Format format_ = Format::kDecimalSI;
  // The parsed text when Kubernetes would echo it; cleared by any mutation.
  std::string cached_;
};

std::string_view FormatName(QuantityFormat f);  // "BinarySI", ...

}  // namespace batchd::api
