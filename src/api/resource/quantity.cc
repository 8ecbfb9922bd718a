#include "api/resource/quantity.h"

#include <boost/multiprecision/cpp_int.hpp>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <utility>

#include "common/status_macros.h"

namespace batchd::api {

namespace resource_internal {
struct BigMantissa {
  boost::multiprecision::cpp_int v;
};
}  // namespace resource_internal

namespace {

using BigInt = boost::multiprecision::cpp_int;
using resource_internal::BigMantissa;

constexpr char kErrFormatWrong[] =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
constexpr char kErrNumeric[] = "unable to parse numeric part of quantity";
constexpr char kErrSuffix[] = "unable to parse quantity's suffix";
// Bound on the integer digits of a parsed value (see the header's deviation).
constexpr int64_t kMaxIntegerDigits = 1000;
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

constexpr int64_t kPow10[19] = {1,
                                10,
                                100,
                                1000,
                                10000,
                                100000,
                                1000000,
                                10000000,
                                100000000,
                                1000000000,
                                10000000000,
                                100000000000,
                                1000000000000,
                                10000000000000,
                                100000000000000,
                                1000000000000000,
                                10000000000000000,
                                100000000000000000,
                                1000000000000000000};

// An exact decimal m * 10^e.
struct Dec {
  BigInt m;
  int64_t e = 0;
};

BigInt Pow10Big(int64_t n) {
  return boost::multiprecision::pow(BigInt(10), static_cast<unsigned>(n));
}

bool MulOverflow(int64_t a, int64_t b, int64_t* out) { return __builtin_mul_overflow(a, b, out); }
bool AddOverflow(int64_t a, int64_t b, int64_t* out) { return __builtin_add_overflow(a, b, out); }

// Number of decimal digits of |m| (m != 0).
int64_t DigitCount(const BigInt& m) {
  BigInt a = abs(m);
  return static_cast<int64_t>(a.str().size());
}

int SignOf(const BigInt& m) { return m.sign(); }

// Compares two exact decimals without expanding wildly different exponents.
int CmpDec(const Dec& a, const Dec& b) {
  int sa = SignOf(a.m), sb = SignOf(b.m);
  if (sa != sb) return sa < sb ? -1 : 1;
  if (sa == 0) return 0;
  int64_t oa = DigitCount(a.m) + a.e, ob = DigitCount(b.m) + b.e;
  if (oa != ob) return (oa < ob ? -1 : 1) * sa;
  BigInt x = a.m, y = b.m;
  if (a.e > b.e) x *= Pow10Big(a.e - b.e);
  if (b.e > a.e) y *= Pow10Big(b.e - a.e);
  return x < y ? -1 : (x > y ? 1 : 0);
}

Dec AddDec(const Dec& a, const Dec& b) {
  if (a.m == 0) return b;
  if (b.m == 0) return a;
  int64_t e = std::min(a.e, b.e);
  BigInt x = a.m * Pow10Big(a.e - e);
  BigInt y = b.m * Pow10Big(b.e - e);
  return Dec{x + y, e};
}

// Divides |m| by 10^k rounding away from zero, keeping the sign. Sets
// `*exact` to whether nothing was lost.
BigInt DivPow10AwayFromZero(const BigInt& m, int64_t k, bool* exact) {
  if (k <= 0) {
    *exact = true;
    return m * Pow10Big(-k);
  }
  BigInt a = abs(m);
  if (DigitCount(a) < k) {
    *exact = a == 0;
    return BigInt(m.sign());
  }
  BigInt d = Pow10Big(k);
  BigInt q = a / d;
  *exact = (q * d == a);
  if (!*exact) q += 1;
  return m.sign() < 0 ? BigInt(-q) : q;
}

int64_t SaturateToInt64(const BigInt& v) {
  if (v > kInt64Max) return kInt64Max;
  if (v < kInt64Min) return kInt64Min;
  return v.convert_to<int64_t>();
}

struct Scanned {
  bool positive = true;
  std::string_view num;    // Integer digits without leading zeros (may be empty).
  std::string_view denom;  // Fraction digits.
  std::string_view suffix;
  bool any_digit = false;
};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The scanner of Kubernetes' grammar: sign, digits, optional fraction, then a
// suffix of `[eEinumkKMGTP]*[-+]?[0-9]*`.
absl::StatusOr<Scanned> Scan(std::string_view s) {
  Scanned out;
  size_t pos = 0;
  const size_t end = s.size();
  if (pos < end && (s[0] == '-' || s[0] == '+')) {
    out.positive = s[0] != '-';
    ++pos;
  }
  while (pos < end && s[pos] == '0') {
    ++pos;
    out.any_digit = true;
  }
  // Deliberate deviation: Kubernetes' scanner reads a missing number ("e3",
  // "Mi", "-") as 0, although its documented grammar needs one; batchd
  // follows the grammar and rejects those.
  if (!out.any_digit && (pos == end || (!IsDigit(s[pos]) && s[pos] != '.'))) {
    return absl::InvalidArgumentError(kErrFormatWrong);
  }
  if (pos == end) return out;
  size_t start = pos;
  while (pos < end && IsDigit(s[pos])) ++pos;
  out.num = s.substr(start, pos - start);
  out.any_digit = out.any_digit || !out.num.empty();
  if (pos == end) return out;
  if (s[pos] == '.') {
    start = ++pos;
    while (pos < end && IsDigit(s[pos])) ++pos;
    out.denom = s.substr(start, pos - start);
    out.any_digit = out.any_digit || !out.denom.empty();
    if (pos == end) return out;
  }
  const size_t suffix_start = pos;
  while (pos < end && std::string_view("eEinumkKMGTP").find(s[pos]) != std::string_view::npos) {
    ++pos;
  }
  if (pos < end && (s[pos] == '-' || s[pos] == '+')) ++pos;
  while (pos < end && IsDigit(s[pos])) ++pos;
  if (pos != end) return absl::InvalidArgumentError(kErrFormatWrong);
  out.suffix = s.substr(suffix_start);
  return out;
}

struct Suffix {
  int base = 10;
  int32_t exponent = 0;
  QuantityFormat format = QuantityFormat::kDecimalSI;
};

std::optional<Suffix> Interpret(std::string_view suf) {
  static constexpr std::pair<std::string_view, int32_t> kDecimal[] = {
      {"n", -9}, {"u", -6}, {"m", -3}, {"", 0},   {"k", 3},
      {"M", 6},  {"G", 9},  {"T", 12}, {"P", 15}, {"E", 18}};
  static constexpr std::pair<std::string_view, int32_t> kBinary[] = {
      {"Ki", 10}, {"Mi", 20}, {"Gi", 30}, {"Ti", 40}, {"Pi", 50}, {"Ei", 60}};
  for (const auto& [s, e] : kDecimal) {
    if (suf == s) return Suffix{10, e, QuantityFormat::kDecimalSI};
  }
  for (const auto& [s, e] : kBinary) {
    if (suf == s) return Suffix{2, e, QuantityFormat::kBinarySI};
  }
  if (suf.size() > 1 && (suf[0] == 'e' || suf[0] == 'E')) {
    std::string_view digits = suf.substr(1);
    if (!digits.empty() && digits[0] == '+') digits.remove_prefix(1);  // Go's ParseInt allows '+'.
    int64_t v = 0;
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (ec != std::errc() || p != digits.data() + digits.size() || digits.empty() ||
        digits[0] == '+') {
      return std::nullopt;
    }
    constexpr int64_t kMax32 = std::numeric_limits<int32_t>::max();
    if (v > kMax32 || v < -kMax32) return std::nullopt;
    return Suffix{10, static_cast<int32_t>(v), QuantityFormat::kDecimalExponent};
  }
  return std::nullopt;
}

// Kubernetes keeps the input text as the canonical string when its int64
// fast path applies and the text already looks canonical. Returns whether
// the fast path applies; sets `*cacheable`.
bool FastPath(std::string_view num, std::string_view denom, const Suffix& suf, bool* cacheable) {
  *cacheable = false;
  int64_t len_num = static_cast<int64_t>(num.empty() ? 1 : num.size());
  int64_t len_denom = static_cast<int64_t>(denom.size());
  int64_t precision = 0;
  int64_t scale = 0;
  if (suf.format == QuantityFormat::kBinarySI) {
    precision = (suf.exponent >= 0 && denom.empty())
                    ? 15 - len_num - (int64_t{suf.exponent} * 3 / 10) - 1
                    : -1;
  } else {
    scale = suf.exponent;
    precision = 18 - (len_num + len_denom);
  }
  if (precision < 0) return false;
  scale -= len_denom;
  if (scale < kNano) return false;
  std::string shifted = num.empty() ? "0" : std::string(num);
  shifted += denom;
  int64_t value = 0;
  std::from_chars(shifted.data(), shifted.data() + shifted.size(), value);
  if (suf.format == QuantityFormat::kBinarySI) {
    *cacheable = suf.exponent % 10 == 0 && (value & 0x07) != 0;
  } else {
    bool ends_000 = shifted.size() >= 3 && shifted.compare(shifted.size() - 3, 3, "000") == 0;
    *cacheable = scale % 3 == 0 && !ends_000 && shifted[0] != '0';
  }
  return true;
}

}  // namespace

// Private access for the helpers below.
struct QuantityAccess {
  static Dec ToDec(const Quantity& q) {
    return Dec{q.big_ ? q.big_->v : BigInt(q.small_), q.scale_};
  }
  static void SetDec(Quantity& q, Dec d);
  static void SetSmall(Quantity& q, int64_t m, int32_t scale) {
    q.small_ = m;
    q.scale_ = scale;
    q.big_.reset();
  }
  static bool IsSmall(const Quantity& q) { return !q.big_; }
  static int64_t Small(const Quantity& q) { return q.small_; }
  static int32_t Scale(const Quantity& q) { return q.scale_; }
  static void SetCached(Quantity& q, std::string s) { q.cached_ = std::move(s); }
  static void SetFormatRaw(Quantity& q, QuantityFormat f) { q.format_ = f; }
  static absl::Status ComputeParsedValue(const Scanned& sc, const Suffix& suf, Quantity& q);
};

void QuantityAccess::SetDec(Quantity& q, Dec d) {
  if (d.m == 0) return SetSmall(q, 0, 0);
  if (d.m > kInt64Max || d.m < kInt64Min) {
    while (d.m % 10 == 0 && (d.m > kInt64Max || d.m < kInt64Min)) {
      d.m /= 10;
      ++d.e;
    }
  }
  int32_t scale = static_cast<int32_t>(std::clamp<int64_t>(d.e, std::numeric_limits<int32_t>::min(),
                                                           std::numeric_limits<int32_t>::max()));
  if (d.m <= kInt64Max && d.m >= kInt64Min) return SetSmall(q, d.m.convert_to<int64_t>(), scale);
  q.small_ = 0;
  q.scale_ = scale;
  q.big_ = std::make_shared<const BigMantissa>(BigMantissa{std::move(d.m)});
}

namespace {

// Rounds a positive exact decimal up to nano precision (Kubernetes rounds any
// requested amount up so that asking for something never yields nothing).
void RoundUpToNano(Dec& d) {
  if (d.e >= kNano || d.m == 0) return;
  bool exact = false;
  d.m = DivPow10AwayFromZero(d.m, kNano - d.e, &exact);
  d.e = kNano;
}

// The common case without big integers: at most 18 digits and a result
// that fits an int64 (no BinarySI cap, no sub-nano rounding left to do).
bool TrySmallParsedValue(const std::string& digits, int64_t e10, bool bump, const Suffix& suf,
                         bool positive, Quantity& q) {
  if (digits.size() > 18) return false;
  int64_t m = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), m);
  if (bump) m += 1;  // At most 18 nines + 1: still fits.
  if (suf.base == 2) {
    if (e10 < 0 || e10 > 18) return false;
    int64_t scaled = 0;
    if (MulOverflow(m, int64_t{1} << suf.exponent, &m) || MulOverflow(m, kPow10[e10], &scaled)) {
      return false;
    }
    m = scaled;
    e10 = 0;
  }
  QuantityAccess::SetSmall(q, positive ? m : -m, static_cast<int32_t>(e10));
  return true;
}

}  // namespace

absl::Status QuantityAccess::ComputeParsedValue(const Scanned& sc, const Suffix& suf, Quantity& q) {
  std::string digits(sc.num);
  digits += sc.denom;
  size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) {
    SetSmall(q, 0, 0);
    return absl::OkStatus();
  }
  digits.erase(0, first);
  int64_t e10 =
      (suf.base == 10 ? int64_t{suf.exponent} : 0) - static_cast<int64_t>(sc.denom.size());
  while (digits.back() == '0') {
    digits.pop_back();
    ++e10;
  }
  // Drop sub-nano decimal digits now (they only round up) so that long
  // fractions never reach big-integer parsing.
  bool bump = false;
  if (suf.base == 10 && e10 < kNano) {
    int64_t drop = kNano - e10;
    digits =
        drop >= static_cast<int64_t>(digits.size()) ? "0" : digits.substr(0, digits.size() - drop);
    bump = true;
    e10 = kNano;
  }
  int64_t digit_count = static_cast<int64_t>(digits.size());
  if (digit_count + e10 > kMaxIntegerDigits || digit_count > kMaxIntegerDigits + 9) {
    return absl::InvalidArgumentError(kErrNumeric);
  }
  if (TrySmallParsedValue(digits, e10, bump, suf, sc.positive, q)) return absl::OkStatus();
  Dec d{BigInt(digits), e10};
  if (bump) d.m += 1;
  if (suf.base == 2) {
    d.m <<= suf.exponent;
    RoundUpToNano(d);
    Dec max{BigInt(kInt64Max), 0};
    if (CmpDec(d, max) > 0) d = max;
    if (d.e < 0 && d.m < Pow10Big(-d.e)) SetFormatRaw(q, QuantityFormat::kDecimalSI);
  }
  if (!sc.positive) d.m = -d.m;
  SetDec(q, std::move(d));
  return absl::OkStatus();
}

std::string_view FormatName(QuantityFormat f) {
  switch (f) {
    case QuantityFormat::kBinarySI:
      return "BinarySI";
    case QuantityFormat::kDecimalSI:
      return "DecimalSI";
    case QuantityFormat::kDecimalExponent:
      return "DecimalExponent";
  }
  return "DecimalExponent";
}

absl::StatusOr<Quantity> Quantity::Parse(std::string_view str) {
  if (str.empty()) return absl::InvalidArgumentError(kErrFormatWrong);
  Quantity q;
  if (str == "0") {
    q.cached_ = "0";
    return q;
  }
  BATCHD_ASSIGN_OR_RETURN(Scanned sc, Scan(str));
  std::optional<Suffix> suf = Interpret(sc.suffix);
  if (!suf) return absl::InvalidArgumentError(kErrSuffix);
  bool cacheable = false;
  bool fast = FastPath(sc.num, sc.denom, *suf, &cacheable);
  // Kubernetes' slow path re-parses the number and needs at least one digit.
  if (!fast && !sc.any_digit) return absl::InvalidArgumentError(kErrNumeric);
  q.format_ = suf->format;
  BATCHD_RETURN_IF_ERROR(QuantityAccess::ComputeParsedValue(sc, *suf, q));
  if (cacheable) q.cached_ = std::string(str);
  return q;
}

Quantity Quantity::MustParse(std::string_view s) {
  absl::StatusOr<Quantity> q = Parse(s);
  if (!q.ok()) {
    std::fprintf(stderr, "Quantity::MustParse(\"%.*s\"): %s\n", static_cast<int>(s.size()),
                 s.data(), std::string(q.status().message()).c_str());
    std::abort();
  }
  return *std::move(q);
}

absl::StatusOr<Quantity> Quantity::FromJson(const nlohmann::json& v) {
  if (v.is_null()) return Quantity();
  if (v.is_string()) {
    std::string_view s = v.get_ref<const std::string&>();
    auto is_space = [](char c) {
      return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
    };
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    return Parse(s);
  }
  if (v.is_number_integer() || v.is_number_unsigned()) return Parse(v.dump());
  if (v.is_number_float()) return Parse(v.dump());
  return absl::InvalidArgumentError(kErrFormatWrong);
}

Quantity Quantity::FromInt(int64_t value, Format format) { return FromScaled(value, 0, format); }

Quantity Quantity::FromMilli(int64_t milli, Format format) {
  return FromScaled(milli, kMilli, format);
}

Quantity Quantity::FromScaled(int64_t value, int32_t scale, Format format) {
  Quantity q;
  q.small_ = value;
  q.scale_ = scale;
  q.format_ = format;
  return q;
}

// ---- Canonical formatting -------------------------------------------------

namespace {

std::string DecimalSuffix(int64_t exponent, QuantityFormat format) {
  if (format == QuantityFormat::kDecimalSI) {
    switch (exponent) {
      case -9:
        return "n";
      case -6:
        return "u";
      case -3:
        return "m";
      case 0:
        return "";
      case 3:
        return "k";
      case 6:
        return "M";
      case 9:
        return "G";
      case 12:
        return "T";
      case 15:
        return "P";
      case 18:
        return "E";
      default:
        break;  // No SI suffix: fall back to exponent notation.
    }
  }
  if (exponent == 0) return "";
  return "e" + std::to_string(exponent);
}

// Mantissa and exponent with all factors of ten moved into the exponent and
// the exponent lowered to a multiple of three ("1.1e5" → 110, 3).
std::pair<std::string, int64_t> CanonicalDecimalDigits(const Dec& in) {
  Dec d = in;
  while (d.m % 10 == 0) {
    d.m /= 10;
    ++d.e;
  }
  while (d.e % 3 != 0) {
    d.m *= 10;
    --d.e;
  }
  return {d.m.str(), d.e};
}

std::pair<std::string, int64_t> CanonicalDecimalDigitsSmall(int64_t m, int64_t e, bool* ok) {
  while (m % 10 == 0) {
    m /= 10;
    ++e;
  }
  int64_t r = e % 3;
  int64_t factor = (r == 1 || r == -2) ? 10 : ((r == 2 || r == -1) ? 100 : 1);
  *ok = !MulOverflow(m, factor, &m);
  e -= (factor == 10 ? 1 : (factor == 100 ? 2 : 0));
  return {std::to_string(m), e};
}

// Strips trailing decimal zeros; the value is an integer iff e >= 0 after.
Dec StripZeros(Dec d) {
  if (d.m == 0) return Dec{0, 0};
  while (d.m % 10 == 0) {
    d.m /= 10;
    ++d.e;
  }
  return d;
}

// BinarySI rendering of an integer value; nullopt when it needs a suffix
// beyond "Ei" (the caller falls back to exponent notation).
std::optional<std::string> BinaryString(const Dec& integer) {
  static constexpr std::string_view kSuffixes[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  BigInt n = integer.m * Pow10Big(integer.e);
  size_t k = 0;
  while (n % 1024 == 0) {
    if (k == 6) return std::nullopt;
    n /= 1024;
    ++k;
  }
  return n.str() + std::string(kSuffixes[k]);
}

// BinarySI rendering without big integers when the value is a small
// integer; nullopt sends the caller down the general path.
std::optional<std::string> SmallBinaryString(bool is_big, int64_t m, int64_t e) {
  if (is_big) return std::nullopt;
  while (m % 10 == 0) {
    m /= 10;
    ++e;
  }
  if (e < 0 || e > 18 || MulOverflow(m, kPow10[e], &m)) return std::nullopt;
  static constexpr std::string_view kSuffixes[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  size_t k = 0;
  while (m % 1024 == 0 && k < 6) {
    m /= 1024;
    ++k;
  }
  if (m % 1024 == 0) return std::nullopt;  // Beyond Ei: general path falls back.
  return std::to_string(m) + std::string(kSuffixes[k]);
}

}  // namespace

std::string Quantity::String() const {
  if (!cached_.empty()) return cached_;
  if (IsZero()) return "0";
  Format fmt = format_;
  if (fmt == Format::kBinarySI) {
    if (CmpInt64(-1024) > 0 && CmpInt64(1024) < 0) {
      fmt = Format::kDecimalSI;
    } else {
      if (std::optional<std::string> s = SmallBinaryString(big_ != nullptr, small_, scale_)) {
        return *s;
      }
      Dec d = StripZeros(QuantityAccess::ToDec(*this));
      if (d.e < 0) {
        fmt = Format::kDecimalSI;  // Not an integer: keep the precision.
      } else if (std::optional<std::string> s = BinaryString(d)) {
        return *s;
      } else {
        fmt = Format::kDecimalExponent;
      }
    }
  }
  if (!big_) {
    bool ok = false;
    auto [digits, e] = CanonicalDecimalDigitsSmall(small_, scale_, &ok);
    if (ok) return digits + DecimalSuffix(e, fmt);
  }
  auto [digits, e] = CanonicalDecimalDigits(QuantityAccess::ToDec(*this));
  return digits + DecimalSuffix(e, fmt);
}

// ---- Comparison and arithmetic ----------------------------------------------

bool Quantity::IsZero() const { return !big_ && small_ == 0; }

int Quantity::Sign() const {
  if (big_) return big_->v.sign();
  return (small_ > 0) - (small_ < 0);
}

int Quantity::Cmp(const Quantity& y) const {
  if (!big_ && !y.big_) {
    if (scale_ == y.scale_) return (small_ > y.small_) - (small_ < y.small_);
    int sa = Sign(), sb = y.Sign();
    if (sa != sb) return sa < sb ? -1 : 1;
    if (sa == 0) return 0;
    int64_t diff = int64_t{scale_} - y.scale_;
    int64_t aligned = 0;
    if (diff > 0 && diff <= 18 && !MulOverflow(small_, kPow10[diff], &aligned)) {
      return (aligned > y.small_) - (aligned < y.small_);
    }
    if (diff < 0 && -diff <= 18 && !MulOverflow(y.small_, kPow10[-diff], &aligned)) {
      return (small_ > aligned) - (small_ < aligned);
    }
  }
  return CmpDec(QuantityAccess::ToDec(*this), QuantityAccess::ToDec(y));
}

int Quantity::CmpInt64(int64_t y) const { return Cmp(FromInt(y)); }

void Quantity::Add(const Quantity& y) {
  cached_.clear();
  if (IsZero()) format_ = y.format_;
  if (!big_ && !y.big_) {
    if (y.small_ == 0) return;
    if (small_ == 0) {
      small_ = y.small_;
      scale_ = y.scale_;
      return;
    }
    int64_t a = small_, b = y.small_, sum = 0;
    int64_t diff = int64_t{scale_} - y.scale_;
    bool ok = diff == 0 || (diff > 0 && diff <= 18 && !MulOverflow(a, kPow10[diff], &a)) ||
              (diff < 0 && -diff <= 18 && !MulOverflow(b, kPow10[-diff], &b));
    if (ok && !AddOverflow(a, b, &sum)) {
      small_ = sum;
      scale_ = std::min(scale_, y.scale_);
      return;
    }
  }
  QuantityAccess::SetDec(*this, AddDec(QuantityAccess::ToDec(*this), QuantityAccess::ToDec(y)));
}

void Quantity::Sub(const Quantity& y) {
  Quantity neg = y;
  neg.Neg();
  Add(neg);
}

void Quantity::Neg() {
  cached_.clear();
  if (big_) {
    big_ = std::make_shared<const BigMantissa>(BigMantissa{-big_->v});
  } else if (small_ == kInt64Min) {
    QuantityAccess::SetDec(*this, Dec{-BigInt(small_), scale_});
  } else {
    small_ = -small_;
  }
}

bool Quantity::Mul(int64_t y) {
  cached_.clear();
  int64_t product = 0;
  if (!big_ && !MulOverflow(small_, y, &product)) {
    small_ = product;
    if (product == 0) scale_ = 0;
    return true;
  }
  Dec d = QuantityAccess::ToDec(*this);
  d.m *= y;
  QuantityAccess::SetDec(*this, std::move(d));
  return false;
}

int64_t Quantity::ScaledValue(int32_t scale) const {
  if (IsZero()) return 0;
  if (!big_) {
    int64_t delta = int64_t{scale_} - scale;
    int64_t r = 0;
    if (delta >= 0) {
      if (delta > 18 || MulOverflow(small_, kPow10[delta], &r)) {
        return small_ > 0 ? kInt64Max : kInt64Min;
      }
      return r;
    }
    if (-delta > 18) return small_ > 0 ? 1 : -1;
    int64_t d = kPow10[-delta];
    r = small_ / d;
    if (small_ % d != 0) r += small_ > 0 ? 1 : -1;
    return r;
  }
  Dec d = QuantityAccess::ToDec(*this);
  bool exact = false;
  return SaturateToInt64(DivPow10AwayFromZero(d.m, int64_t{scale} - d.e, &exact));
}

std::optional<int64_t> Quantity::AsInt64() const {
  if (!big_ && scale_ == 0) return small_;
  Dec d = StripZeros(QuantityAccess::ToDec(*this));
  if (d.e < 0 || d.e > 18) return d.m == 0 ? std::optional<int64_t>(0) : std::nullopt;
  BigInt v = d.m * Pow10Big(d.e);
  if (v > kInt64Max || v < kInt64Min) return std::nullopt;
  return v.convert_to<int64_t>();
}

double Quantity::AsApproximateDouble() const {
  double base = big_ ? big_->v.convert_to<double>() : static_cast<double>(small_);
  if (scale_ == 0) return base;
  return base * std::pow(10.0, static_cast<double>(scale_));
}

bool Quantity::RoundUp(int32_t scale) {
  if (!big_ && scale_ >= scale) return true;
  Dec d = QuantityAccess::ToDec(*this);
  if (d.e >= scale) return true;
  cached_.clear();
  bool exact = false;
  BigInt m = DivPow10AwayFromZero(d.m, int64_t{scale} - d.e, &exact);
  QuantityAccess::SetDec(*this, Dec{std::move(m), scale});
  return exact;
}

}  // namespace batchd::api
