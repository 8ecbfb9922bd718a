#include "api/resource/quantity.h"

#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace batchd::api {
namespace {

using F = QuantityFormat;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

Quantity Q(std::string_view s) { return Quantity::MustParse(s); }
Quantity Dec(int64_t m, int32_t exp, F f = F::kDecimalSI) {
  return Quantity::FromScaled(m, exp, f);
}

// Expected values from Kubernetes' quantity_test.go (TestQuantityParse).
struct ParseCase {
  std::string input;
  Quantity want;
  F format;
};

std::vector<ParseCase> ParseCases() {
  return {
      {"0", Dec(0, 0), F::kDecimalSI},
      {"0n", Dec(0, 0), F::kDecimalSI},
      {"0u", Dec(0, 0), F::kDecimalSI},
      {"0m", Dec(0, 0), F::kDecimalSI},
      {"0Ki", Dec(0, 0), F::kBinarySI},
      {"0k", Dec(0, 0), F::kDecimalSI},
      {"0Mi", Dec(0, 0), F::kBinarySI},
      {"0M", Dec(0, 0), F::kDecimalSI},
      {"0Gi", Dec(0, 0), F::kBinarySI},
      {"0G", Dec(0, 0), F::kDecimalSI},
      {"0Ti", Dec(0, 0), F::kBinarySI},
      {"0T", Dec(0, 0), F::kDecimalSI},
      {"1", Dec(1, 0), F::kDecimalSI},
      {"1Ki", Dec(1024, 0), F::kBinarySI},
      {"8Ki", Dec(8 * 1024, 0), F::kBinarySI},
      {"7Mi", Dec(7 * 1024 * 1024, 0), F::kBinarySI},
      {"6Gi", Dec(6LL << 30, 0), F::kBinarySI},
      {"5Ti", Dec(5LL << 40, 0), F::kBinarySI},
      {"4Pi", Dec(4LL << 50, 0), F::kBinarySI},
      {"3Ei", Dec(3LL << 60, 0), F::kBinarySI},
      {"10Ti", Dec(10LL << 40, 0), F::kBinarySI},
      {"100Ti", Dec(100LL << 40, 0), F::kBinarySI},
      {"5n", Dec(5, -9), F::kDecimalSI},
      {"4u", Dec(4, -6), F::kDecimalSI},
      {"3m", Dec(3, -3), F::kDecimalSI},
      {"9", Dec(9, 0), F::kDecimalSI},
      {"8k", Dec(8, 3), F::kDecimalSI},
      {"50k", Dec(5, 4), F::kDecimalSI},
      {"7M", Dec(7, 6), F::kDecimalSI},
      {"6G", Dec(6, 9), F::kDecimalSI},
      {"5T", Dec(5, 12), F::kDecimalSI},
      {"40T", Dec(4, 13), F::kDecimalSI},
      {"300T", Dec(3, 14), F::kDecimalSI},
      {"2P", Dec(2, 15), F::kDecimalSI},
      {"1E", Dec(1, 18), F::kDecimalSI},
      {"1E-3", Dec(1, -3), F::kDecimalExponent},
      {"1e3", Dec(1, 3), F::kDecimalExponent},
      {"1E6", Dec(1, 6), F::kDecimalExponent},
      {"1e9", Dec(1, 9), F::kDecimalExponent},
      {"1E12", Dec(1, 12), F::kDecimalExponent},
      {"1e15", Dec(1, 15), F::kDecimalExponent},
      {"1E18", Dec(1, 18), F::kDecimalExponent},
      {"1e14", Dec(1, 14), F::kDecimalExponent},
      {"1e13", Dec(1, 13), F::kDecimalExponent},
      {"100.035k", Dec(100035, 0), F::kDecimalSI},
      {"0.001", Dec(1, -3), F::kDecimalSI},
      {"0.0005k", Dec(5, -1), F::kDecimalSI},
      {"0.005", Dec(5, -3), F::kDecimalSI},
      {"0.05", Dec(5, -2), F::kDecimalSI},
      {"0.5", Dec(5, -1), F::kDecimalSI},
      {"0.00050k", Dec(5, -1), F::kDecimalSI},
      {"0.00500", Dec(5, -3), F::kDecimalSI},
      {"0.05000", Dec(5, -2), F::kDecimalSI},
      {"0.50000", Dec(5, -1), F::kDecimalSI},
      {"0.5e0", Dec(5, -1), F::kDecimalExponent},
      {"0.5e-1", Dec(5, -2), F::kDecimalExponent},
      {"0.5e-2", Dec(5, -3), F::kDecimalExponent},
      {"10.035M", Dec(10035, 3), F::kDecimalSI},
      {"1.2e3", Dec(12, 2), F::kDecimalExponent},
      {"1.3E+6", Dec(13, 5), F::kDecimalExponent},
      {"1.40e9", Dec(14, 8), F::kDecimalExponent},
      {"1.53E12", Dec(153, 10), F::kDecimalExponent},
      {"1.6e15", Dec(16, 14), F::kDecimalExponent},
      {"1.7E18", Dec(17, 17), F::kDecimalExponent},
      {"9.01", Dec(901, -2), F::kDecimalSI},
      {"8.1k", Dec(81, 2), F::kDecimalSI},
      {"7.123456M", Dec(7123456, 0), F::kDecimalSI},
      {"6.987654321G", Dec(6987654321, 0), F::kDecimalSI},
      {"5.444T", Dec(5444, 9), F::kDecimalSI},
      {"40.1T", Dec(401, 11), F::kDecimalSI},
      {"300.2T", Dec(3002, 11), F::kDecimalSI},
      {"2.5P", Dec(25, 14), F::kDecimalSI},
      {"1.01E", Dec(101, 16), F::kDecimalSI},
      // Things that saturate or round.
      {"3.001n", Dec(4, -9), F::kDecimalSI},
      {"1.1E-9", Dec(2, -9), F::kDecimalExponent},
      {"0.0000000001", Dec(1, -9), F::kDecimalSI},
      {"0.0000000005", Dec(1, -9), F::kDecimalSI},
      {"0.00000000050", Dec(1, -9), F::kDecimalSI},
      {"0.5e-9", Dec(1, -9), F::kDecimalExponent},
      {"0.9n", Dec(1, -9), F::kDecimalSI},
      {"0.00000012345", Dec(124, -9), F::kDecimalSI},
      {"0.00000012354", Dec(124, -9), F::kDecimalSI},
      {"9Ei", Dec(kMax, 0), F::kBinarySI},
      {"9223372036854775807Ki", Dec(kMax, 0), F::kBinarySI},
      {"12E", Dec(12, 18), F::kDecimalSI},
      // Fractional binary.
      {"100.035Ki", Dec(10243584, -2), F::kBinarySI},
      {"0.5Mi", Dec(512 * 1024, 0), F::kBinarySI},
      {"0.05Gi", Dec(536870912, -1), F::kBinarySI},
      {"0.025Ti", Dec(274877906944, -1), F::kBinarySI},
      // Things written by trolls.
      {"0.000000000001Ki", Dec(2, -9), F::kDecimalSI},  // Rounds up, changes format.
      {".001", Dec(1, -3), F::kDecimalSI},
      {".0001k", Dec(100, -3), F::kDecimalSI},
      {"1.", Dec(1, 0), F::kDecimalSI},
      {"1.G", Dec(1, 9), F::kDecimalSI},
  };
}

TEST(QuantityParseTest, KubernetesTable) {
  for (const ParseCase& c : ParseCases()) {
    SCOPED_TRACE(c.input);
    absl::StatusOr<Quantity> got = Quantity::Parse(c.input);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->Cmp(c.want), 0) << got->String() << " vs " << c.want.String();
    EXPECT_EQ(got->format(), c.format) << FormatName(got->format());
  }
}

TEST(QuantityParseTest, SignedVariants) {
  for (const ParseCase& c : ParseCases()) {
    SCOPED_TRACE(c.input);
    absl::StatusOr<Quantity> neg = Quantity::Parse("-" + c.input);
    ASSERT_TRUE(neg.ok()) << neg.status();
    Quantity want = c.want;
    want.Neg();
    EXPECT_EQ(neg->Cmp(want), 0) << neg->String();
    EXPECT_EQ(neg->format(), c.format);
    absl::StatusOr<Quantity> pos = Quantity::Parse("+" + c.input);
    ASSERT_TRUE(pos.ok()) << pos.status();
    EXPECT_EQ(pos->Cmp(c.want), 0);
    EXPECT_EQ(pos->format(), c.format);
  }
}

TEST(QuantityParseTest, Invalid) {
  const std::string kFormatWrong =
      "quantities must match the regular expression "
      "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
  struct Case {
    std::string input;
    std::string want;
  };
  std::vector<Case> cases = {
      {"", kFormatWrong},
      {"1.1.M", kFormatWrong},
      {"1+1.0M", kFormatWrong},
      {"0.1mi", "unable to parse quantity's suffix"},
      {"0.1am", kFormatWrong},
      {"aoeu", kFormatWrong},
      {".5i", "unable to parse quantity's suffix"},
      {"1i", "unable to parse quantity's suffix"},
      {"-3.01i", "unable to parse quantity's suffix"},
      {"-3.01e-", "unable to parse quantity's suffix"},
      {"1e4294967297", "unable to parse quantity's suffix"},
      {"1E2147483648", "unable to parse quantity's suffix"},
      {" 1", kFormatWrong},
      {"1 ", kFormatWrong},
      {"1.5.5", kFormatWrong},
      {"1Mb", kFormatWrong},
      {"e3", kFormatWrong},
      {"Mi", kFormatWrong},
      {"-", kFormatWrong},
      {"1e5000", "unable to parse numeric part of quantity"},
      {"-.e-10", "unable to parse numeric part of quantity"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("'" + c.input + "'");
    absl::StatusOr<Quantity> got = Quantity::Parse(c.input);
    ASSERT_FALSE(got.ok()) << got->String();
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(got.status().message(), c.want);
  }
}

// TestQuantityString: a value and format → canonical; the canonical text
// parses back to itself, and an alternate spelling canonicalizes to it.
TEST(QuantityStringTest, Canonical) {
  struct Case {
    Quantity in;
    std::string want;
    std::string alternate;
  };
  std::vector<Case> cases = {
      {Dec(1LL << 30, 0, F::kBinarySI), "1Gi", "1024Mi"},
      {Dec(300LL << 20, 0, F::kBinarySI), "300Mi", "307200Ki"},
      {Dec(6 * 1024, 0, F::kBinarySI), "6Ki", ""},
      {Dec(1001LL << 30, 0, F::kBinarySI), "1001Gi", "1025024Mi"},
      {Dec(1LL << 40, 0, F::kBinarySI), "1Ti", "1024Gi"},
      {Dec(5, 0, F::kBinarySI), "5", "5000m"},
      {Dec(500, -3, F::kBinarySI), "500m", "0.5"},
      {Dec(1, 9), "1G", "1000M"},
      {Dec(1000, 6), "1G", "0.001T"},
      {Dec(1000000, 3), "1G", ""},
      {Dec(1000000000, 0), "1G", ""},
      {Dec(1, -3), "1m", "1000u"},
      {Dec(80, -3), "80m", ""},
      {Dec(1080, -3), "1080m", "1.08"},
      {Dec(108, -2), "1080m", "1080000000n"},
      {Dec(10800, -4), "1080m", ""},
      {Dec(300, 6), "300M", ""},
      {Dec(1, 12), "1T", ""},
      {Dec(1, 18), "1E", ""},
      {Dec(1, 21), "1e21", "1000E"},
      {Dec(5, 21), "5e21", "5000E"},
      {Dec(1, 24), "1e24", "1000000E"},
      {Dec(1, 70, F::kBinarySI), "10e69", ""},
      {Dec(2, 70, F::kBinarySI), "20e69", ""},
      {Dec(1, 72, F::kBinarySI), "1e72", ""},
      {Dec(1234567, 6), "1234567M", ""},
      {Dec(1234567, -3, F::kBinarySI), "1234567m", ""},
      {Dec(3, 3), "3k", ""},
      {Dec(1025, 0, F::kBinarySI), "1025", ""},
      {Dec(0, 0), "0", ""},
      {Dec(0, 0, F::kBinarySI), "0", ""},
      {Dec(1, 9, F::kDecimalExponent), "1e9", ".001e12"},
      {Dec(1, -3, F::kDecimalExponent), "1e-3", "0.001e0"},
      {Dec(1, -9, F::kDecimalExponent), "1e-9", "1000e-12"},
      {Dec(80, -3, F::kDecimalExponent), "80e-3", ""},
      {Dec(300, 6, F::kDecimalExponent), "300e6", ""},
      {Dec(1, 12, F::kDecimalExponent), "1e12", ""},
      {Dec(1, 3, F::kDecimalExponent), "1e3", ""},
      {Dec(3, 3, F::kDecimalExponent), "3e3", ""},
      {Dec(0, 0, F::kDecimalExponent), "0", "00"},
      {Dec(1, -9), "1n", ""},
      {Dec(80, -9), "80n", ""},
      {Dec(1080, -9), "1080n", ""},
      {Dec(108, -8), "1080n", ""},
      {Dec(10800, -10), "1080n", ""},
      {Dec(1, -6), "1u", ""},
      {Dec(80, -6), "80u", ""},
      {Dec(1080, -6), "1080u", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.want);
    EXPECT_EQ(c.in.String(), c.want);
    EXPECT_EQ(Q(c.want).String(), c.want);
    if (!c.alternate.empty()) {
      EXPECT_EQ(Q(c.alternate).String(), c.want) << c.alternate;
    }
    if (c.in.IsZero()) continue;
    Quantity neg = c.in;
    neg.Neg();
    EXPECT_EQ(neg.String(), "-" + c.want);
  }
}

TEST(QuantityStringTest, BelowNanoAndBinaryEdges) {
  EXPECT_EQ(Dec(1, -12).String(), "1e-12");
  EXPECT_EQ(Dec(1, -10).String(), "100e-12");
  EXPECT_EQ(Dec(2000, 0, F::kBinarySI).String(), "2000");
  EXPECT_EQ(Dec(-2000, 0, F::kBinarySI).String(), "-2000");
  Quantity big = Q("1Ei");
  EXPECT_FALSE(big.Mul(1024));  // 2^70 leaves the int64 fast path.
  EXPECT_EQ(big.String(), "1180591620717411303424");
  EXPECT_EQ(Q(big.String()).Cmp(big), 0);
}

TEST(QuantityStringTest, ParseEmit) {
  struct Case {
    std::string in;
    std::string want;
  };
  std::vector<Case> cases = {
      // Kubernetes' TestQuantityParseEmit.
      {"1Ki", "1Ki"},
      {"1Mi", "1Mi"},
      {"1Gi", "1Gi"},
      {"1024Mi", "1Gi"},
      {"1000M", "1G"},
      {".001Ki", "1024m"},
      {".000001Ki", "1024u"},
      {".000000001Ki", "1024n"},
      {".000000000001Ki", "2n"},
      // The brief's examples and common spellings.
      {"0.1", "100m"},
      {"1000m", "1"},
      {"1.5Gi", "1536Mi"},
      {"1e3", "1e3"},
      {"1024Ki", "1Mi"},
      {"0.5Ki", "512"},
      {"1.5", "1500m"},
      {"500m", "500m"},
      {"2", "2"},
      {"128974848", "128974848"},
      {"129e6", "129e6"},
      {"129M", "129M"},
      {"123Mi", "123Mi"},
      {"9223372036854775807Ki", "9223372036854775807"},
      {"1n", "1n"},
      {"1u", "1u"},
      {"-5", "-5"},
      {"1.5.", "1500m"},
      // Kubernetes echoes canonical-looking input verbatim.
      {"+1", "+1"},
      {"1E3", "1E3"},
      {"01", "01"},
      {"10000", "10k"},
      {".", "0"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.in);
    absl::StatusOr<Quantity> q = Quantity::Parse(c.in);
    if (c.in == "1.5.") {
      EXPECT_FALSE(q.ok());  // A second dot is never valid.
      continue;
    }
    ASSERT_TRUE(q.ok()) << q.status();
    EXPECT_EQ(q->String(), c.want);
    EXPECT_EQ(q->ToJson(), nlohmann::json(c.want));
    if (q->IsZero() || c.want[0] == '+' || c.want[0] == '-' || c.want == "01") continue;
    EXPECT_EQ(Q("-" + c.in).String(), "-" + c.want);
  }
}

TEST(QuantityValueTest, RoundsAwayFromZero) {
  struct Case {
    std::string in;
    int64_t value;
    int64_t milli;
  };
  std::vector<Case> cases = {
      {"-.484785E-7466", -1, -1},
      {".484785E-7466", 1, 1},
      {"-.484785E-1", -1, -49},
      {".484785E-1", 1, 49},
      {"-0.0005", -1, -1},
      {"0.0005", 1, 1},
      {"-1500m", -2, -1500},
      {"1500m", 2, 1500},
      {"-9.5000000001Gi", -10200547329, -10200547328108},
      {"9.5000000001Gi", 10200547329, 10200547328108},
      {"-1", -1, -1000},
      {"1", 1, 1000},
      {"0", 0, 0},
      {"100m", 1, 100},
      {"1Gi", 1073741824, 1073741824000},
      {"9223372036854775807", kMax, kMax},  // MilliValue saturates.
      {"1e30", kMax, kMax},
      {"-1e30", kMin, kMin},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.in);
    Quantity q = Q(c.in);
    EXPECT_EQ(q.Value(), c.value);
    EXPECT_EQ(q.MilliValue(), c.milli);
  }
}

TEST(QuantityValueTest, ScaledValue) {
  struct Case {
    int32_t from;
    int32_t to;
    int64_t want;
  };
  std::vector<Case> cases = {
      {kNano, kNano, 1},
      {kNano, kMicro, 1},
      {kNano, kMilli, 1},
      {kNano, 0, 1},
      {kMicro, kNano, 1000},
      {kMicro, kMicro, 1},
      {kMicro, kMilli, 1},
      {kMicro, 0, 1},
      {kMilli, kNano, 1000 * 1000},
      {kMilli, kMicro, 1000},
      {kMilli, kMilli, 1},
      {kMilli, 0, 1},
      {0, kNano, 1000 * 1000 * 1000},
      {0, kMicro, 1000 * 1000},
      {0, kMilli, 1000},
      {0, 0, 1},
      {2, -2, 100 * 100},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.from) + "->" + std::to_string(c.to));
    EXPECT_EQ(Quantity::FromScaled(1, c.from).ScaledValue(c.to), c.want);
  }
}

TEST(QuantityConstructTest, NewAndMilli) {
  struct Case {
    Quantity q;
    std::string want;
  };
  std::vector<Case> cases = {
      {Quantity::FromMilli(1), "1m"},
      {Quantity::FromMilli(1000), "1"},
      {Quantity::FromMilli(1234000), "1234"},
      {Quantity::FromMilli(1024, F::kBinarySI), "1024m"},
      {Quantity::FromMilli(1000000, F::kDecimalExponent), "1e3"},
      {Quantity::FromMilli(1024 * 1024, F::kBinarySI), "1048576m"},
      {Quantity::FromInt(1), "1"},
      {Quantity::FromInt(1000), "1k"},
      {Quantity::FromInt(1234000), "1234k"},
      {Quantity::FromInt(1024, F::kBinarySI), "1Ki"},
      {Quantity::FromInt(1000000, F::kDecimalExponent), "1e6"},
      {Quantity::FromInt(1024 * 1024, F::kBinarySI), "1Mi"},
      {Quantity::FromScaled(1, kNano), "1n"},
      {Quantity::FromScaled(1000, kNano), "1u"},
      {Quantity::FromScaled(1000, kMicro), "1m"},
      {Quantity::FromScaled(0, kMilli), "0"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.want);
    EXPECT_EQ(c.q.String(), c.want);
  }
}

TEST(QuantityCmpTest, Table) {
  struct Case {
    Quantity a;
    Quantity b;
    int want;
  };
  std::vector<Case> cases = {
      {Q("0"), Q("0"), 0},
      {Q("100m"), Q("50m"), 1},
      {Q("50m"), Q("100m"), -1},
      {Q("10000T"), Q("100Gi"), 1},
      {Q("1"), Q("1000m"), 0},
      {Q("1Ki"), Q("1024"), 0},
      {Dec(901, -2), Dec(901, -2), 0},
      {Dec(90, -1), Dec(901, -2), -1},
      {Dec(901, -2), Dec(900, -2), 1},
      {Dec(0, 1), Dec(0, -1), 0},
      {Dec(800, -3), Dec(1, 0), -1},
      {Dec(800, -3), Dec(79, -2), 1},
      {Dec(kMax, 0), Dec(1, -1), 1},
      {Dec(kMax, 1), Dec(1, 0), 1},
      {Dec(kMax, 1), Dec(1, 1), 1},
      {Dec(kMax, -16), Dec(1, 3), -1},
      {Dec(kMin, 0), Dec(0, 0), -1},
      {Dec(kMin, -18), Dec(-1, 0), -1},
      {Dec(kMin, -19), Dec(-1, 0), 1},
      {Dec(1000000000000000000, -17), Dec(1, 1), 0},
      {Dec(1000000000000000000, -17), Dec(-10, 0), 1},
      {Dec(-1000000000000000000, -17), Dec(-10, 0), 0},
      {Dec(1000000000000000001, -17), Dec(1, 1), 1},
      {Dec(999999999999999999, -17), Dec(1, 1), -1},
      {Q("1e100"), Q("9e99"), 1},
      {Q("-1e100"), Q("1"), -1},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(cases[i].a.Cmp(cases[i].b), cases[i].want);
    EXPECT_EQ(cases[i].b.Cmp(cases[i].a), -cases[i].want);
  }
  EXPECT_TRUE(Q("1") == Q("1000m"));
  EXPECT_TRUE(Q("999m") < Q("1"));
  EXPECT_EQ(Q("2Gi").CmpInt64(2LL << 30), 0);
}

TEST(QuantityArithmeticTest, AddSub) {
  struct Case {
    std::string name;
    Quantity a;
    Quantity b;
    bool sub;
    std::string want;
  };
  std::vector<Case> cases = {
      {"add same scale", Dec(10, 0), Dec(1, 1), false, "20"},
      {"add keeps lhs format", Dec(10, 0, F::kBinarySI), Dec(1, 0), false, "11"},
      {"zero takes rhs format", Quantity(), Q("1Gi"), false, "1Gi"},
      {"zero + 100m", Quantity(), Q("100m"), false, "100m"},
      {"100m + zero", Q("100m"), Quantity(), false, "100m"},
      {"1Gi + zero", Q("1Gi"), Q("0"), false, "1Gi"},
      {"mixed scales", Q("1.5"), Q("250m"), false, "1750m"},
      {"memory", Q("512Mi"), Q("512Mi"), false, "1Gi"},
      {"sub to zero", Dec(10, 0), Dec(1, 1), true, "0"},
      {"sub", Dec(10, 0), Dec(1, 0, F::kBinarySI), true, "9"},
      {"zero - x", Quantity(), Dec(50, 0), true, "-50"},
      {"zero - 1Gi", Q("0"), Q("1Gi"), true, "-1Gi"},
      {"overflow to big", Dec(kMax, 0), Dec(kMax, 0), false, "18446744073709551614"},
      {"far apart scales", Q("1000000000000000000000000000000"), Q("1n"), false,
       "1000000000000000000000000000000000000001n"},
      {"0 - mostNegative", Quantity(), Dec(kMin, 0), true, "9223372036854775808"},
      {"1 - mostNegative", Dec(1, 0), Dec(kMin, 0), true, "9223372036854775809"},
      {"10 - mostNegative", Dec(1, 1), Dec(kMin, 0), true, "9223372036854775818"},
      {"milli - mostNegative", Dec(1, kMilli), Dec(kMin, kMilli), true, "9223372036854775809m"},
      {"zero - mostNegative binary", Quantity(), Dec(kMin, 0, F::kBinarySI), true, "8Ei"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Quantity q = c.a;
    if (c.sub) {
      q.Sub(c.b);
    } else {
      q.Add(c.b);
    }
    EXPECT_EQ(q.String(), c.want);
  }
}

TEST(QuantityArithmeticTest, AddSubRoundTripAcrossScales) {
  Quantity q;
  std::vector<Quantity> added;
  uint64_t x = 88172645463325252ull;  // xorshift: deterministic pseudo-random values.
  for (int i = 0; i < 200; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    int64_t v = static_cast<int64_t>(x >> 1);
    added.push_back(Quantity::FromScaled(v, static_cast<int32_t>(v % 21) - 10));
    q.Add(added.back());
  }
  EXPECT_FALSE(q.IsZero());
  for (const Quantity& a : added) q.Sub(a);
  EXPECT_TRUE(q.IsZero()) << q.String();
}

TEST(QuantityArithmeticTest, NegMulRoundUp) {
  Quantity n = Dec(901, -2);
  n.Neg();
  EXPECT_EQ(n.String(), "-9010m");
  Quantity m = Dec(kMin, kMilli);
  m.Neg();
  EXPECT_EQ(m.String(), "9223372036854775808m");
  Quantity mul = Dec(10, 0);
  EXPECT_TRUE(mul.Mul(-10));
  EXPECT_EQ(mul.String(), "-100");
  Quantity overflow = Dec(kMax, 0);
  EXPECT_FALSE(overflow.Mul(2));
  EXPECT_EQ(overflow.String(), "18446744073709551614");

  struct Case {
    std::string in;
    int32_t scale;
    std::string want;
    bool exact;
  };
  std::vector<Case> cases = {
      {"9.01", -3, "9010m", true},    {"9.01", -2, "9010m", true}, {"9.01", -1, "9100m", false},
      {"9.01", 0, "10", false},       {"9.01", 1, "10", false},    {"9.01", 2, "100", false},
      {"-9.01", -1, "-9100m", false}, {"-9.01", 0, "-10", false},  {"-9.01", 2, "-100", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.in + "@" + std::to_string(c.scale));
    Quantity q = Q(c.in);
    EXPECT_EQ(q.RoundUp(c.scale), c.exact);
    EXPECT_EQ(q.String(), c.want);
  }
}

TEST(QuantityJsonTest, FromJson) {
  struct Case {
    nlohmann::json in;
    std::string want;
  };
  std::vector<Case> cases = {
      {" 1", "1"}, {"1 ", "1"},          {1, "1"},      {10, "10"},
      {-1, "-1"},  {"\t250m\n", "250m"}, {0.5, "500m"}, {nullptr, "0"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.in.dump());
    absl::StatusOr<Quantity> q = Quantity::FromJson(c.in);
    ASSERT_TRUE(q.ok()) << q.status();
    EXPECT_EQ(q->String(), c.want);
  }
  EXPECT_FALSE(Quantity::FromJson(true).ok());
  EXPECT_FALSE(Quantity::FromJson("1 Gi").ok());
}

TEST(QuantityMiscTest, AsInt64AndDouble) {
  EXPECT_EQ(Q("1Gi").AsInt64(), 1LL << 30);
  EXPECT_EQ(Q("1k").AsInt64(), 1000);
  EXPECT_EQ(Q("1500m").AsInt64(), std::nullopt);
  EXPECT_EQ(Q("1e30").AsInt64(), std::nullopt);
  EXPECT_DOUBLE_EQ(Q("1.1Ki").AsApproximateDouble(), 1126.4);
  EXPECT_DOUBLE_EQ(Q("2Gi").AsApproximateDouble(), 2147483648.0);
  EXPECT_EQ(Q("-3").Sign(), -1);
  EXPECT_TRUE(Q("0m").IsZero());
}

}  // namespace
}  // namespace batchd::api
