#include "api/resource/amount.h"

#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace batchd::api {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST(AmountTest, FromQuantity) {
  struct Case {
    std::string in;
    int64_t milli;
  };
  std::vector<Case> cases = {
      {"1", 1000},     {"250m", 250},
      {"0.0001", 1},  // Rounds up.
      {"-0.0001", -1}, {"1Gi", 1073741824000},
      {"0", 0},        {"9223372036854775807", kMax},  // Saturates.
      {"1e40", kMax},  {"-1e40", kMin},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.in);
    EXPECT_EQ(Amount::FromQuantity(Quantity::MustParse(c.in)).milli(), c.milli);
  }
}

TEST(AmountTest, SaturatingArithmetic) {
  struct Case {
    std::string name;
    Amount a;
    Amount b;
    bool sub;
    Amount want;
  };
  const Amount inf = Amount::Unlimited();
  const Amount ninf = Amount::MinusUnlimited();
  std::vector<Case> cases = {
      {"plain add", Amount::FromMilli(1500), Amount::FromMilli(500), false,
       Amount::FromMilli(2000)},
      {"plain sub", Amount::FromMilli(1500), Amount::FromMilli(2000), true,
       Amount::FromMilli(-500)},
      {"overflow saturates", Amount::FromMilli(kMax - 1), Amount::FromMilli(5), false, inf},
      {"underflow saturates", Amount::FromMilli(kMin + 1), Amount::FromMilli(5), true, ninf},
      {"unlimited absorbs", inf, Amount::FromMilli(-5), false, inf},
      {"unlimited minus finite", inf, Amount::FromMilli(1000), true, inf},
      {"finite minus unlimited", Amount::FromMilli(1000), inf, true, ninf},
      {"unlimited minus unlimited", inf, inf, true, Amount()},
      {"minus unlimited absorbs", ninf, Amount::FromMilli(5), false, ninf},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Amount got = c.sub ? c.a - c.b : c.a + c.b;
    EXPECT_EQ(got, c.want) << got.milli();
  }
  Amount acc;
  acc += Amount::FromUnits(2);
  acc -= Amount::FromMilli(500);
  EXPECT_EQ(acc.milli(), 1500);
  EXPECT_EQ(Amount::FromUnits(kMax / 10), inf);
  EXPECT_EQ(Amount::FromUnits(kMin / 10), ninf);
}

TEST(AmountTest, CompareAndString) {
  EXPECT_LT(Amount::FromMilli(999), Amount::FromUnits(1));
  EXPECT_GT(Amount::Unlimited(), Amount::FromUnits(1000000000));
  EXPECT_EQ(Amount::FromMilli(1500).ToString(), "1500m");
  EXPECT_EQ(Amount::FromUnits(2).ToString(), "2");
  EXPECT_EQ(Amount::FromUnits(4000).ToString(), "4k");
  EXPECT_EQ(Amount::Unlimited().ToString(), "unlimited");
  EXPECT_EQ(Amount::MinusUnlimited().ToString(), "-unlimited");
  EXPECT_EQ(Amount::FromUnits(1LL << 30).ToQuantity(QuantityFormat::kBinarySI).String(), "1Gi");
}

}  // namespace
}  // namespace batchd::api
