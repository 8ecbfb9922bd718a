#include <string>
#include <vector>

#include "api/patch/patch.h"
#include "gtest/gtest.h"

namespace batchd::api {
namespace {

TEST(ApplyJsonPatch, Rfc6902AppendixA) {
  struct Case {
    std::string name;
    std::string original;
    std::string ops;
    std::string want;
  };
  std::vector<Case> cases = {
      {"A.1 add member", R"({"foo":"bar"})", R"([{"op":"add","path":"/baz","value":"qux"}])",
       R"({"baz":"qux","foo":"bar"})"},
      {"A.2 add element", R"({"foo":["bar","baz"]})",
       R"([{"op":"add","path":"/foo/1","value":"qux"}])", R"({"foo":["bar","qux","baz"]})"},
      {"A.3 remove member", R"({"baz":"qux","foo":"bar"})", R"([{"op":"remove","path":"/baz"}])",
       R"({"foo":"bar"})"},
      {"A.4 remove element", R"({"foo":["bar","qux","baz"]})",
       R"([{"op":"remove","path":"/foo/1"}])", R"({"foo":["bar","baz"]})"},
      {"A.5 replace", R"({"baz":"qux","foo":"bar"})",
       R"([{"op":"replace","path":"/baz","value":"boo"}])", R"({"baz":"boo","foo":"bar"})"},
      {"A.6 move member", R"({"foo":{"bar":"baz","waldo":"fred"},"qux":{"corge":"grault"}})",
       R"([{"op":"move","from":"/foo/waldo","path":"/qux/thud"}])",
       R"({"foo":{"bar":"baz"},"qux":{"corge":"grault","thud":"fred"}})"},
      {"A.7 move element", R"({"foo":["all","grass","cows","eat"]})",
       R"([{"op":"move","from":"/foo/1","path":"/foo/3"}])",
       R"({"foo":["all","cows","eat","grass"]})"},
      {"A.8 test ok", R"({"baz":"qux","foo":["a",2,"c"]})",
       R"([{"op":"test","path":"/baz","value":"qux"},{"op":"test","path":"/foo/1","value":2}])",
       R"({"baz":"qux","foo":["a",2,"c"]})"},
      {"A.10 nested member", R"({"foo":"bar"})",
       R"([{"op":"add","path":"/child","value":{"grandchild":{}}}])",
       R"({"foo":"bar","child":{"grandchild":{}}})"},
      {"A.11 extra members ignored", R"({"foo":"bar"})",
       R"([{"op":"add","path":"/baz","value":"qux","xyz":123}])", R"({"foo":"bar","baz":"qux"})"},
      {"A.14 escape order", R"({"/":9,"~1":10})", R"([{"op":"test","path":"/~01","value":10}])",
       R"({"/":9,"~1":10})"},
      {"A.16 append array", R"({"foo":["bar"]})",
       R"([{"op":"add","path":"/foo/-","value":["abc","def"]}])",
       R"({"foo":["bar",["abc","def"]]})"},
      {"copy", R"({"a":{"b":1}})", R"([{"op":"copy","from":"/a","path":"/c"}])",
       R"({"a":{"b":1},"c":{"b":1}})"},
      {"replace root", R"({"a":1})", R"([{"op":"replace","path":"","value":[1]}])", "[1]"},
      {"add replaces member", R"({"a":1})", R"([{"op":"add","path":"/a","value":2}])",
       R"({"a":2})"},
      {"slash escape", R"({"a/b":1})", R"([{"op":"remove","path":"/a~1b"}])", "{}"},
      {"numeric equality", R"({"a":1})", R"([{"op":"test","path":"/a","value":1.0}])",
       R"({"a":1})"},
      {"move to same place", R"({"a":1})", R"([{"op":"move","from":"/a","path":"/a"}])",
       R"({"a":1})"},
      {"empty patch", R"({"a":1})", "[]", R"({"a":1})"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = ApplyJsonPatch(Json::parse(c.original), Json::parse(c.ops));
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, Json::parse(c.want));
  }
}

TEST(ApplyJsonPatch, Errors) {
  struct Case {
    std::string name;
    std::string original;
    std::string ops;
    absl::StatusCode want;
  };
  const auto kInvalid = absl::StatusCode::kInvalidArgument;
  std::vector<Case> cases = {
      {"A.9 test fails", R"({"baz":"qux"})", R"([{"op":"test","path":"/baz","value":"bar"}])",
       absl::StatusCode::kFailedPrecondition},
      {"A.12 missing parent", R"({"foo":"bar"})",
       R"([{"op":"add","path":"/baz/bat","value":"qux"}])", kInvalid},
      {"A.15 string vs number", R"({"/":9,"~1":10})",
       R"([{"op":"test","path":"/~01","value":"10"}])", absl::StatusCode::kFailedPrecondition},
      {"not an array", "{}", R"({"op":"add"})", kInvalid},
      {"op not object", "{}", "[1]", kInvalid},
      {"unknown op", "{}", R"([{"op":"frob","path":"/a"}])", kInvalid},
      {"missing path", "{}", R"([{"op":"add","value":1}])", kInvalid},
      {"missing value", "{}", R"([{"op":"add","path":"/a"}])", kInvalid},
      {"missing from", "{}", R"([{"op":"copy","path":"/a"}])", kInvalid},
      {"pointer without slash", "{}", R"([{"op":"add","path":"a","value":1}])", kInvalid},
      {"bad escape", "{}", R"([{"op":"add","path":"/~2","value":1}])", kInvalid},
      {"leading zero index", R"([1,2])", R"([{"op":"remove","path":"/01"}])", kInvalid},
      {"index past end", R"([1,2])", R"([{"op":"add","path":"/3","value":0}])", kInvalid},
      {"remove past end", R"([1,2])", R"([{"op":"remove","path":"/2"}])", kInvalid},
      {"dash only for add", R"([1])", R"([{"op":"remove","path":"/-"}])", kInvalid},
      {"remove missing", "{}", R"([{"op":"remove","path":"/a"}])", kInvalid},
      {"replace missing", "{}", R"([{"op":"replace","path":"/a","value":1}])", kInvalid},
      {"remove root", "{}", R"([{"op":"remove","path":""}])", kInvalid},
      {"move into child", R"({"a":{}})", R"([{"op":"move","from":"/a","path":"/a/b"}])",
       kInvalid},
      {"path through scalar", R"({"a":1})", R"([{"op":"add","path":"/a/b","value":1}])",
       kInvalid},
      {"negative index", R"([1])", R"([{"op":"remove","path":"/-1"}])", kInvalid},
      {"huge index", R"([1])", R"([{"op":"remove","path":"/99999999999999999999999"}])",
       kInvalid},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = ApplyJsonPatch(Json::parse(c.original), Json::parse(c.ops));
    ASSERT_FALSE(got.ok()) << got->dump();
    EXPECT_EQ(got.status().code(), c.want) << got.status();
  }
}

TEST(ApplyJsonPatch, AllOrNothing) {
  Json original = Json::parse(R"({"a":1})");
  auto got = ApplyJsonPatch(original, Json::parse(R"([{"op":"add","path":"/b","value":2},
      {"op":"test","path":"/a","value":5}])"));
  EXPECT_EQ(got.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(original, Json::parse(R"({"a":1})"));
}

TEST(ApplyJsonPatch, Bounds) {
  Json many = Json::array();
  for (size_t i = 0; i <= kMaxJsonPatchOperations; ++i) {
    many.push_back({{"op", "test"}, {"path", ""}, {"value", 1}});
  }
  EXPECT_EQ(ApplyJsonPatch(Json(1), many).status().code(), absl::StatusCode::kResourceExhausted);

  // Copying the document into itself doubles it each time.
  Json doubling = Json::array();
  for (int i = 0; i < 40; ++i) doubling.push_back({{"op", "copy"}, {"from", ""}, {"path", "/x/-"}});
  Json original = {{"x", Json::array()}};
  for (int i = 0; i < 100; ++i) original["x"].push_back(i);
  EXPECT_EQ(ApplyJsonPatch(original, doubling).status().code(),
            absl::StatusCode::kResourceExhausted);

  // Moving a value ever deeper into itself is bounded by depth.
  Json deepening = Json::array();
  for (int i = 0; i < 1100; ++i) {
    deepening.push_back({{"op", "copy"}, {"from", ""}, {"path", "/x"}});
  }
  EXPECT_EQ(ApplyJsonPatch(Json::object(), deepening).status().code(),
            absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace batchd::api
