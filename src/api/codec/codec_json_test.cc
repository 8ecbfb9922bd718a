#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "api/codec/codec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace batchd::api {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ParseJson, Values) {
  struct Case {
    std::string name;
    std::string body;
    Json want;
  };
  std::vector<Case> cases = {
      {"object", R"({"a":1,"b":[true,null,"x"]})", Json{{"a", 1}, {"b", {true, nullptr, "x"}}}},
      {"int64", "9223372036854775807", Json(INT64_MAX)},
      {"float", "1.5", Json(1.5)},
      {"unicode", R"("\u00e9t\u00e9")", Json("\xC3\xA9t\xC3\xA9")},
      {"duplicate last wins", R"({"a":1,"a":2})", Json{{"a", 2}}},
      {"nested", R"({"a":{"b":{"c":[[1]]}}})", Json{{"a", {{"b", {{"c", {{1}}}}}}}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = ParseJson(c.body);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, c.want);
  }
}

TEST(ParseJson, Errors) {
  struct Case {
    std::string name;
    std::string body;
    std::string want_substr;
  };
  std::vector<Case> cases = {
      {"empty", "", "invalid JSON"},
      {"truncated", R"({"a":)", "invalid JSON at byte"},
      {"bad literal", R"({"a":tru})", "line 1"},
      {"trailing garbage", R"({} x)", "invalid JSON"},
      {"huge number", "1e400", "1e400"},
      {"too deep", std::string(kMaxNestingDepth + 1, '[') + std::string(kMaxNestingDepth + 1, ']'),
       "maximum depth"},
      {"very deep", std::string(1000000, '['), "maximum depth"},
      {"invalid utf8", "\"\xff\"", "invalid JSON"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = ParseJson(c.body);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(got.status().message()), HasSubstr(c.want_substr));
  }
}

TEST(ParseJson, MaxDepthAccepted) {
  auto got = ParseJson(std::string(kMaxNestingDepth, '[') + std::string(kMaxNestingDepth, ']'));
  EXPECT_TRUE(got.ok()) << got.status();
}

TEST(ParseJson, ReportsDuplicateFieldPaths) {
  std::vector<std::string> dups;
  auto got = ParseJson(R"({"metadata":{"name":"a","name":"b"},
      "spec":{"template":{"spec":{"containers":[{"image":"x"},{"image":"y","image":"z"}]}}},
      "kind":"Job","kind":"Job"})",
                       &dups);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(dups, ElementsAre("metadata.name", "spec.template.spec.containers[1].image", "kind"));
  EXPECT_EQ((*got)["spec"]["template"]["spec"]["containers"][1]["image"], "z");
  EXPECT_EQ((*got)["metadata"]["name"], "b");
}

TEST(ParseBody, MediaTypes) {
  struct Case {
    std::string name;
    std::string content_type;
    std::string body;
    absl::StatusCode want_code;
    Json want;
  };
  std::vector<Case> cases = {
      {"json", "application/json", R"({"a":1})", absl::StatusCode::kOk, Json{{"a", 1}}},
      {"json charset", "Application/JSON; charset=utf-8", R"({"a":1})", absl::StatusCode::kOk,
       Json{{"a", 1}}},
      {"merge patch", "application/merge-patch+json", R"({"a":1})", absl::StatusCode::kOk,
       Json{{"a", 1}}},
      {"strategic", "application/strategic-merge-patch+json", "[]", absl::StatusCode::kOk,
       Json::array()},
      {"empty type is json", "", "1", absl::StatusCode::kOk, Json(1)},
      {"yaml", "application/yaml", "a: 1\n", absl::StatusCode::kOk, Json{{"a", 1}}},
      {"apply patch", "application/apply-patch+yaml", "a: yes\n", absl::StatusCode::kOk,
       Json{{"a", true}}},
      {"yaml is not json", "application/json", "a: 1\n", absl::StatusCode::kInvalidArgument,
       nullptr},
      {"protobuf", "application/vnd.kubernetes.protobuf", "x", absl::StatusCode::kUnimplemented,
       nullptr},
      {"text", "text/plain", "x", absl::StatusCode::kUnimplemented, nullptr},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = ParseBody(c.body, c.content_type);
    EXPECT_EQ(got.status().code(), c.want_code) << got.status();
    if (got.ok()) {
      EXPECT_EQ(*got, c.want);
    }
  }
}

TEST(ToJson, CompactAndPretty) {
  Json v = {{"b", 1}, {"a", {1, "x"}}};
  EXPECT_EQ(ToJson(v), R"({"a":[1,"x"],"b":1})");
  EXPECT_EQ(ToJson(v, /*pretty=*/true), "{\n  \"a\": [\n    1,\n    \"x\"\n  ],\n  \"b\": 1\n}");
  // Invalid UTF-8 never throws.
  EXPECT_EQ(ToJson(Json("\xff")), "\"\xEF\xBF\xBD\"");
}

TEST(ToJson, RoundTrip) {
  Json v = {{"s", "a\"b\\c\n"}, {"n", -3}, {"f", 0.25}, {"l", {nullptr, false}}, {"o", Json::object()}};
  auto got = ParseJson(ToJson(v));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, v);
}

// DumpCompact is dump(), byte for byte, whatever the value holds.
TEST(DumpCompact, SameBytesAsDump) {
  const std::vector<Json> values = {
      nullptr, true, false, 0, -1, std::numeric_limits<int64_t>::min(),
      std::numeric_limits<int64_t>::max(), std::numeric_limits<uint64_t>::max(), 0.1, -0.0,
      1.0, 1e300, 2.5e-8, std::nan(""), "", "plain", "quote \" and \\ backslash",
      "tab\tnew\nline\r\b\f", std::string("nul\0in", 6), "\x01\x1f\x7f", "caf\u00e9 \u2603",
      Json::object(), Json::array(), Json::array({Json::object(), Json::array(), 1, "a"}),
      Json::parse(R"({"metadata":{"name":"a","labels":{"x/y":"z"},"uid":"u-1"},
                     "spec":{"template":{"spec":{"containers":[{"name":"c","image":"i",
                     "resources":{"requests":{"cpu":"1"}}}]}},"parallelism":3,"f":1.5},
                     "status":{"conditions":[{"type":"Complete","status":"True"}],"n":null}})")};
  for (const Json& v : values) {
    EXPECT_EQ(DumpCompact(v), v.dump());
    const Json nested = {{"k", v}, {"a", Json::array({v, v})}};
    EXPECT_EQ(DumpCompact(nested), nested.dump());
  }
  // Every byte dump() writes in a form of its own (and a UTF-8 sequence),
  // at every position of strings of 1 to 24 bytes: each lane of the 8-byte
  // scan and the tail.
  const std::vector<std::string> specials = {std::string(1, '\0'), "\x01", "\x1f", "\"",
                                             "\\",                   "\x7f", "\xc3\xa9"};
  for (const std::string& special : specials) {
    for (size_t len = 1; len <= 24; ++len) {
      for (size_t at = 0; at < len; ++at) {
        std::string text(len, 'a');
        text.replace(at, 1, special);
        const Json v = text;
        EXPECT_EQ(DumpCompact(v), v.dump()) << "len " << len << " at " << at;
      }
    }
  }
  // The neighbours of those bytes are printed as they are.
  const Json edges = std::string(" !#[]^~ !#[]^~ !#[]^~") + "\x20\x21\x23\x5b\x5d\x7e";
  EXPECT_EQ(DumpCompact(edges), edges.dump());
  const Json bad = std::string("\xff\xfe");  // Invalid UTF-8: both refuse it.
  EXPECT_THROW(bad.dump(), Json::type_error);
  EXPECT_THROW(DumpCompact(bad), Json::type_error);
}

}  // namespace
}  // namespace batchd::api
