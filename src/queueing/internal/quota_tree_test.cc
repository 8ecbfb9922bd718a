#include "queueing/internal/quota_tree.h"

#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace batchd::queueing::internal {
namespace {

// A small tree description: nodes with an optional parent and one quota on
// the single flavor-resource ("default", "cpu").
struct NodeSpec {
  std::string name;
  bool is_cq;
  std::string parent;
  Amount nominal = 0;
  std::optional<Amount> borrowing_limit, lending_limit;
};

struct Built {
  FlavorResourceTable flavor_resources;
  std::unique_ptr<QuotaTree> tree;
  std::map<std::string, NodeId> ids;
  FlavorResourceId cpu = 0;
};

std::unique_ptr<Built> Build(const std::vector<NodeSpec>& specs) {
  auto b = std::make_unique<Built>();
  b->cpu = b->flavor_resources.Intern("default", "cpu");
  b->tree = std::make_unique<QuotaTree>(&b->flavor_resources);
  for (const auto& s : specs) {
    b->ids[s.name] = b->tree->AddNode(s.name, s.is_cq);
    b->tree->SetQuota(b->ids[s.name], b->cpu, {s.nominal, s.borrowing_limit, s.lending_limit});
  }
  for (const auto& s : specs) {
    if (!s.parent.empty()) b->tree->SetParent(b->ids[s.name], b->ids[s.parent]);
  }
  b->tree->Finalize();
  return b;
}

TEST(QuotaTreeTest, AvailableAndPotential) {
  struct Case {
    std::string name;
    std::vector<NodeSpec> nodes;
    std::map<std::string, Amount> usage;  // CQ -> usage
    std::string query;
    Amount want_available;
    Amount want_potential;
  };
  const std::vector<Case> cases = {
      {"no cohort: exactly nominal", {{"a", true, "", 10}}, {{"a", 4}}, "a", 6, 10},
      {"flat cohort: borrow unused quota of others",
       {{"co", false, ""}, {"a", true, "co", 10}, {"b", true, "co", 10}},
       {{"a", 15}}, "b", 5, 20},
      {"flat cohort: borrower sees the rest",
       {{"co", false, ""}, {"a", true, "co", 10}, {"b", true, "co", 10}},
       {{"a", 15}}, "a", 5, 20},
      {"borrowing limit caps potential and available",
       {{"co", false, ""}, {"a", true, "co", 10, 2}, {"b", true, "co", 10}},
       {{"a", 11}}, "a", 1, 12},
      {"lending limit hides nominal-lending from the cohort",
       {{"co", false, ""}, {"a", true, "co", 3, std::nullopt, 2}, {"b", true, "co", 0}},
       {}, "b", 2, 2},
      {"lender keeps its local part",
       {{"co", false, ""}, {"a", true, "co", 3, std::nullopt, 2}, {"b", true, "co", 0}},
       {{"b", 2}}, "a", 1, 3},
      {"cohort nominal is a shared pool",
       {{"co", false, "", 5}, {"a", true, "co", 0}, {"b", true, "co", 0}},
       {{"a", 3}}, "b", 2, 5},
      {"cohort borrowing limit caps the subtree",
       {{"root", false, ""}, {"c1", false, "root", 0, 1}, {"a", true, "c1", 4},
        {"b", true, "root", 4}},
       {}, "a", 5, 5},
      {"cohort lending limit keeps part for the subtree",
       {{"root", false, ""}, {"c1", false, "root", 0, std::nullopt, 1}, {"a", true, "c1", 4},
        {"b", true, "root", 0}},
       {{"a", 1}}, "b", 1, 1},
      {"usage over quota never gives negative available",
       {{"a", true, "", 2}}, {{"a", 3}}, "a", 0, 2},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto b = Build(c.nodes);
    for (const auto& [cq, u] : c.usage) b->tree->AddUsage(b->ids[cq], b->cpu, u);
    EXPECT_EQ(b->tree->Available(b->ids[c.query], b->cpu), c.want_available);
    EXPECT_EQ(b->tree->PotentialAvailable(b->ids[c.query], b->cpu), c.want_potential);
  }
}

TEST(QuotaTreeTest, UsagePropagatesBeyondLocalQuotaAndBack) {
  auto b = Build({{"co", false, ""}, {"a", true, "co", 3, std::nullopt, 2}, {"b", true, "co", 5}});
  QuotaTree& t = *b->tree;
  NodeId a = b->ids["a"], co = b->ids["co"];
  struct Step {
    Amount add;  // negative = remove
    Amount want_a, want_cohort;
  };
  const std::vector<Step> steps = {{1, 1, 0}, {1, 2, 1}, {3, 5, 4}, {-4, 1, 0}, {-1, 0, 0}};
  for (size_t i = 0; i < steps.size(); ++i) {
    SCOPED_TRACE(i);
    if (steps[i].add > 0) t.AddUsage(a, b->cpu, steps[i].add);
    else t.RemoveUsage(a, b->cpu, -steps[i].add);
    EXPECT_EQ(t.Usage(a, b->cpu), steps[i].want_a);
    EXPECT_EQ(t.Usage(co, b->cpu), steps[i].want_cohort);
    EXPECT_EQ(t.CheckInvariants(), "");
  }
  EXPECT_EQ(t.SubtreeQuota(co, b->cpu), 2 + 5);
}

TEST(QuotaTreeTest, BorrowingLevel) {
  struct Case {
    std::string name;
    Amount a_usage;
    Amount val;
    int want_level;
    bool want_may_reclaim;
  };
  // root -> c1 -> {a: 4, a2: 2}; root -> b: 4
  const std::vector<Case> cases = {
      {"within nominal", 0, 4, 0, true},
      {"borrows within c1", 2, 4, 1, true},
      {"borrows from root", 4, 4, 2, false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto b = Build({{"root", false, ""}, {"c1", false, "root"}, {"a", true, "c1", 4},
                    {"a2", true, "c1", 2}, {"b", true, "root", 4}});
    if (c.a_usage) b->tree->AddUsage(b->ids["a"], b->cpu, c.a_usage);
    auto [level, may_reclaim] = b->tree->BorrowingLevel(b->ids["a"], b->cpu, c.val);
    EXPECT_EQ(level, c.want_level);
    EXPECT_EQ(may_reclaim, c.want_may_reclaim);
  }
  auto solo = Build({{"a", true, "", 1}});
  EXPECT_EQ(solo->tree->BorrowingLevel(0, solo->cpu, 5), std::make_pair(0, false));
}

TEST(QuotaTreeTest, InvariantsCatchOverBorrowing) {
  auto b = Build({{"co", false, ""}, {"a", true, "co", 2, 1}, {"b", true, "co", 5}});
  b->tree->AddUsage(b->ids["a"], b->cpu, 3);
  EXPECT_EQ(b->tree->CheckInvariants(), "");
  b->tree->AddUsage(b->ids["a"], b->cpu, 1);
  EXPECT_NE(b->tree->CheckInvariants().find("exceeds"), std::string::npos);
  auto solo = Build({{"a", true, "", 2}});
  solo->tree->AddUsage(0, solo->cpu, 3);
  EXPECT_NE(solo->tree->CheckInvariants(), "");
}

TEST(QuotaTreeTest, WeightedShare) {
  // Two CQs of 10 cpu each; a borrows 5 of the 20 lendable -> 250 per mille.
  auto b = Build({{"co", false, ""}, {"a", true, "co", 10}, {"b", true, "co", 10}});
  NodeId a = b->ids["a"];
  EXPECT_EQ(b->tree->WeightedShare(a, {}), 0);
  b->tree->AddUsage(a, b->cpu, 15);
  EXPECT_DOUBLE_EQ(b->tree->WeightedShare(a, {}), 250);
  EXPECT_DOUBLE_EQ(b->tree->WeightedShare(a, {{b->cpu, 1}}), 300);
  EXPECT_EQ(b->tree->WeightedShare(b->ids["co"], {}), 0);  // root
}

// The core's quota math is api::Amount's: an unlimited amount (kUnlimited)
// behaves as +infinity, also next to negative intermediate values.
TEST(QuotaTreeTest, UnlimitedQuotaActsAsInfinity) {
  // a: unlimited nominal, none of it lendable; b over-uses the cohort's 10 by
  // 5 (quota lowered under running workloads), so the cohort's available is
  // -5. a's own unlimited local quota still leaves it unlimited room.
  auto b = Build({{"co", false, ""}, {"a", true, "co", kUnlimited, std::nullopt, 0},
                  {"b", true, "co", 10}});
  QuotaTree& t = *b->tree;
  NodeId a = b->ids["a"];
  t.AddUsage(b->ids["b"], b->cpu, 15);
  t.AddUsage(a, b->cpu, 7);
  EXPECT_EQ(t.LocalQuota(a, b->cpu), kUnlimited);
  EXPECT_EQ(t.LocalAvailable(a, b->cpu), kUnlimited);
  EXPECT_EQ(t.Available(a, b->cpu), kUnlimited);
  EXPECT_EQ(t.PotentialAvailable(a, b->cpu), kUnlimited);
  EXPECT_EQ(t.SubtreeQuota(b->ids["co"], b->cpu), 10);  // a lends nothing
  EXPECT_EQ(t.Usage(b->ids["co"], b->cpu), 15);         // a's usage stays local
  t.RemoveUsage(a, b->cpu, 7);
  EXPECT_EQ(t.Usage(a, b->cpu), 0);
}

TEST(QuotaTreeTest, UnsetLimitsReadAsNullopt) {
  auto b = Build({{"co", false, ""}, {"a", true, "co", 4, 2, 1}, {"b", true, "co", 4}});
  QuotaTree& t = *b->tree;
  EXPECT_EQ(t.BorrowingLimit(b->ids["a"], b->cpu), std::optional<Amount>(2));
  EXPECT_EQ(t.LendingLimit(b->ids["a"], b->cpu), std::optional<Amount>(1));
  EXPECT_EQ(t.BorrowingLimit(b->ids["b"], b->cpu), std::nullopt);
  EXPECT_EQ(t.LendingLimit(b->ids["b"], b->cpu), std::nullopt);
  EXPECT_EQ(t.BorrowingLimit(b->ids["a"], b->cpu + 1), std::nullopt);  // unknown id
}

TEST(FlavorResourceTableTest, InternIsStable) {
  FlavorResourceTable t;
  FlavorResourceId x = t.Intern("f", "cpu");
  EXPECT_EQ(t.Intern("f", "memory"), x + 1);
  EXPECT_EQ(t.Intern("f", "cpu"), x);
  EXPECT_EQ(t.Find("g", "cpu"), -1);
  EXPECT_EQ(t.Resource(x), "cpu");
}

}  // namespace
}  // namespace batchd::queueing::internal
