#include "api/resource/amount.h"

namespace batchd::api {

Amount Amount::FromUnits(int64_t units) {
  int64_t milli = 0;
  if (__builtin_mul_overflow(units, int64_t{1000}, &milli)) {
    return units > 0 ? Unlimited() : MinusUnlimited();
  }
  return Amount(milli);
}

Amount Amount::FromQuantity(const Quantity& q) { return Amount(q.MilliValue()); }

Amount operator+(Amount a, Amount b) {
  if (a.IsUnlimited() || b.IsUnlimited()) {
    if (a.IsMinusUnlimited() || b.IsMinusUnlimited()) return Amount();
    return Amount::Unlimited();
  }
  if (a.IsMinusUnlimited() || b.IsMinusUnlimited()) return Amount::MinusUnlimited();
  int64_t sum = 0;
  if (__builtin_add_overflow(a.milli_, b.milli_, &sum)) {
    return a.milli_ > 0 ? Amount::Unlimited() : Amount::MinusUnlimited();
  }
  return Amount(sum);
}

Amount Amount::operator-() const {
  if (IsUnlimited()) return MinusUnlimited();
  if (IsMinusUnlimited()) return Unlimited();
  return Amount(-milli_);
}

Amount operator-(Amount a, Amount b) { return a + (-b); }

std::string Amount::ToString() const {
  if (IsUnlimited()) return "unlimited";
  if (IsMinusUnlimited()) return "-unlimited";
  return ToQuantity().String();
}

Quantity Amount::ToQuantity(QuantityFormat format) const {
  return Quantity::FromMilli(milli_, format);
}

}  // namespace batchd::api
