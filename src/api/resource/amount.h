// Amount: a resource amount as int64 milli-units, the currency of quota math
// (Kueue's `resources.Amount`). Exact, no floating point, and saturating:
// sums that would overflow clamp to `Unlimited()` (INT64_MAX milli) or
// `MinusUnlimited()` (INT64_MIN milli) instead of wrapping. `Unlimited`
// behaves as +infinity: Unlimited + x = Unlimited, Unlimited - finite =
// Unlimited, Unlimited - Unlimited = 0.
//
// Thread-safety: an immutable-by-value 8-byte type; safe to copy anywhere.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>
#include <string>

#include "api/resource/quantity.h"

namespace batchd::api {

class Amount {
 public:
  constexpr Amount() = default;

  static constexpr Amount FromMilli(int64_t milli) { return Amount(milli); }
  // `units` * 1000, saturating.
  static Amount FromUnits(int64_t units);
  static constexpr Amount Unlimited() { return Amount(std::numeric_limits<int64_t>::max()); }
  static constexpr Amount MinusUnlimited() { return Amount(std::numeric_limits<int64_t>::min()); }
  // ceil(q * 1000) (away from zero), saturating at the unlimited sentinels.
  static Amount FromQuantity(const Quantity& q);

  constexpr int64_t milli() const { return milli_; }
  constexpr bool IsUnlimited() const { return milli_ == std::numeric_limits<int64_t>::max(); }
  constexpr bool IsMinusUnlimited() const { return milli_ == std::numeric_limits<int64_t>::min(); }
  constexpr bool IsZero() const { return milli_ == 0; }

  friend Amount operator+(Amount a, Amount b);
  friend Amount operator-(Amount a, Amount b);
  Amount operator-() const;
  Amount& operator+=(Amount b) { return *this = *this + b; }
  Amount& operator-=(Amount b) { return *this = *this - b; }
  friend constexpr auto operator<=>(Amount a, Amount b) = default;

  // "unlimited", "-unlimited", or the canonical DecimalSI quantity ("1500m", "2").
  std::string ToString() const;
  // The amount as a Quantity in `format` (e.g. BinarySI for memory: "1Gi").
  Quantity ToQuantity(QuantityFormat format = QuantityFormat::kDecimalSI) const;

 private:
  constexpr explicit Amount(int64_t milli) : milli_(milli) {}
  int64_t milli_ = 0;
};

}  // namespace batchd::api
