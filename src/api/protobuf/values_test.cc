#include "api/protobuf/internal/values.h"

#include <cstdint>
#include <limits>

#include "api/protobuf/internal/test_encoder.h"
#include "gtest/gtest.h"

namespace batchd::api::protobuf::internal {
namespace {

using testing::Encoder;

TEST(FormatGoDuration, MatchesGo) {
  struct Case {
    int64_t ns;
    std::string want;
  };
  const Case cases[] = {
      {0, "0s"},
      {1, "1ns"},
      {1500, "1.5\xC2\xB5s"},
      {1500000, "1.5ms"},
      {1000000000, "1s"},
      {1500000000, "1.5s"},
      {61000000000, "1m1s"},
      {3600000000000, "1h0m0s"},
      {3723004000000, "1h2m3.004s"},
      {-90000000000, "-1m30s"},
      {std::numeric_limits<int64_t>::min(), "-2562047h47m16.854775808s"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.ns);
    EXPECT_EQ(FormatGoDuration(c.ns), c.want);
  }
}

TEST(SanitizeUtf8, ReplacesInvalidBytesLikeGo) {
  struct Case {
    std::string in;
    std::string want;
  };
  const Case cases[] = {
      {"plain", "plain"},
      {"caf\xC3\xA9", "caf\xC3\xA9"},
      {"\xF0\x9F\x98\x80", "\xF0\x9F\x98\x80"},
      {"a\xFF"
       "b",
       "a\xEF\xBF\xBD"
       "b"},
      {"\xC3", "\xEF\xBF\xBD"},                                  // truncated
      {"\xC0\xAF", "\xEF\xBF\xBD\xEF\xBF\xBD"},                  // overlong
      {"\xED\xA0\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"},  // surrogate
      {std::string("a\0b", 3), std::string("a\0b", 3)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.in);
    EXPECT_EQ(SanitizeUtf8(c.in), c.want);
  }
}

TEST(SpecialTypes, DecodeToGoJson) {
  struct Case {
    std::string name;
    absl::StatusOr<Json> got;
    Json want;
  };
  const Case cases[] = {
      {"zero time", DecodeTime("", false), nullptr},
      {"time drops nanos", DecodeTime(Encoder().Int(1, 1714564800).Int(2, 5).str(), false),
       "2024-05-01T12:00:00Z"},
      {"epoch", DecodeTime(Encoder().Int(1, 0).str(), false), "1970-01-01T00:00:00Z"},
      {"negative seconds", DecodeTime(Encoder().Int(1, -1).str(), false), "1969-12-31T23:59:59Z"},
      {"micro time", DecodeTime(Encoder().Int(1, 1714564800).Int(2, 1500).str(), true),
       "2024-05-01T12:00:00.000001Z"},
      {"duration", DecodeDuration(Encoder().Int(1, 90000000000).str()), "1m30s"},
      {"quantity canonical", DecodeQuantity(Encoder().Str(1, "1000m").str()), "1"},
      {"quantity binary", DecodeQuantity(Encoder().Str(1, "1Gi").str()), "1Gi"},
      {"quantity absent", DecodeQuantity(""), "0"},
      {"int", DecodeIntOrString(Encoder().Int(1, 0).Int(2, 8080).str()), 8080},
      {"negative int", DecodeIntOrString(Encoder().Int(2, -1).str()), -1},
      {"string", DecodeIntOrString(Encoder().Int(1, 1).Str(3, "http").str()), "http"},
      {"raw json", DecodeEmbeddedJson(Encoder().Str(1, R"({"a":[1]})").str()),
       Json::parse(R"({"a":[1]})")},
      {"raw empty", DecodeEmbeddedJson(""), nullptr},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ASSERT_TRUE(c.got.ok()) << c.got.status();
    EXPECT_EQ(*c.got, c.want);
  }
}

TEST(SpecialTypes, RejectMalformed) {
  std::string deep(200, '[');
  deep += std::string(200, ']');
  struct Case {
    std::string name;
    absl::Status got;
  };
  const Case cases[] = {
      {"quantity", DecodeQuantity(Encoder().Str(1, "12x").str()).status()},
      {"quantity wire type", DecodeQuantity(Encoder().Int(1, 3).str()).status()},
      {"intorstring type", DecodeIntOrString(Encoder().Int(1, 2).str()).status()},
      {"time wire type", DecodeTime(Encoder().Str(1, "x").str(), false).status()},
      {"raw not json", DecodeEmbeddedJson(Encoder().Str(1, "\x0a\x01").str()).status()},
      {"raw too deep", DecodeEmbeddedJson(Encoder().Str(1, deep).str()).status()},
      {"truncated", DecodeDuration("\x08").status()},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.got.code(), absl::StatusCode::kInvalidArgument) << c.got;
  }
}

}  // namespace
}  // namespace batchd::api::protobuf::internal
