// Flavor assignment (reference §2.4), through AdmissionCore and the pure
// matching helpers.
#include "queueing/internal/flavor_assigner.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "queueing/internal/test_util.h"

namespace batchd::queueing {
namespace {

using namespace batchd::queueing::testing;  // NOLINT
using internal::FlavorMismatch;
using api::core_v1::ToleratesTaint;

ResourceFlavor Tainted(std::string name, std::string key) {
  ResourceFlavor f = Rf(std::move(name));
  f.node_taints.push_back({key, "true", TaintEffect::kNoSchedule});
  return f;
}

TEST(FlavorAssignerTest, ChoosesFlavor) {
  struct Case {
    std::string name;
    Scenario scn;
    std::string want_flavor;          // "" = not admitted
    std::string want_reason = "";     // when not admitted
    std::string want_message = "";    // substring, when not admitted
  };
  FlavorFungibility try_next_borrow{.when_can_borrow_try_next = true};
  std::vector<Case> cases = {
      {"first flavor that fits",
       {.flavors = {Rf("one"), Rf("two")},
        .cqs = {CqBuilder("a").Flavor("one", 4).Flavor("two", 4).Obj()},
        .pending = {WlBuilder("w", "a").Cpu(2).Obj()}},
       "one"},
      {"next flavor when the first is full",
       {.flavors = {Rf("one"), Rf("two")},
        .cqs = {CqBuilder("a").Flavor("one", 1).Flavor("two", 4).Obj()},
        .pending = {WlBuilder("w", "a").Cpu(2).Obj()}},
       "two"},
      {"node selector picks the matching flavor",
       {.flavors = {Rf("spot", {{"type", "spot"}}), Rf("od", {{"type", "od"}})},
        .cqs = {CqBuilder("a").Flavor("spot", 4).Flavor("od", 4).Obj()},
        .pending = {WlBuilder("w", "a").Cpu(1).Selector("type", "od").Obj()}},
       "od"},
      {"selector on a key the flavor lacks is ignored",
       {.flavors = {Rf("spot", {{"type", "spot"}})},
        .cqs = {CqBuilder("a").Flavor("spot", 4).Obj()},
        .pending = {WlBuilder("w", "a").Cpu(1).Selector("zone", "z1").Obj()}},
       "spot"},
      {"untolerated taint skips the flavor",
       {.flavors = {Tainted("gpu", "gpu"), Rf("cpu")},
        .cqs = {CqBuilder("a").Flavor("gpu", 4).Flavor("cpu", 4).Obj()},
        .pending = {WlBuilder("w", "a").Cpu(1).Obj()}},
       "cpu"},
      {"tolerated taint",
       {.flavors = {Tainted("gpu", "gpu"), Rf("cpu")},
        .cqs = {CqBuilder("a").Flavor("gpu", 4).Flavor("cpu", 4).Obj()},
        .pending = {WlBuilder("w", "a").Cpu(1)
                        .Tolerate({"gpu", TolerationOperator::kExists, "", std::nullopt})
                        .Obj()}},
       "gpu"},
      {"whenCanBorrow MayStopSearch takes the borrowing flavor",
       {.flavors = {Rf("one"), Rf("two")},
        .cqs = {CqBuilder("a").Cohort("co").Flavor("one", 1).Flavor("two", 4).Obj(),
                CqBuilder("b").Cohort("co").Flavor("one", 4).Obj()},
        .pending = {WlBuilder("w", "a").Cpu(2).Obj()}},
       "one"},
      {"whenCanBorrow TryNextFlavor prefers a flavor without borrowing",
       {.flavors = {Rf("one"), Rf("two")},
        .cqs = {CqBuilder("a").Cohort("co").Flavor("one", 1).Flavor("two", 4)
                    .Fungibility(try_next_borrow).Obj(),
                CqBuilder("b").Cohort("co").Flavor("one", 4).Obj()},
        .pending = {WlBuilder("w", "a").Cpu(2).Obj()}},
       "two"},
      {"resource the ClusterQueue doesn't cover",
       {.cqs = {CqBuilder("a").Flavor("default", 4).Obj()},
        .pending = {WlBuilder("w", "a").Cpu(1).Req("example.com/gpu", 1000).Obj()}},
       "", "NoMatchingFlavor", "resource example.com/gpu unavailable in ClusterQueue"},
      {"no flavor matches",
       {.flavors = {Rf("spot", {{"type", "spot"}})},
        .cqs = {CqBuilder("a").Flavor("spot", 4).Obj()},
        .pending = {WlBuilder("w", "a").Cpu(1).Selector("type", "od").Obj()}},
       "", "NoMatchingFlavor", "flavor spot doesn't match node affinity"},
      {"request above the maximum capacity",
       {.cqs = {CqBuilder("a").Flavor("default", 4).Obj()},
        .pending = {WlBuilder("w", "a").Cpu(5).Obj()}},
       "", "ExceedsMaxQuota",
       "insufficient quota for cpu in flavor default, request > maximum capacity (5 > 4)"},
      {"waiting beats exceeding when flavors differ",
       {.flavors = {Rf("one"), Rf("two")},
        .cqs = {CqBuilder("a").Cohort("co").Flavor("one", 1).Flavor("two", 0).Obj(),
                CqBuilder("b").Cohort("co").Flavor("two", 4).Obj()},
        .admitted = {{WlBuilder("x", "b").Cpu(4).Obj(), AdmitOn("b", "two", 4)}},
        .pending = {WlBuilder("w", "a").Cpu(2).Obj()}},
       "", "WaitingForQuota", "insufficient unused quota for cpu in flavor two, 2 more needed"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto core = Load(c.scn);
    Summary s = Summarize(core->RunCycle(absl::FromUnixSeconds(1)));
    if (!c.want_flavor.empty()) {
      EXPECT_EQ(s.flavor["ns/w"], c.want_flavor);
    } else {
      EXPECT_TRUE(s.admitted.empty());
      EXPECT_EQ(s.pending["ns/w"], c.want_reason);
      EXPECT_THAT(s.messages["ns/w"], ::testing::HasSubstr(c.want_message));
    }
  }
}

TEST(FlavorAssignerTest, PodSetsAccumulateAndGroupsShareAFlavor) {
  Scenario s;
  s.flavors = {Rf("one"), Rf("two")};
  s.cqs = {CqBuilder("a")
               .FlavorRes("one", {{"cpu", {U(4)}}, {"memory", {U(1)}}})
               .FlavorRes("two", {{"cpu", {U(10)}}, {"memory", {U(10)}}})
               .Obj()};
  // Pod set 1 fits "one"; pod set 2 would exceed "one" on cpu together with
  // pod set 1, so it goes to "two" for both cpu and memory.
  s.pending = {WlBuilder("w", "a").Cpu(3).Req("memory", 500).PodSetNamed("second").Cpu(3)
                   .Req("memory", 500).Obj()};
  auto core = Load(s);
  auto ds = core->RunCycle(absl::FromUnixSeconds(1));
  ASSERT_EQ(ds.size(), 1u);
  const Admission& a = ds[0].admission;
  ASSERT_EQ(a.pod_sets.size(), 2u);
  EXPECT_EQ(a.pod_sets[0].flavors.at("cpu"), "one");
  EXPECT_EQ(a.pod_sets[0].flavors.at("memory"), "one");
  EXPECT_EQ(a.pod_sets[1].flavors.at("cpu"), "two");
  EXPECT_EQ(a.pod_sets[1].flavors.at("memory"), "two");
  EXPECT_EQ(a.pod_sets[1].resource_usage.at("cpu"), U(3));
  ClusterQueueStatus st = core->ClusterQueueStatusOf("a");
  EXPECT_EQ(st.admitted, 1);
}

TEST(FlavorAssignerTest, Tolerations) {
  Taint t{"k", "v", TaintEffect::kNoSchedule};
  struct Case {
    std::string name;
    Toleration tol;
    bool want;
  };
  std::vector<Case> cases = {
      {"exists on key", {"k", TolerationOperator::kExists, "", std::nullopt}, true},
      {"equal value", {"k", TolerationOperator::kEqual, "v", std::nullopt}, true},
      {"other value", {"k", TolerationOperator::kEqual, "w", std::nullopt}, false},
      {"other effect", {"k", TolerationOperator::kExists, "", TaintEffect::kNoExecute}, false},
      {"empty key exists tolerates all", {"", TolerationOperator::kExists, "", std::nullopt}, true},
      {"other key", {"j", TolerationOperator::kExists, "", std::nullopt}, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(ToleratesTaint(c.tol, t), c.want);
  }
}

TEST(FlavorAssignerTest, RequiredAffinityOnFlavorKeys) {
  ResourceFlavor f = Rf("f", {{"zone", "a"}});
  auto req = [](std::string key, api::labels::Operator op, std::vector<std::string> v) {
    return api::labels::Requirement{std::move(key), op, std::move(v)};
  };
  struct Case {
    std::string name;
    std::vector<NodeSelectorTerm> terms;
    bool want_match;
  };
  using Op = api::labels::Operator;
  std::vector<Case> cases = {
      {"in", {{req("zone", Op::kIn, {"a", "b"})}}, true},
      {"not in", {{req("zone", Op::kNotIn, {"a"})}}, false},
      {"second term matches", {{req("zone", Op::kIn, {"b"})}, {req("zone", Op::kIn, {"a"})}}, true},
      {"other keys ignored", {{req("gpu", Op::kExists, {})}}, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    PodSet ps;
    ps.required_affinity = c.terms;
    EXPECT_EQ(FlavorMismatch(f, ps).empty(), c.want_match);
  }
}

}  // namespace
}  // namespace batchd::queueing
