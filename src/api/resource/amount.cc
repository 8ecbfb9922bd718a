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

std::string Amount::ToString() const {
  if (IsUnlimited()) return "unlimited";
  if (IsMinusUnlimited()) return "-unlimited";
  return ToQuantity().String();
}

Quantity Amount::ToQuantity(QuantityFormat format) const {
  return Quantity::FromMilli(milli_, format);
}

}  // namespace batchd::api
