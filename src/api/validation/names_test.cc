#include "api/validation/names.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace batchd::api::validation {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const char kSubdomainMsg[] =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const char kLabelMsg[] =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

struct Case {
  std::string name;
  std::string value;
  bool valid;
};

void ExpectValidity(const std::vector<Case>& cases, Messages (*fn)(std::string_view)) {
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name + ": '" + c.value + "'");
    Messages got = fn(c.value);
    EXPECT_EQ(got.empty(), c.valid) << (got.empty() ? "" : got[0]);
  }
}

TEST(NamesTest, DNS1123Subdomain) {
  ExpectValidity(
      {
          {"simple", "a", true},
          {"digits", "0", true},
          {"dotted", "a.b.c", true},
          {"dash inside", "a-b", true},
          {"max length", std::string(253, 'a'), true},
          {"empty", "", false},
          {"upper", "A", false},
          {"leading dash", "-a", false},
          {"trailing dash", "a-", false},
          {"leading dot", ".a", false},
          {"double dot", "a..b", false},
          {"dash before dot", "a-.b", false},
          {"underscore", "a_b", false},
          {"too long", std::string(254, 'a'), false},
      },
      IsDNS1123Subdomain);
  EXPECT_THAT(IsDNS1123Subdomain("Bad_Name"), ElementsAre(kSubdomainMsg));
  EXPECT_THAT(IsDNS1123Subdomain(std::string(254, 'a')),
              ElementsAre("must be no more than 253 characters"));
}

TEST(NamesTest, DNS1123Label) {
  ExpectValidity(
      {
          {"simple", "abc", true},
          {"digits first", "1abc", true},
          {"dash inside", "a-1", true},
          {"max length", std::string(63, 'a'), true},
          {"empty", "", false},
          {"dot", "a.b", false},
          {"too long", std::string(64, 'a'), false},
          {"upper", "aBc", false},
      },
      IsDNS1123Label);
  EXPECT_THAT(IsDNS1123Label("a.b"), ElementsAre("must not contain dots"));
  EXPECT_THAT(IsDNS1123Label("A"), ElementsAre(kLabelMsg));
  EXPECT_THAT(IsDNS1123Label(std::string(64, 'a')),
              ElementsAre("must be no more than 63 characters"));
}

TEST(NamesTest, DNS1035Label) {
  ExpectValidity(
      {
          {"simple", "abc", true},
          {"dash", "a-1", true},
          {"digit first", "1abc", false},
          {"trailing dash", "abc-", false},
          {"too long", std::string(64, 'a'), false},
      },
      IsDNS1035Label);
  EXPECT_THAT(IsDNS1035Label("1a"),
              ElementsAre("a DNS-1035 label must consist of lower case alphanumeric characters "
                          "or '-', start with an alphabetic character, and end with an "
                          "alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
                          "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"));
}

TEST(NamesTest, QualifiedName) {
  ExpectValidity(
      {
          {"simple", "simple", true},
          {"mixed case", "Now-with_Underscores.and.dots", true},
          {"prefixed", "example.com/MyName", true},
          {"kueue label", "kueue.x-k8s.io/queue-name", true},
          {"single char", "a", true},
          {"63 chars", std::string(63, 'a'), true},
          {"empty", "", false},
          {"64 chars", std::string(64, 'a'), false},
          {"leading dash", "-a", false},
          {"trailing dot", "a.", false},
          {"space", "a b", false},
          {"empty prefix", "/a", false},
          {"empty name", "a/", false},
          {"two slashes", "a/b/c", false},
          {"bad prefix", "Example.com/a", false},
      },
      IsQualifiedName);
  EXPECT_THAT(IsQualifiedName("a/b/c"),
              ElementsAre("a qualified name must consist of alphanumeric characters, '-', '_' "
                          "or '.', and must start and end with an alphanumeric character (e.g. "
                          "'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                          "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS "
                          "subdomain prefix and '/' (e.g. 'example.com/MyName')"));
  EXPECT_THAT(IsQualifiedName("/a"), ElementsAre("prefix part must be non-empty"));
  Messages empty_name = IsQualifiedName("");
  ASSERT_EQ(empty_name.size(), 2u);
  EXPECT_EQ(empty_name[0], "name part must be non-empty");
  EXPECT_THAT(empty_name[1], ::testing::StartsWith("name part must consist of alphanumeric"));
  EXPECT_THAT(IsQualifiedName("A.com/x"), ElementsAre(std::string("prefix part ") + kSubdomainMsg));
}

TEST(NamesTest, LabelValue) {
  ExpectValidity(
      {
          {"empty is valid", "", true},
          {"simple", "MyValue", true},
          {"underscore", "my_value", true},
          {"digits", "12345", true},
          {"63 chars", std::string(63, 'a'), true},
          {"64 chars", std::string(64, 'a'), false},
          {"slash", "a/b", false},
          {"trailing dash", "a-", false},
      },
      IsValidLabelValue);
  EXPECT_THAT(IsValidLabelValue("-"),
              ElementsAre("a valid label must be an empty string or consist of alphanumeric "
                          "characters, '-', '_' or '.', and must start and end with an "
                          "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
                          "regex used for validation is "
                          "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"));
}

TEST(NamesTest, GenerateNamePrefixAllowsTrailingDash) {
  struct PrefixCase {
    std::string name;
    std::string value;
    bool prefix;
    bool valid;
  };
  std::vector<PrefixCase> cases = {
      {"prefix with dash", "job-", true, true},
      {"same as name", "job-", false, false},
      {"plain prefix", "job", true, true},
      {"single dash prefix", "-", true, false},
  };
  for (const PrefixCase& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(NameIsDNSSubdomain(c.value, c.prefix).empty(), c.valid);
    EXPECT_EQ(NameIsDNSLabel(c.value, c.prefix).empty(), c.valid);
  }
}

}  // namespace
}  // namespace batchd::api::validation
