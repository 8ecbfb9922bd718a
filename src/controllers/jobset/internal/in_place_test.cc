#include "controllers/jobset/internal/in_place.h"

#include "gtest/gtest.h"

namespace batchd::controllers::jobset::internal {
namespace {

using api::Json;

// A pod at `desired` (hold when `hold`) reporting `state` for `reported`.
InPlacePod P(const std::string& name, int64_t desired, int64_t reported, const std::string& state,
             bool hold = false) {
  InPlacePod p;
  p.ns = "ns";
  p.name = name;
  p.desired = desired;
  p.hold = hold;
  p.reported = reported;
  p.state = state;
  p.message = "generation " + std::to_string(reported);
  return p;
}

std::string Patches(const InPlaceDecision& d) {
  std::string out;
  for (const InPlacePatch& p : d.patches) {
    out += p.name + "=" + std::to_string(p.generation) + (p.hold ? "h " : " ");
  }
  return out;
}

TEST(InPlaceTest, Steps) {
  struct Case {
    std::string name;
    std::vector<InPlacePod> pods;
    int64_t total = 3;
    int32_t counted = 0, max = 3;
    std::optional<int32_t> current;
    // Want:
    bool fail = false;
    std::string patches;
    std::optional<int32_t> current_set, previous_set;
  };
  InPlacePod done = P("d", 0, 0, "Running");
  done.succeeded = true;
  const std::vector<Case> cases = {
      {"all run generation 0: it becomes current",
       {P("a", 0, 0, "Running"), P("b", 0, 0, "Running"), P("c", 0, 0, "Running")},
       3, 0, 3, std::nullopt, false, "", 0, std::nullopt},
      {"already current: nothing", {P("a", 0, 0, "Running"), P("b", 0, 0, "Running"), P("c", 0, 0, "Running")},
       3, 0, 3, 0, false, "", std::nullopt, std::nullopt},
      {"not every pod exists yet: not current", {P("a", 0, 0, "Running"), P("b", 0, 0, "Running")},
       3, 0, 3, std::nullopt, false, "", std::nullopt, std::nullopt},
      {"a succeeded pod counts as present",
       {P("a", 0, 0, "Running"), P("b", 0, 0, "Running"), done}, 3, 0, 3, std::nullopt, false, "",
       0, std::nullopt},
      {"a failure starts the next generation for every pod, held",
       {P("a", 0, 0, "Running"), P("b", 0, 0, "ContainerFailed"), P("c", 0, -1, "")},
       3, 0, 3, 0, false, "a=1h b=1h c=1h ", std::nullopt, 0},
      {"a failure of an older generation is history",
       {P("a", 1, 0, "ContainerFailed"), P("b", 1, 1, "Held", true), P("c", 1, 1, "Held", true)},
       3, 0, 3, 0, false, "", std::nullopt, std::nullopt},
      {"the barrier holds until every pod stopped",
       {P("a", 1, 1, "Held", true), P("b", 1, 1, "Restarting", true), P("c", 1, 1, "Held", true)},
       3, 0, 3, 0, false, "", std::nullopt, std::nullopt},
      {"then releases all",
       {P("a", 1, 1, "Held", true), P("b", 1, 1, "Held", true), P("c", 1, 1, "Held", true)},
       3, 0, 3, 0, false, "a=1 b=1 c=1 ", std::nullopt, std::nullopt},
      {"a pod behind joins, held",
       {P("a", 1, 1, "Running"), P("b", 1, 1, "Running"), P("new", 0, 0, "Running")},
       3, 0, 3, 0, false, "new=1h ", std::nullopt, std::nullopt},
      {"maxRestarts: the next generation would pass it",
       {P("a", 2, 2, "ContainerFailed"), P("b", 2, 2, "Running"), P("c", 2, 2, "Running")},
       3, 1, 3, 2, true, "", std::nullopt, std::nullopt},
      {"maxRestarts counts the recreate restarts too, but not past it",
       {P("a", 1, 1, "ContainerFailed"), P("b", 1, 1, "Running"), P("c", 1, 1, "Running")},
       3, 1, 3, 1, false, "a=2h b=2h c=2h ", std::nullopt, 1},
      {"pods without a generation: nothing to drive", {P("a", -1, -1, "")}, 1, 0, 3, std::nullopt,
       false, "", std::nullopt, std::nullopt},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const InPlaceDecision d = DecideInPlace(c.pods, c.total, c.counted, c.max, c.current);
    EXPECT_EQ(d.fail, c.fail);
    EXPECT_EQ(Patches(d), c.patches);
    EXPECT_EQ(d.current, c.current_set);
    EXPECT_EQ(d.previous, c.previous_set);
  }
}

TEST(InPlaceTest, ParsesAnnotationsAndTheAgentsCondition) {
  const Json pod = Json::parse(R"({
    "metadata": {"name": "p", "namespace": "ns",
                 "annotations": {"batchd.io/restart-generation": "3", "batchd.io/restart-hold": "true"}},
    "status": {"phase": "Running", "conditions": [
      {"type": "batchd.io/RestartGeneration", "status": "False", "reason": "ContainerFailed",
       "message": "generation 3: container main exited with code 4"}]}})");
  const InPlacePod p = ParseInPlacePod(pod);
  EXPECT_EQ(p.desired, 3);
  EXPECT_TRUE(p.hold);
  EXPECT_EQ(p.reported, 3);
  EXPECT_EQ(p.state, "ContainerFailed");
  EXPECT_FALSE(p.succeeded);
  EXPECT_EQ(InPlacePatchBody({"ns", "p", 4, false}),
            Json::parse(R"({"metadata": {"annotations": {
              "batchd.io/restart-generation": "4",
              "jobset.sigs.k8s.io/in-place-restart-attempt": "4",
              "batchd.io/restart-hold": null}}})"));
}

}  // namespace
}  // namespace batchd::controllers::jobset::internal
