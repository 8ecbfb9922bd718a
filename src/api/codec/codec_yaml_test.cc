#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/codec/codec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace batchd::api {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ParseYaml, Scalars) {
  struct Case {
    std::string name;
    std::string body;
    Json want;
  };
  std::vector<Case> cases = {
      {"true", "v: true", true},
      {"yaml 1.1 yes", "v: yes", true},
      {"yaml 1.1 On", "v: On", true},
      {"yaml 1.1 n", "v: n", false},
      {"quoted yes", "v: 'yes'", "yes"},
      {"double quoted true", "v: \"true\"", "true"},
      {"int", "v: 42", 42},
      {"negative", "v: -7", -7},
      {"hex", "v: 0x1F", 31},
      {"octal", "v: 0755", 493},
      {"underscores", "v: 1_000", 1000},
      {"quoted int", "v: \"123\"", "123"},
      {"float", "v: 1.5", 1.5},
      {"integral float reads as int", "v: 1e3", 1000},
      {"uint64", "v: 18446744073709551615", Json(UINT64_MAX)},
      {"null", "v: null", nullptr},
      {"tilde", "v: ~", nullptr},
      {"empty", "v:", nullptr},
      {"quoted null", "v: 'null'", "null"},
      {"timestamp stays string", "v: 2024-01-02T03:04:05Z", "2024-01-02T03:04:05Z"},
      {"date stays string", "v: 2024-01-02", "2024-01-02"},
      {"version string", "v: 1.2.3", "1.2.3"},
      {"quantity", "v: 500m", "500m"},
      {"explicit str tag", "v: !!str 123", "123"},
      {"literal block", "v: |\n  a\n  b\n", "a\nb\n"},
      {"literal strip", "v: |-\n  a\n", "a"},
      {"folded", "v: >\n  a\n  b\n", "a b\n"},
      {"plain multi-line", "v: a\n  b", "a b"},
      {"utf8", "v: \xC3\xA9t\xC3\xA9", "\xC3\xA9t\xC3\xA9"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = ParseYaml(c.body);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, (Json{{"v", c.want}})) << got->dump();
  }
}

TEST(ParseYaml, Structures) {
  struct Case {
    std::string name;
    std::string body;
    Json want;
  };
  std::vector<Case> cases = {
      {"empty body", "", nullptr},
      {"comment only", "# nothing\n", nullptr},
      {"k8s list style", "a:\n- x: 1\n  w: 2\n- z\n",
       Json{{"a", {Json{{"x", 1}, {"w", 2}}, "z"}}}},
      {"y key is a bool (go-yaml v2)", "y: 1\nn: 2\n", Json{{"true", 1}, {"false", 2}}},
      {"flow", "{a: [1, 2], b: {c: d}}", Json{{"a", {1, 2}}, {"b", {{"c", "d"}}}}},
      {"bool and int keys", "yes: 1\n3: x\n", Json{{"true", 1}, {"3", "x"}}},
      {"anchor alias", "a: &x {k: v}\nb: *x\n", Json{{"a", {{"k", "v"}}}, {"b", {{"k", "v"}}}}},
      {"scalar alias", "a: &x 5\nb: [*x, *x]\n", Json{{"a", 5}, {"b", {5, 5}}}},
      {"merge key", "base: &b {x: 1, w: 2}\nd:\n  <<: *b\n  w: 3\n",
       Json{{"base", {{"x", 1}, {"w", 2}}}, {"d", {{"x", 1}, {"w", 3}}}}},
      {"merge keeps earlier explicit", "base: &b {x: 1}\nd:\n  x: 9\n  <<: *b\n",
       Json{{"base", {{"x", 1}}}, {"d", {{"x", 9}}}}},
      {"merge list", "a: &a {x: 1}\nb: &b {x: 2, w: 2}\nc:\n  <<: [*a, *b]\n",
       Json{{"a", {{"x", 1}}}, {"b", {{"x", 2}, {"w", 2}}}, {"c", {{"x", 1}, {"w", 2}}}}},
      {"quoted << is a key", "'<<': 1", Json{{"<<", 1}}},
      {"top-level list", "- 1\n- two\n", Json{1, "two"}},
      {"document marker", "---\na: 1\n", Json{{"a", 1}}},
      {"trailing empty document", "a: 1\n---\n", Json{{"a", 1}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = ParseYaml(c.body);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, c.want) << got->dump();
  }
}

std::string Nested(int depth) {
  std::string s;
  for (int i = 0; i < depth; ++i) s += "[";
  for (int i = 0; i < depth; ++i) s += "]";
  return s;
}

std::string BillionLaughs() {
  std::string s = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'j'; ++c) {
    std::string prev(1, static_cast<char>(c - 1));
    absl::StrAppend(&s, std::string(1, c), ": &", std::string(1, c), " [");
    for (int i = 0; i < 10; ++i) absl::StrAppend(&s, i ? ", *" : "*", prev);
    s += "]\n";
  }
  return s;
}

TEST(ParseYaml, Errors) {
  struct Case {
    std::string name;
    std::string body;
    std::string want_substr;
  };
  std::vector<Case> cases = {
      {"unterminated flow", "a: [1, 2", "invalid YAML: line"},
      {"bad indentation", "a:\n  b: 1\n c: 2\n", "invalid YAML"},
      {"tab indentation", "a:\n\tb: 1\n", "invalid YAML"},
      {"unknown alias", "a: *nope\n", "invalid YAML"},
      {"comma after flow (yaml-cpp loops)", "[1],", "malformed document"},
      {"comma after flow map", "{a: {b: c}}, d", "malformed document"},
      {"too deep", Nested(kMaxNestingDepth + 1), "maximum depth"},
      {"very deep", std::string(100000, '['), "invalid YAML"},
      {"deep block maps", [] {
         std::string s;
         for (int i = 0; i < 600; ++i) s += std::string(static_cast<size_t>(i), ' ') + "a:\n";
         return s;
       }(), "maximum depth"},
      {"billion laughs", BillionLaughs(), "expand to more than"},
      {"collection key", "? [a]\n: 1\n", "map keys"},
      {"null key", "~: 1\n", "unsupported map key"},
      {"infinity", "a: .inf\n", "cannot be represented"},
      {"two documents", "a: 1\n---\nb: 2\n", "single document"},
      {"bad merge", "a:\n  <<: 1\n", "merge"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = ParseYaml(c.body);
    ASSERT_FALSE(got.ok()) << got->dump();
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(got.status().message()), HasSubstr(c.want_substr));
  }
}

TEST(ParseYaml, MaxDepthAccepted) {
  auto got = ParseYaml(Nested(kMaxNestingDepth));
  EXPECT_TRUE(got.ok()) << got.status();
}

TEST(ParseYaml, AliasCannotExceedDepth) {
  std::string body = "a: &a " + Nested(300) + "\nb: " + std::string(200, '[') + "*a" +
                     std::string(200, ']') + "\n";
  auto got = ParseYaml(body);
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("maximum depth"));
}

TEST(ParseYaml, ReportsDuplicateFieldPaths) {
  std::vector<std::string> dups;
  auto got = ParseYaml(R"(metadata:
  name: a
  name: b
spec:
  template:
    spec:
      containers:
      - image: x
      - image: y
        image: z
)",
                       &dups);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(dups, ElementsAre("metadata.name", "spec.template.spec.containers[1].image"));
  EXPECT_EQ((*got)["metadata"]["name"], "b");
  EXPECT_EQ((*got)["spec"]["template"]["spec"]["containers"][1]["image"], "z");
}

TEST(ParseYamlDocuments, SplitsAndSkipsEmpty) {
  auto got = ParseYamlDocuments("a: 1\n---\n# only a comment\n---\nb: 2\n...\n---\n- 3\n");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(*got, ElementsAre(Json{{"a", 1}}, Json{{"b", 2}}, Json{3}));
  auto bad = ParseYamlDocuments("a: 1\n---\nb: [\n");
  EXPECT_FALSE(bad.ok());
}

TEST(ToYaml, KubernetesStyle) {
  Json job = Json::parse(R"({"apiVersion":"batch/v1","kind":"Job",
      "metadata":{"name":"pi","labels":{"a":"true","b":"123"}},
      "spec":{"backoffLimit":4,"template":{"spec":{"restartPolicy":"Never",
        "containers":[{"name":"c","command":["sh","-c","echo hi: there"],"env":[]}]}}}})");
  EXPECT_EQ(ToYaml(job), R"(apiVersion: batch/v1
kind: Job
metadata:
  labels:
    a: "true"
    b: "123"
  name: pi
spec:
  backoffLimit: 4
  template:
    spec:
      containers:
      - command:
        - sh
        - -c
        - 'echo hi: there'
        env: []
        name: c
      restartPolicy: Never
)");
}

TEST(ToYaml, Scalars) {
  struct Case {
    std::string name;
    Json value;
    std::string want;
  };
  std::vector<Case> cases = {
      {"plain", "abc", "abc\n"},
      {"empty string", "", "\"\"\n"},
      {"bool-like", "yes", "\"yes\"\n"},
      {"null-like", "null", "\"null\"\n"},
      {"number-like", "1.5", "\"1.5\"\n"},
      {"leading space", " a", "' a'\n"},
      {"quote inside", "it's: x", "'it''s: x'\n"},
      {"indicator", "*star", "'*star'\n"},
      {"control char", "a\x01", "\"a\\x01\"\n"},
      {"multi-line", "a\nb\n", "|\n  a\n  b\n"},
      {"multi-line leading space", " a\nb", "\" a\\nb\"\n"},
      {"null", nullptr, "null\n"},
      {"int", -5, "-5\n"},
      {"bool", true, "true\n"},
      {"empty map", Json::object(), "{}\n"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(ToYaml(c.value), c.want);
  }
}

TEST(ToYaml, RoundTrips) {
  std::vector<Json> values = {
      Json{{"s", {"true", "false", "yes", "No", "on", "y", "~", "null", "", "123", "0x1F", "1e3",
                  "1_000", ".inf", "-", "- a", "a: b", "a #b", "#c", "a:", ":a", "? x", "[x]",
                  "{x}", "'q'", "\"d\"", " lead", "trail ", "tab\there", "<<", "---", "...",
                  "x\ny", "x\n\n", "\nx", "\n", "caf\xC3\xA9", "\xE2\x80\xA8", "a\\b", "@x",
                  "%x", "!x", "&x", "|x", ">x", "2024-01-01", "500m", "1.2.3"}}},
      Json{{"nested", {{"list", {{{"a", 1}, {"b", {1, 2}}}, Json::array(), {{1, 2}, {3}}}}}}},
      Json{{"weird keys", {{"", 1}, {"true", 2}, {"1", 3}, {"a: b", 4}, {"x\ny", 5}, {"<<", 6}}}},
      Json{{"numbers", {0, -1, 1.5, -0.25, 1e100, INT64_MAX, INT64_MIN}}},
      Json{{"block in list", {"line1\nline2\n", {{"k", "v1\nv2"}}}}},
      Json::array({Json::array({Json::array({1})})}),
      Json{{std::string(2000, 'k'), {{"a", 1}}}, {std::string(1500, 'l'), {1, 2}},
           {std::string(1200, 'm'), "v"}, {"list", {{{std::string(1100, 'n'), 1}}}}},
  };
  for (const Json& v : values) {
    SCOPED_TRACE(v.dump());
    std::string yaml = ToYaml(v);
    auto back = ParseYaml(yaml);
    ASSERT_TRUE(back.ok()) << back.status() << "\n" << yaml;
    EXPECT_EQ(*back, v) << yaml;
  }
}

}  // namespace
}  // namespace batchd::api
