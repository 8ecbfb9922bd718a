#include "api/labels/field_selector.h"

#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace batchd::api::labels {
namespace {

FieldSelector::Getter GetterFor(std::map<std::string, std::string> fields) {
  return [fields = std::move(fields)](std::string_view f) -> std::optional<std::string> {
    auto it = fields.find(std::string(f));
    if (it == fields.end()) return std::nullopt;
    return it->second;
  };
}

TEST(FieldSelectorTest, ParseAndString) {
  struct Case {
    std::string in;
    std::string want;
    std::vector<std::string> fields;
  };
  std::vector<Case> cases = {
      {"", "", {}},
      {"metadata.name=x", "metadata.name=x", {"metadata.name"}},
      {"metadata.name==x", "metadata.name=x", {"metadata.name"}},
      {"status.phase!=Running,spec.nodeName==n",
       "spec.nodeName=n,status.phase!=Running",
       {"spec.nodeName", "status.phase"}},
      {"metadata.name=", "metadata.name=", {"metadata.name"}},
      {"a=b\\,c,a!=d", "a!=d,a=b\\,c", {"a"}},
      {"a=x\\=y", "a=x\\=y", {"a"}},
      {",,a=b,", "a=b", {"a"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("'" + c.in + "'");
    absl::StatusOr<FieldSelector> s = FieldSelector::Parse(c.in);
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(s->String(), c.want);
    EXPECT_EQ(s->Fields(), c.fields);
  }
}

TEST(FieldSelectorTest, ParseErrors) {
  struct Case {
    std::string in;
    std::string want;
  };
  std::vector<Case> cases = {
      {"metadata.name", "invalid selector: 'metadata.name'; can't understand 'metadata.name'"},
      {"a=b,c", "invalid selector: 'a=b,c'; can't understand 'c'"},
      {"a=b=c", "invalid field selector: unescaped character in value: ="},
      {"a=b\\x", "invalid field selector: invalid escape sequence: \\x"},
      {"a=b\\", "invalid field selector: invalid escape sequence: \\"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("'" + c.in + "'");
    absl::StatusOr<FieldSelector> s = FieldSelector::Parse(c.in);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().message(), c.want);
  }
}

TEST(FieldSelectorTest, Matches) {
  struct Case {
    std::string selector;
    std::map<std::string, std::string> fields;
    bool want;
  };
  std::vector<Case> cases = {
      {"", {}, true},
      {"metadata.name=x", {{"metadata.name", "x"}}, true},
      {"metadata.name=x", {{"metadata.name", "y"}}, false},
      {"metadata.name!=x", {{"metadata.name", "y"}}, true},
      {"status.phase!=Running", {}, true},  // Missing reads as "".
      {"status.phase=", {}, true},
      {"status.phase=Running", {}, false},
      {"metadata.name=x,metadata.namespace=ns",
       {{"metadata.name", "x"}, {"metadata.namespace", "ns"}},
       true},
      {"metadata.name=x,metadata.namespace=ns", {{"metadata.name", "x"}}, false},
      {"a=b\\,c", {{"a", "b,c"}}, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("'" + c.selector + "'");
    absl::StatusOr<FieldSelector> s = FieldSelector::Parse(c.selector);
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(s->Matches(GetterFor(c.fields)), c.want);
  }
  absl::StatusOr<FieldSelector> s = FieldSelector::Parse("metadata.name=pi,status.phase!=x");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->RequiresExactMatch("metadata.name"), "pi");
  EXPECT_EQ(s->RequiresExactMatch("status.phase"), std::nullopt);
}

}  // namespace
}  // namespace batchd::api::labels
