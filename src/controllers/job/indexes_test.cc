#include "controllers/job/indexes.h"

#include <gtest/gtest.h>

namespace batchd::controllers::job {
namespace {

TEST(OrderedIntervalsTest, ParseAndFormat) {
  struct Case {
    std::string name;
    std::string in;
    int completions;
    std::string want;
    int total;
  };
  const Case cases[] = {
      {"empty", "", 10, "", 0},
      {"single", "3", 10, "3", 1},
      {"pair stays a list", "1,2", 10, "1,2", 2},
      {"run of three", "1,2,3", 10, "1-3", 3},
      {"merge adjacent intervals", "0-2,3-4,7", 10, "0-4,7", 6},
      {"unsorted input", "7,0-1", 10, "0,1,7", 3},
      {"clipped by completions", "0-4,8", 3, "0-2", 3},
      {"garbage dropped", "x,2,-1,5-3", 10, "2", 1},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    OrderedIntervals iv = OrderedIntervals::Parse(c.in, c.completions);
    EXPECT_EQ(iv.String(), c.want);
    EXPECT_EQ(iv.Total(), c.total);
  }
}

TEST(OrderedIntervalsTest, WithHasOverlap) {
  OrderedIntervals iv = OrderedIntervals::Parse("1,5-7", 100).With({2, 3, 9, 3});
  EXPECT_EQ(iv.String(), "1-3,5-7,9");
  EXPECT_TRUE(iv.Has(2));
  EXPECT_TRUE(iv.Has(7));
  EXPECT_FALSE(iv.Has(4));
  EXPECT_FALSE(iv.Has(0));
  EXPECT_FALSE(iv.Has(10));
  OrderedIntervals other = OrderedIntervals::Parse("0-5,9-20", 100);
  EXPECT_EQ(iv.CountOverlap(other), 5);  // 1,2,3,5,9
}

TEST(CompletionIndexTest, ReadsAnnotationThenLabel) {
  struct Case {
    std::string name;
    api::Json pod;
    int want;
  };
  const std::string key = "batch.kubernetes.io/job-completion-index";
  const Case cases[] = {
      {"annotation", {{"metadata", {{"annotations", {{key, "4"}}}}}}, 4},
      {"label fallback", {{"metadata", {{"labels", {{key, "2"}}}}}}, 2},
      {"missing", {{"metadata", api::Json::object()}}, kUnknownIndex},
      {"malformed", {{"metadata", {{"annotations", {{key, "4x"}}}}}}, kUnknownIndex},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(CompletionIndex(api::meta::ObjectMetaView::Parse(c.pod)), c.want);
  }
}

}  // namespace
}  // namespace batchd::controllers::job
