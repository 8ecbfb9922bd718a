#include "api/batch/v1/cron_schedule.h"

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/civil_time.h"

namespace batchd::api::batch_v1 {
namespace {

constexpr uint64_t kStarBit = uint64_t{1} << 63;

struct Bounds {
  uint64_t min;
  uint64_t max;
  std::vector<std::pair<std::string, uint64_t>> names;
};

const Bounds& MinuteBounds() {
  static const Bounds b{0, 59, {}};
  return b;
}
const Bounds& HourBounds() {
  static const Bounds b{0, 23, {}};
  return b;
}
const Bounds& DomBounds() {
  static const Bounds b{1, 31, {}};
  return b;
}
const Bounds& MonthBounds() {
  static const Bounds b{1, 12, {{"jan", 1}, {"feb", 2}, {"mar", 3}, {"apr", 4},
                                {"may", 5}, {"jun", 6}, {"jul", 7}, {"aug", 8},
                                {"sep", 9}, {"oct", 10}, {"nov", 11}, {"dec", 12}}};
  return b;
}
const Bounds& DowBounds() {
  static const Bounds b{0, 6, {{"sun", 0}, {"mon", 1}, {"tue", 2}, {"wed", 3},
                               {"thu", 4}, {"fri", 5}, {"sat", 6}}};
  return b;
}

uint64_t AllBits(const Bounds& b) {
  return (~(~uint64_t{0} << (b.max + 1)) & (~uint64_t{0} << b.min)) | kStarBit;
}

absl::Status Err(std::string msg) { return absl::InvalidArgumentError(std::move(msg)); }

// Go's strconv.Atoi followed by robfig's non-negative check.
absl::StatusOr<uint64_t> MustParseInt(absl::string_view s) {
  absl::string_view digits = s;
  bool negative = false;
  if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
    negative = digits[0] == '-';
    digits.remove_prefix(1);
  }
  const std::string atoi_prefix = absl::StrCat("failed to parse int from ", s,
                                               ": strconv.Atoi: parsing \"", s, "\": ");
  if (digits.empty()) return Err(atoi_prefix + "invalid syntax");
  int64_t v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return Err(atoi_prefix + "invalid syntax");
    if (v > (std::numeric_limits<int64_t>::max() - (c - '0')) / 10) {
      return Err(atoi_prefix + "value out of range");
    }
    v = v * 10 + (c - '0');
  }
  if (negative && v != 0) {
    return Err(absl::StrCat("negative number (-", v, ") not allowed: ", s));
  }
  return static_cast<uint64_t>(v);
}

absl::StatusOr<uint64_t> ParseIntOrName(absl::string_view s, const Bounds& b) {
  const std::string lower = absl::AsciiStrToLower(s);
  for (const auto& [name, value] : b.names) {
    if (name == lower) return value;
  }
  return MustParseInt(s);
}

uint64_t GetBits(uint64_t min, uint64_t max, uint64_t step) {
  if (step == 1) return ~(~uint64_t{0} << (max + 1)) & (~uint64_t{0} << min);
  uint64_t bits = 0;
  for (uint64_t i = min; i <= max; i += step) bits |= uint64_t{1} << i;
  return bits;
}

// One element of a comma list: `*`, `?`, `N`, `N-M`, each optionally `/step`.
absl::StatusOr<uint64_t> GetRange(absl::string_view expr, const Bounds& b) {
  std::vector<absl::string_view> range_and_step = absl::StrSplit(expr, '/');
  std::vector<absl::string_view> low_high = absl::StrSplit(range_and_step[0], '-');
  const bool single = low_high.size() == 1;
  uint64_t start = 0, end = 0, step = 1, extra = 0;
  if (low_high[0] == "*" || low_high[0] == "?") {
    start = b.min;
    end = b.max;
    extra = kStarBit;
  } else {
    auto s = ParseIntOrName(low_high[0], b);
    if (!s.ok()) return s.status();
    start = end = *s;
    if (low_high.size() == 2) {
      auto e = ParseIntOrName(low_high[1], b);
      if (!e.ok()) return e.status();
      end = *e;
    } else if (low_high.size() > 2) {
      return Err(absl::StrCat("too many hyphens: ", expr));
    }
  }
  if (range_and_step.size() == 2) {
    auto st = MustParseInt(range_and_step[1]);
    if (!st.ok()) return st.status();
    step = *st;
    if (single) end = b.max;  // "N/step" means "N-max/step".
    if (step > 1) extra = 0;
  } else if (range_and_step.size() > 2) {
    return Err(absl::StrCat("too many slashes: ", expr));
  }
  if (start < b.min) {
    return Err(absl::StrCat("beginning of range (", start, ") below minimum (", b.min, "): ", expr));
  }
  if (end > b.max) {
    return Err(absl::StrCat("end of range (", end, ") above maximum (", b.max, "): ", expr));
  }
  if (start > end) {
    return Err(absl::StrCat("beginning of range (", start, ") beyond end of range (", end,
                            "): ", expr));
  }
  if (step == 0) return Err(absl::StrCat("step of range should be a positive number: ", expr));
  return GetBits(start, end, step) | extra;
}

absl::StatusOr<uint64_t> GetField(absl::string_view field, const Bounds& b) {
  uint64_t bits = 0;
  for (absl::string_view expr : absl::StrSplit(field, ',', absl::SkipEmpty())) {
    auto bit = GetRange(expr, b);
    if (!bit.ok()) return bit.status();
    bits |= *bit;
  }
  return bits;
}

bool IsGoSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

std::vector<absl::string_view> GoFields(absl::string_view s) {
  std::vector<absl::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && IsGoSpace(s[i])) ++i;
    size_t j = i;
    while (j < s.size() && !IsGoSpace(s[j])) ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

// Go's time.Date in `tz`: for a civil time skipped or repeated by a
// transition it picks the offset the way Go does (look up the offset at the
// civil time read as UTC, then once more at the adjusted instant).
absl::Time GoDate(absl::CivilSecond cs, absl::TimeZone tz) {
  const int64_t as_utc = (cs - absl::CivilSecond(1970, 1, 1, 0, 0, 0));
  const int o1 = tz.At(absl::FromUnixSeconds(as_utc)).offset;
  const int o2 = tz.At(absl::FromUnixSeconds(as_utc - o1)).offset;
  return absl::FromUnixSeconds(as_utc - o2);
}

absl::Time TruncateTo(absl::Time t, int64_t unit_seconds) {
  int64_t s = absl::ToUnixSeconds(t);
  int64_t r = s % unit_seconds;
  if (r < 0) r += unit_seconds;
  return absl::FromUnixSeconds(s - r);
}

int GoWeekday(absl::CivilDay d) {
  switch (absl::GetWeekday(d)) {
    case absl::Weekday::sunday: return 0;
    case absl::Weekday::monday: return 1;
    case absl::Weekday::tuesday: return 2;
    case absl::Weekday::wednesday: return 3;
    case absl::Weekday::thursday: return 4;
    case absl::Weekday::friday: return 5;
    case absl::Weekday::saturday: return 6;
  }
  return 0;
}

bool Has(uint64_t bits, int64_t v) { return ((uint64_t{1} << v) & bits) != 0; }

bool DayMatches(uint64_t dom, uint64_t dow, int day, int weekday) {
  const bool dom_match = Has(dom, day);
  const bool dow_match = Has(dow, weekday);
  if ((dom & kStarBit) || (dow & kStarBit)) return dom_match && dow_match;
  return dom_match || dow_match;
}

// The search position of `Next`: a time, the zone it is read in, and
// whether any field has been advanced yet (robfig's `added`).
struct Cursor {
  absl::Time t;
  absl::TimeZone loc;
  bool added = false;
  absl::CivilSecond Civil() const { return absl::ToCivilSecond(t, loc); }
  void Set(int64_t y, int mo, int d, int h, int mi, int s) {
    t = GoDate(absl::CivilSecond(y, mo, d, h, mi, s), loc);
  }
};

// Each Advance* moves to the first matching value of its field and returns
// false when that wrapped into the next larger unit (start over).
bool AdvanceMonth(Cursor& c, uint64_t bits) {
  for (absl::CivilSecond cs = c.Civil(); !Has(bits, cs.month()); cs = c.Civil()) {
    if (!c.added) {
      c.added = true;
      c.Set(cs.year(), cs.month(), 1, 0, 0, 0);
      cs = c.Civil();
    }
    c.Set(cs.year(), cs.month() + 1, cs.day(), cs.hour(), cs.minute(), cs.second());
    if (c.Civil().month() == 1) return false;
  }
  return true;
}

bool AdvanceDay(Cursor& c, uint64_t dom, uint64_t dow) {
  for (absl::CivilSecond cs = c.Civil();
       !DayMatches(dom, dow, cs.day(), GoWeekday(absl::CivilDay(cs))); cs = c.Civil()) {
    if (!c.added) {
      c.added = true;
      c.Set(cs.year(), cs.month(), cs.day(), 0, 0, 0);
      cs = c.Civil();
    }
    c.Set(cs.year(), cs.month(), cs.day() + 1, cs.hour(), cs.minute(), cs.second());
    // A DST jump can move local midnight; pull back to midnight.
    const int hour = c.Civil().hour();
    if (hour != 0) c.t += hour > 12 ? absl::Hours(24 - hour) : absl::Hours(-hour);
    if (c.Civil().day() == 1) return false;
  }
  return true;
}

bool AdvanceHour(Cursor& c, uint64_t bits) {
  for (absl::CivilSecond cs = c.Civil(); !Has(bits, cs.hour()); cs = c.Civil()) {
    if (!c.added) {
      c.added = true;
      c.Set(cs.year(), cs.month(), cs.day(), cs.hour(), 0, 0);
    }
    c.t += absl::Hours(1);
    if (c.Civil().hour() == 0) return false;
  }
  return true;
}

// Minutes and seconds: absolute steps of `unit_seconds`.
bool AdvanceSmall(Cursor& c, uint64_t bits, int64_t unit_seconds,
                  int (*field)(const absl::CivilSecond&)) {
  while (!Has(bits, field(c.Civil()))) {
    if (!c.added) {
      c.added = true;
      c.t = TruncateTo(c.t, unit_seconds);
    }
    c.t += absl::Seconds(unit_seconds);
    if (field(c.Civil()) == 0) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<CronSchedule> CronSchedule::ParseDescriptor(absl::string_view spec,
                                                          CronSchedule out) {
  const uint64_t all_hour = AllBits(HourBounds());
  const uint64_t all_dom = AllBits(DomBounds()), all_month = AllBits(MonthBounds());
  const uint64_t all_dow = AllBits(DowBounds());
  out.minute_ = 1;
  out.hour_ = 1;
  out.dom_ = all_dom;
  out.month_ = all_month;
  out.dow_ = all_dow;
  if (spec == "@yearly" || spec == "@annually") {
    out.dom_ = 1 << 1;
    out.month_ = 1 << 1;
  } else if (spec == "@monthly") {
    out.dom_ = 1 << 1;
  } else if (spec == "@weekly") {
    out.dow_ = 1 << 0;
  } else if (spec == "@daily" || spec == "@midnight") {
  } else if (spec == "@hourly") {
    out.hour_ = all_hour;
  } else if (absl::StartsWith(spec, "@every ")) {
    const absl::string_view d = spec.substr(7);
    absl::Duration delay;
    if (!absl::ParseDuration(d, &delay) || delay == absl::InfiniteDuration() ||
        delay == -absl::InfiniteDuration()) {
      return Err(absl::StrCat("failed to parse duration ", spec, ": time: invalid duration \"",
                              d, "\""));
    }
    if (delay < absl::Seconds(1)) delay = absl::Seconds(1);
    out.every_ = absl::Seconds(absl::ToInt64Seconds(delay));
  } else {
    return Err(absl::StrCat("unrecognized descriptor: ", spec));
  }
  return out;
}

absl::StatusOr<CronSchedule> CronSchedule::Parse(absl::string_view spec) {
  if (spec.empty()) return Err("empty spec string");
  CronSchedule out;
  if (absl::StartsWith(spec, "TZ=") || absl::StartsWith(spec, "CRON_TZ=")) {
    const size_t eq = spec.find('=');
    const size_t sp = spec.find(' ');
    const absl::string_view name =
        sp == absl::string_view::npos ? spec.substr(eq + 1) : spec.substr(eq + 1, sp - eq - 1);
    absl::TimeZone tz;
    if (sp == absl::string_view::npos || sp < eq || !absl::LoadTimeZone(std::string(name), &tz)) {
      return Err(absl::StrCat("provided bad location ", name, ": unknown time zone ", name));
    }
    out.zone_ = tz;
    spec = absl::StripAsciiWhitespace(spec.substr(sp));
  }
  if (absl::StartsWith(spec, "@")) return ParseDescriptor(spec, out);
  const std::vector<absl::string_view> fields = GoFields(spec);
  if (fields.size() != 5) {
    return Err(absl::StrCat("expected exactly 5 fields, found ", fields.size(), ": [",
                            absl::StrJoin(fields, " "), "]"));
  }
  const Bounds* bounds[5] = {&MinuteBounds(), &HourBounds(), &DomBounds(), &MonthBounds(),
                             &DowBounds()};
  uint64_t* dest[5] = {&out.minute_, &out.hour_, &out.dom_, &out.month_, &out.dow_};
  for (int i = 0; i < 5; ++i) {
    auto bits = GetField(fields[i], *bounds[i]);
    if (!bits.ok()) return bits.status();
    *dest[i] = *bits;
  }
  return out;
}

absl::Time CronSchedule::Next(absl::Time after, absl::TimeZone tz) const {
  if (every_) {
    const absl::Duration sub = after - TruncateTo(after, 1);
    return after + *every_ - sub;
  }
  // Start at the next whole second.
  Cursor c{TruncateTo(after, 1) + absl::Seconds(1), zone_.value_or(tz)};
  const int64_t year_limit = c.Civil().year() + 5;
  for (;;) {  // Each `continue` is robfig's `goto WRAP`.
    if (c.Civil().year() > year_limit) return absl::InfiniteFuture();
    if (!AdvanceMonth(c, month_)) continue;
    if (!AdvanceDay(c, dom_, dow_)) continue;
    if (!AdvanceHour(c, hour_)) continue;
    if (!AdvanceSmall(c, minute_, 60, [](const absl::CivilSecond& cs) { return cs.minute(); })) continue;
    if (!AdvanceSmall(c, second_, 1, [](const absl::CivilSecond& cs) { return cs.second(); })) continue;
    return c.t;
  }
}

}  // namespace batchd::api::batch_v1
