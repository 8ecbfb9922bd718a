#include "api/labels/selector.h"

#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace batchd::api::labels {
namespace {

using Labels = std::map<std::string, std::string>;

TEST(LabelSelectorParseTest, ValidCanonicalString) {
  struct Case {
    std::string in;
    std::string want;
  };
  std::vector<Case> cases = {
      {"", ""},
      {"x=a,y=b,z=c", "x=a,y=b,z=c"},
      {"x!=a,y=b", "x!=a,y=b"},
      {"x=,z= ", "x=,z="},
      {"x= ,z= ", "x=,z="},
      {"!x", "!x"},
      {"x>1", "x>1"},
      {"x>1,z<5", "x>1,z<5"},
      {"x==a", "x==a"},
      {"y,x", "x,y"},
      {"x in (b,a,b)", "x in (a,b)"},
      {"x notin ( b , a )", "x notin (a,b)"},
      {"x in (in,notin)", "x in (in,notin)"},
      {"w in ()", "w in ()"},
      {"a in (,b)", "a in (,b)"},
      {"a in (b,,c)", "a in (,b,c)"},
      {"kueue.x-k8s.io/queue-name=lq,app in (web)", "app in (web),kueue.x-k8s.io/queue-name=lq"},
      {"  env  =  prod  ", "env=prod"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("'" + c.in + "'");
    absl::StatusOr<LabelSelector> s = LabelSelector::Parse(c.in);
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(s->String(), c.want);
    absl::StatusOr<LabelSelector> again = LabelSelector::Parse(s->String());
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(again->String(), c.want);
  }
}

TEST(LabelSelectorParseTest, Errors) {
  struct Case {
    std::string in;
    std::string want;  // Exact message, or a prefix when `prefix_only`.
    bool prefix_only = false;
  };
  std::vector<Case> cases = {
      {",x", "found ',', expected: !, identifier, or 'end of string'"},
      {"x,", "found '', expected: identifier after ','"},
      {"x (", "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt"},
      {"a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"},
      {"!x=a", "found '=', expected: ',' or 'end of string'"},
      {"x==a==b", "found '==', expected: ',' or 'end of string'"},
      {"x in a", "unable to parse requirement: found 'a' expected: '('"},
      {"x in (a", "unable to parse requirement: found '', expected: ',' or ')'"},
      {"x in (a b)", "unable to parse requirement: found 'b', expected: ',' or ')'"},
      {"x=(", "unable to parse requirement: found '(', expected: identifier"},
      {"x<a",
       "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, "
       "the value must be an integer"},
      {"-x=a",
       "unable to parse requirement: <nil>: Invalid value: \"-x\": name part must consist of "
       "alphanumeric characters",
       true},
      {"x=-a",
       "unable to parse requirement: values[0][x]: Invalid value: \"-a\": a valid label must be "
       "an empty string",
       true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("'" + c.in + "'");
    absl::StatusOr<LabelSelector> s = LabelSelector::Parse(c.in);
    ASSERT_FALSE(s.ok()) << s->String();
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    if (c.prefix_only) {
      EXPECT_THAT(std::string(s.status().message()), ::testing::StartsWith(c.want));
    } else {
      EXPECT_EQ(s.status().message(), c.want);
    }
  }
}

TEST(LabelSelectorMatchTest, QueryForm) {
  struct Case {
    std::string selector;
    Labels labels;
    bool want;
  };
  std::vector<Case> cases = {
      {"", {}, true},
      {"", {{"a", "b"}}, true},
      {"a=b", {{"a", "b"}}, true},
      {"a==b", {{"a", "b"}}, true},
      {"a=b", {{"a", "c"}}, false},
      {"a=b", {}, false},
      {"a!=b", {{"a", "c"}}, true},
      {"a!=b", {}, true},  // != matches objects without the key.
      {"a!=b", {{"a", "b"}}, false},
      {"a in (x,y)", {{"a", "y"}}, true},
      {"a in (x,y)", {{"a", "z"}}, false},
      {"a in (x,y)", {}, false},
      {"a notin (x)", {}, true},  // notin matches objects without the key.
      {"a notin (x)", {{"a", "x"}}, false},
      {"a notin (x)", {{"a", "q"}}, true},
      {"a", {{"a", ""}}, true},
      {"a", {}, false},
      {"!a", {}, true},
      {"!a", {{"a", "1"}}, false},
      {"a=b,c=d", {{"a", "b"}, {"c", "d"}}, true},
      {"a=b,c=d", {{"a", "b"}}, false},
      {"n>5", {{"n", "6"}}, true},
      {"n>5", {{"n", "5"}}, false},
      {"n<5", {{"n", "x"}}, false},
      {"a in ()", {{"a", ""}}, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("'" + c.selector + "'");
    absl::StatusOr<LabelSelector> s = LabelSelector::Parse(c.selector);
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(s->Matches(c.labels), c.want);
    Json labels_json = Json::object();
    for (const auto& [k, v] : c.labels) labels_json[k] = v;
    EXPECT_EQ(s->Matches(labels_json), c.want);
  }
}

TEST(LabelSelectorMatchTest, EverythingAndNothing) {
  EXPECT_TRUE(LabelSelector::Everything().Empty());
  EXPECT_TRUE(LabelSelector::Everything().Matches(Labels{{"a", "b"}}));
  EXPECT_FALSE(LabelSelector::Nothing().Empty());
  EXPECT_TRUE(LabelSelector::Nothing().IsNothing());
  EXPECT_FALSE(LabelSelector::Nothing().Matches(Labels{}));
  EXPECT_FALSE(LabelSelector::Nothing().Matches(Json(nullptr)));
  EXPECT_TRUE(LabelSelector::Everything().Matches(Json(nullptr)));
  LabelSelector set = LabelSelector::FromSet({{"job-name", "pi"}, {"app", "x"}});
  EXPECT_EQ(set.String(), "app=x,job-name=pi");
  EXPECT_EQ(set.RequiresExactMatch("job-name"), "pi");
  EXPECT_EQ(set.RequiresExactMatch("other"), std::nullopt);
}

TEST(LabelSelectorJsonTest, StructForm) {
  struct Case {
    std::string name;
    Json selector;
    Labels labels;
    bool want;
  };
  Json in_expr = {
      {"matchExpressions", {{{"key", "tier"}, {"operator", "In"}, {"values", {"a", "b"}}}}}};
  Json mixed = {{"matchLabels", {{"app", "web"}}},
                {"matchExpressions",
                 {{{"key", "env"}, {"operator", "NotIn"}, {"values", {"dev"}}},
                  {{"key", "gpu"}, {"operator", "Exists"}},
                  {{"key", "spot"}, {"operator", "DoesNotExist"}}}}};
  std::vector<Case> cases = {
      {"null selects nothing", nullptr, {{"a", "b"}}, false},
      {"empty selects everything", Json::object(), {{"a", "b"}}, true},
      {"matchLabels", {{"matchLabels", {{"a", "b"}}}}, {{"a", "b"}, {"c", "d"}}, true},
      {"matchLabels miss", {{"matchLabels", {{"a", "b"}}}}, {{"a", "c"}}, false},
      {"In hit", in_expr, {{"tier", "b"}}, true},
      {"In miss", in_expr, {{"tier", "c"}}, false},
      {"mixed hit", mixed, {{"app", "web"}, {"gpu", "1"}}, true},
      {"mixed NotIn value", mixed, {{"app", "web"}, {"gpu", "1"}, {"env", "dev"}}, false},
      {"mixed DoesNotExist", mixed, {{"app", "web"}, {"gpu", "1"}, {"spot", "y"}}, false},
      {"mixed Exists", mixed, {{"app", "web"}}, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<LabelSelector> s = LabelSelector::FromJson(c.selector);
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(s->Matches(c.labels), c.want);
  }
  absl::StatusOr<LabelSelector> m = LabelSelector::FromJson(mixed);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->String(), "app=web,env notin (dev),gpu,!spot");
}

TEST(LabelSelectorJsonTest, Validation) {
  struct Case {
    std::string name;
    Json selector;
    std::vector<std::string> want;
  };
  std::vector<Case> cases = {
      {"null ok", nullptr, {}},
      {"valid", {{"matchLabels", {{"app", "x"}}}}, {}},
      {"In without values",
       {{"matchExpressions", {{{"key", "a"}, {"operator", "In"}}}}},
       {"spec.selector.matchExpressions[0].values: Required value: must be specified when "
        "`operator` is 'In' or 'NotIn'"}},
      {"Exists with values",
       {{"matchExpressions", {{{"key", "a"}, {"operator", "Exists"}, {"values", {"x"}}}}}},
       {"spec.selector.matchExpressions[0].values: Forbidden: may not be specified when "
        "`operator` is 'Exists' or 'DoesNotExist'"}},
      {"bad operator",
       {{"matchExpressions", {{{"key", "a"}, {"operator", "Has"}}}}},
       {"spec.selector.matchExpressions[0].operator: Invalid value: \"Has\": not a valid "
        "selector operator"}},
      {"bad key",
       {{"matchExpressions", {{{"key", "/a"}, {"operator", "Exists"}}}}},
       {"spec.selector.matchExpressions[0].key: Invalid value: \"/a\": prefix part must be "
        "non-empty"}},
      {"bad label value",
       {{"matchLabels", {{"a", "b c"}}}},
       {"spec.selector.matchLabels: Invalid value: \"b c\": a valid label must be an empty "
        "string or consist of alphanumeric characters, '-', '_' or '.', and must start and end "
        "with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex "
        "used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<std::string> got;
    for (const FieldError& e : ValidateLabelSelector(c.selector, Path("spec").Child("selector"))) {
      got.push_back(e.Message());
    }
    EXPECT_EQ(got, c.want);
    EXPECT_EQ(LabelSelector::FromJson(c.selector).ok(), c.want.empty());
  }
}

}  // namespace
}  // namespace batchd::api::labels
