// Amount: a resource amount as int64 milli-units, the currency of quota math
// (Kueue's `resources.Amount`). Exact, no floating point, and saturating:
// sums that would overflow clamp to `Unlimited()` (INT64_MAX milli) or
// `MinusUnlimited()` (INT64_MIN milli) instead of wrapping. `Unlimited`
// behaves as +infinity: Unlimited + x = Unlimited, Unlimited - finite =
// Unlimited, Unlimited - Unlimited = 0.
//
// The arithmetic itself is exported once on raw milli values
// (SaturatingAdd / SaturatingSub / SaturatingNegate): Amount's operators are
// these functions, and the admission core (queueing/), which keeps amounts as
// raw milli values in its dense per-flavor-resource arrays, calls them
// directly, so both share exactly one saturating arithmetic.
//
// Thread-safety: an immutable-by-value 8-byte type; safe to copy anywhere.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>
#include <string>

#include "api/resource/quantity.h"

namespace batchd::api {

// The sentinels as raw milli values: +unlimited and -unlimited.
inline constexpr int64_t kUnlimitedMilli = std::numeric_limits<int64_t>::max();
inline constexpr int64_t kMinusUnlimitedMilli = std::numeric_limits<int64_t>::min();

// a + b on milli values with Amount's semantics: an unlimited operand absorbs
// any finite one (Unlimited + x = Unlimited, MinusUnlimited + x =
// MinusUnlimited), Unlimited + MinusUnlimited = 0, and a finite sum that
// overflows clamps to the sentinel of its sign.
constexpr int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  const bool overflow = __builtin_add_overflow(a, b, &sum);
  // Fast path: two finite operands whose sum fits.
  if (!overflow && a != kUnlimitedMilli && b != kUnlimitedMilli && a != kMinusUnlimitedMilli &&
      b != kMinusUnlimitedMilli) {
    return sum;
  }
  if (a == kUnlimitedMilli || b == kUnlimitedMilli) {
    return a == kMinusUnlimitedMilli || b == kMinusUnlimitedMilli ? 0 : kUnlimitedMilli;
  }
  if (a == kMinusUnlimitedMilli || b == kMinusUnlimitedMilli) return kMinusUnlimitedMilli;
  return a > 0 ? kUnlimitedMilli : kMinusUnlimitedMilli;  // finite overflow
}

// -a: the sentinels swap (-Unlimited = MinusUnlimited), finite values negate.
constexpr int64_t SaturatingNegate(int64_t a) {
  if (a == kUnlimitedMilli) return kMinusUnlimitedMilli;
  if (a == kMinusUnlimitedMilli) return kUnlimitedMilli;
  return -a;
}

// a - b = a + (-b): Unlimited - finite = Unlimited, Unlimited - Unlimited = 0,
// finite - Unlimited = MinusUnlimited.
constexpr int64_t SaturatingSub(int64_t a, int64_t b) {
  return SaturatingAdd(a, SaturatingNegate(b));
}

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

  // Inline: quota math is on hot paths. See SaturatingAdd for the semantics.
  friend constexpr Amount operator+(Amount a, Amount b) {
    return Amount(SaturatingAdd(a.milli_, b.milli_));
  }
  friend constexpr Amount operator-(Amount a, Amount b) {
    return Amount(SaturatingSub(a.milli_, b.milli_));
  }
  constexpr Amount operator-() const { return Amount(SaturatingNegate(milli_)); }
  constexpr Amount& operator+=(Amount b) { return *this = *this + b; }
  constexpr Amount& operator-=(Amount b) { return *this = *this - b; }
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
