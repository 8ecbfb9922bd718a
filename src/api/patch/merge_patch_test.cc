#include <string>
#include <vector>

#include "api/patch/patch.h"
#include "gtest/gtest.h"

namespace batchd::api {
namespace {

TEST(ApplyMergePatch, Rfc7386AppendixA) {
  struct Case {
    std::string original;
    std::string patch;
    std::string want;
  };
  std::vector<Case> cases = {
      {R"({"a":"b"})", R"({"a":"c"})", R"({"a":"c"})"},
      {R"({"a":"b"})", R"({"b":"c"})", R"({"a":"b","b":"c"})"},
      {R"({"a":"b"})", R"({"a":null})", R"({})"},
      {R"({"a":"b","b":"c"})", R"({"a":null})", R"({"b":"c"})"},
      {R"({"a":["b"]})", R"({"a":"c"})", R"({"a":"c"})"},
      {R"({"a":"c"})", R"({"a":["b"]})", R"({"a":["b"]})"},
      {R"({"a":{"b":"c"}})", R"({"a":{"b":"d","c":null}})", R"({"a":{"b":"d"}})"},
      {R"({"a":[{"b":"c"}]})", R"({"a":[1]})", R"({"a":[1]})"},
      {R"(["a","b"])", R"(["c","d"])", R"(["c","d"])"},
      {R"({"a":"b"})", R"(["c"])", R"(["c"])"},
      {R"({"a":"foo"})", "null", "null"},
      {R"({"a":"foo"})", R"("bar")", R"("bar")"},
      {R"({"e":null})", R"({"a":1})", R"({"e":null,"a":1})"},
      {R"([1,2])", R"({"a":"b","c":null})", R"({"a":"b"})"},
      {R"({})", R"({"a":{"bb":{"ccc":null}}})", R"({"a":{"bb":{}}})"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.original + " + " + c.patch);
    auto got = ApplyMergePatch(Json::parse(c.original), Json::parse(c.patch));
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, Json::parse(c.want));
  }
}

TEST(ApplyMergePatch, OriginalUnchanged) {
  Json original = Json::parse(R"({"a":{"b":1}})");
  auto got = ApplyMergePatch(original, Json::parse(R"({"a":{"b":null}})"));
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, Json::parse(R"({"a":{}})"));
  EXPECT_EQ(original, Json::parse(R"({"a":{"b":1}})"));
}

TEST(ApplyMergePatch, TooDeep) {
  Json patch = 1;
  for (int i = 0; i < kMaxPatchDepth + 5; ++i) patch = Json{{"a", std::move(patch)}};
  auto got = ApplyMergePatch(Json::object(), patch);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace batchd::api
