#include "api/core/v1/node_view.h"

#include "api/meta/time_util.h"
#include "gtest/gtest.h"

namespace batchd::api::core_v1 {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1704067200);  // 2024-01-01T00:00:00Z
constexpr char kNowText[] = "2024-01-01T00:00:00Z";

TEST(NodeViewTest, ParsesTheFieldsComponentsRead) {
  const Json node = Json::parse(R"({
    "metadata": {"name": "n1", "labels": {"zone": "a"},
                 "annotations": {"batchd.io/simulated": "true"}},
    "spec": {"unschedulable": true,
             "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"},
                        {"key": "bad", "effect": "Sometimes"},
                        {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute",
                         "timeAdded": "2024-01-01T00:00:01Z"}]},
    "status": {"conditions": [
                 {"type": "MemoryPressure", "status": "False"},
                 {"type": "Ready", "status": "True", "reason": "KubeletReady",
                  "message": "ok", "lastHeartbeatTime": "2024-01-01T00:00:02Z",
                  "lastTransitionTime": "2024-01-01T00:00:03Z"},
                 {"type": "Ready", "status": "False"}],
               "allocatable": {"cpu": "1500m", "memory": "1Gi", "pods": "110",
                               "nvidia.com/gpu": "0", "bad": "x1"},
               "capacity": {"cpu": "2"}}})");
  NodeView v = NodeView::Parse(node);
  EXPECT_EQ(v.meta.name, "n1");
  EXPECT_EQ(v.meta.Label("zone"), "a");
  EXPECT_EQ(v.meta.Annotation("batchd.io/simulated"), "true");
  EXPECT_TRUE(v.unschedulable);
  ASSERT_EQ(v.taints.size(), 2u);  // The undefined effect is skipped.
  EXPECT_EQ(v.taints[0], (Taint{"k", "v", TaintEffect::kNoSchedule, ""}));
  EXPECT_EQ(v.taints[1], (Taint{"node.kubernetes.io/unreachable", "", TaintEffect::kNoExecute,
                                "2024-01-01T00:00:01Z"}));
  ASSERT_EQ(v.conditions.size(), 3u);
  const NodeConditionView* ready = v.Condition(kNodeReady);  // The first one.
  ASSERT_NE(ready, nullptr);
  EXPECT_EQ(ready->status, "True");
  EXPECT_EQ(ready->reason, "KubeletReady");
  EXPECT_EQ(ready->message, "ok");
  EXPECT_EQ(ready->last_heartbeat_time, "2024-01-01T00:00:02Z");
  EXPECT_EQ(ready->last_transition_time, "2024-01-01T00:00:03Z");
  EXPECT_EQ(v.ReadyStatus(), "True");
  EXPECT_EQ(v.Condition("DiskPressure"), nullptr);

  std::vector<ResourceAmountView> alloc = v.Allocatable();  // Name order; "bad" skipped.
  ASSERT_EQ(alloc.size(), 4u);
  EXPECT_EQ(alloc[0].name, "cpu");
  EXPECT_EQ(alloc[0].amount.milli(), 1500);
  EXPECT_EQ(alloc[1].name, "memory");
  EXPECT_EQ(alloc[1].amount.milli(), (int64_t{1} << 30) * 1000);  // 1Gi
  EXPECT_EQ(alloc[2].name, "nvidia.com/gpu");
  EXPECT_TRUE(alloc[2].amount.IsZero());
  EXPECT_EQ(alloc[3].name, "pods");
  EXPECT_EQ(alloc[3].amount.milli(), 110000);
}

TEST(NodeViewTest, AllocatableFallsBackToCapacity) {
  const Json node = Json::parse(R"({"status": {"allocatable": "x", "capacity": {"cpu": "2"}}})");
  NodeView v = NodeView::Parse(node);
  EXPECT_EQ(v.allocatable, nullptr);
  std::vector<ResourceAmountView> alloc = v.Allocatable();
  ASSERT_EQ(alloc.size(), 1u);
  EXPECT_EQ(alloc[0].name, "cpu");
  EXPECT_EQ(alloc[0].amount.milli(), 2000);
}

TEST(NodeViewTest, EmptyAndMistypedObjectsReadAsDefaults) {
  for (const Json& node :
       {Json(), Json::object(),
        Json{{"metadata", 1}, {"spec", {{"unschedulable", "yes"}, {"taints", 3}}},
             {"status", {{"conditions", {{"type", "Ready"}}}, {"capacity", 1}}}},
        Json{{"status", {{"conditions", Json::array({1, "Ready"})}}}}}) {
    NodeView v = NodeView::Parse(node);
    EXPECT_EQ(v.meta.name, "");
    EXPECT_FALSE(v.unschedulable);
    EXPECT_TRUE(v.taints.empty());
    EXPECT_TRUE(v.conditions.empty());
    EXPECT_EQ(v.ReadyStatus(), "");
    EXPECT_TRUE(v.Allocatable().empty());
  }
}

TEST(NodeWritersTest, MarkUnknownThenRestore) {
  Json node = Json::parse(R"({"status": {"conditions": [
      {"type": "Ready", "status": "True", "reason": "KubeletReady",
       "lastHeartbeatTime": "2023-12-31T23:59:00Z", "lastTransitionTime": "2023-12-31T00:00:00Z"},
      {"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory"},
      {"type": "Custom", "status": "Unknown", "reason": "ProbeFailed"}]}})");
  ASSERT_TRUE(MarkNodeConditionsUnknown(node, kNow));
  const Json& conds = node["status"]["conditions"];
  ASSERT_EQ(conds.size(), 3u);
  for (int i : {0, 1}) {
    EXPECT_EQ(conds[i]["status"], "Unknown");
    EXPECT_EQ(conds[i]["reason"], "NodeStatusUnknown");
    EXPECT_EQ(conds[i]["message"], "Kubelet stopped posting node status.");
    EXPECT_EQ(conds[i]["lastTransitionTime"], kNowText);
  }
  // The heartbeat is the kubelet's: marking does not move it.
  EXPECT_EQ(conds[0]["lastHeartbeatTime"], "2023-12-31T23:59:00Z");
  EXPECT_EQ(conds[2]["reason"], "ProbeFailed");  // Already Unknown: left alone.
  EXPECT_FALSE(MarkNodeConditionsUnknown(node, kNow + absl::Seconds(5)));

  const absl::Time later = kNow + absl::Seconds(60);
  ASSERT_TRUE(RestoreNodeConditions(node, later));
  const std::string later_text = meta::FormatRfc3339(later);
  EXPECT_EQ(conds[0]["status"], "True");
  EXPECT_EQ(conds[0]["reason"], "KubeletReady");
  EXPECT_EQ(conds[0]["message"], "kubelet is posting ready status");
  EXPECT_EQ(conds[0]["lastTransitionTime"], later_text);
  EXPECT_EQ(conds[0]["lastHeartbeatTime"], later_text);
  EXPECT_EQ(conds[1]["status"], "False");
  EXPECT_EQ(conds[1]["reason"], "KubeletRecovered");
  EXPECT_EQ(conds[1]["message"], "node lease renewed");
  EXPECT_EQ(conds[2]["status"], "Unknown");  // The kubelet's own Unknown stays.
  EXPECT_EQ(conds[2]["reason"], "ProbeFailed");
  EXPECT_FALSE(RestoreNodeConditions(node, later));
}

TEST(NodeWritersTest, MarkUnknownAddsReadyToANodeThatNeverReported) {
  Json node = {{"metadata", {{"name", "n1"}}}};
  ASSERT_TRUE(MarkNodeConditionsUnknown(node, kNow));
  const Json& conds = node["status"]["conditions"];
  ASSERT_EQ(conds.size(), 1u);
  EXPECT_EQ(conds[0]["type"], "Ready");
  EXPECT_EQ(conds[0]["status"], "Unknown");
  EXPECT_EQ(conds[0]["reason"], "NodeStatusNeverUpdated");
  EXPECT_EQ(conds[0]["message"], "Kubelet never posted node status.");
  EXPECT_EQ(conds[0]["lastHeartbeatTime"], kNowText);
  EXPECT_EQ(conds[0]["lastTransitionTime"], kNowText);
  EXPECT_FALSE(MarkNodeConditionsUnknown(node, kNow));

  ASSERT_TRUE(RestoreNodeConditions(node, kNow));
  EXPECT_EQ(conds[0]["status"], "True");
  Json bare = Json::object();
  EXPECT_FALSE(RestoreNodeConditions(bare, kNow));
  EXPECT_EQ(bare, Json::object());
}

TEST(NodeWritersTest, TaintsAreAddedAndRemovedByKeyAndEffect) {
  const Taint unreachable_ns{"u", "", TaintEffect::kNoSchedule, kNowText};
  const Taint unreachable_ne{"u", "", TaintEffect::kNoExecute, kNowText};
  Json node = Json::parse(R"({"spec": {"taints": [
      {"key": "other", "value": "v", "effect": "NoSchedule", "extra": 1},
      {"key": "u", "effect": "NoSchedule", "timeAdded": "2023-01-01T00:00:00Z"}]}})");
  ASSERT_TRUE(AddMissingNodeTaints(node, {unreachable_ns, unreachable_ne}));
  EXPECT_EQ(node["spec"]["taints"], Json::parse(R"([
      {"key": "other", "value": "v", "effect": "NoSchedule", "extra": 1},
      {"key": "u", "effect": "NoSchedule", "timeAdded": "2023-01-01T00:00:00Z"},
      {"key": "u", "effect": "NoExecute", "timeAdded": "2024-01-01T00:00:00Z"}])"));
  EXPECT_FALSE(AddMissingNodeTaints(node, {unreachable_ns, unreachable_ne}));

  // Values and times are not compared when removing.
  ASSERT_TRUE(RemoveNodeTaints(node, {Taint{"u", "x", TaintEffect::kNoSchedule, ""},
                                      Taint{"u", "", TaintEffect::kNoExecute, ""}}));
  EXPECT_EQ(node["spec"]["taints"], Json::parse(R"([
      {"key": "other", "value": "v", "effect": "NoSchedule", "extra": 1}])"));
  EXPECT_FALSE(RemoveNodeTaints(node, {unreachable_ns}));
  ASSERT_TRUE(RemoveNodeTaints(node, {Taint{"other", "", TaintEffect::kNoSchedule, ""}}));
  EXPECT_EQ(node, Json::parse(R"({"spec": {}})"));  // Emptied: spec.taints goes.
}

TEST(NodeWritersTest, TaintWritersLeaveANodeWithoutTaintsAlone) {
  Json node = {{"metadata", {{"name", "n1"}}}};
  EXPECT_FALSE(RemoveNodeTaints(node, {Taint{"u", "", TaintEffect::kNoSchedule, ""}}));
  EXPECT_FALSE(AddMissingNodeTaints(node, {}));
  EXPECT_EQ(node, (Json{{"metadata", {{"name", "n1"}}}}));
  ASSERT_TRUE(AddMissingNodeTaints(node, {Taint{"k", "v", TaintEffect::kPreferNoSchedule, ""}}));
  EXPECT_EQ(node["spec"]["taints"],
            Json::parse(R"([{"key": "k", "value": "v", "effect": "PreferNoSchedule"}])"));
}

TEST(PodEvictionWriterTest, MarksThePodFailedWithDisruptionTarget) {
  const Json want_cond = {{"type", "DisruptionTarget"},
                          {"status", "True"},
                          {"reason", "DeletionByTaintManager"},
                          {"message", "Taint manager: deleting pod"},
                          {"lastTransitionTime", kNowText},
                          {"lastProbeTime", nullptr}};
  Json pod = {{"metadata", {{"name", "p"}}}};
  MarkPodEvictedByTaintManager(pod, kNow);
  EXPECT_EQ(pod["status"], (Json{{"phase", "Failed"}, {"conditions", Json::array({want_cond})}}));

  Json running = Json::parse(R"({"status": {"phase": "Running", "conditions": [
      {"type": "Ready", "status": "True"},
      {"type": "DisruptionTarget", "status": "True", "reason": "Other",
       "lastTransitionTime": "2023-01-01T00:00:00Z"}]}})");
  MarkPodEvictedByTaintManager(running, kNow);
  EXPECT_EQ(running["status"]["phase"], "Failed");
  ASSERT_EQ(running["status"]["conditions"].size(), 2u);
  EXPECT_EQ(running["status"]["conditions"][0], (Json{{"type", "Ready"}, {"status", "True"}}));
  EXPECT_EQ(running["status"]["conditions"][1], want_cond);  // Replaced, time stamped anew.
}

}  // namespace
}  // namespace batchd::api::core_v1
