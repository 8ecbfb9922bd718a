#include <gtest/gtest.h>

#include "api/core/v1/internal/pods.h"

namespace batchd::api::core_v1::internal {
namespace {

absl::Time Now() {
  absl::Time t;
  std::string err;
  EXPECT_TRUE(absl::ParseTime(absl::RFC3339_full, "2024-01-01T01:00:00Z", &t, &err));
  return t;
}

Json PodWith(const std::string& status, int containers = 1) {
  Json pod = {{"metadata", {{"name", "p"}, {"creationTimestamp", "2024-01-01T00:00:00Z"}}},
              {"spec", {{"containers", Json::array()}}},
              {"status", Json::parse(status)}};
  for (int i = 0; i < containers; ++i) {
    pod["spec"]["containers"].push_back({{"name", "c" + std::to_string(i)}});
  }
  return pod;
}

TEST(PodTableTest, Rows) {
  struct Case {
    std::string name;
    Json pod;
    std::vector<Json> want;  // Ready, Status, Restarts, Age, IP, Node, Nominated, Gates.
  };
  Json terminating = PodWith(R"({"phase": "Running", "containerStatuses": [
      {"name": "c0", "ready": true, "restartCount": 0, "state": {"running": {}}}]})");
  terminating["metadata"]["deletionTimestamp"] = "2024-01-01T00:59:00Z";
  Json running = PodWith(R"({"phase": "Running", "podIPs": [{"ip": "10.0.0.5"}],
      "containerStatuses": [
      {"name": "c0", "ready": true, "restartCount": 2, "state": {"running": {}},
       "lastState": {"terminated": {"exitCode": 1, "finishedAt": "2024-01-01T00:55:00Z"}}},
      {"name": "c1", "ready": false, "restartCount": 0, "state": {"running": {}}}]})", 2);
  running["spec"]["nodeName"] = "n1";
  const std::vector<Case> cases = {
      {"running with restarts", running,
       {"1/2", "Running", "2 (5m ago)", "60m", "10.0.0.5", "n1", "<none>", "<none>"}},
      {"completed", PodWith(R"({"phase": "Succeeded", "containerStatuses": [
          {"name": "c0", "ready": false, "restartCount": 0,
           "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]})"),
       {"0/1", "Completed", "0", "60m", "<none>", "<none>", "<none>", "<none>"}},
      {"error", PodWith(R"({"phase": "Failed", "containerStatuses": [
          {"name": "c0", "ready": false, "restartCount": 0,
           "state": {"terminated": {"exitCode": 1, "reason": "Error"}}}]})"),
       {"0/1", "Error", "0", "60m", "<none>", "<none>", "<none>", "<none>"}},
      {"exit code without reason", PodWith(R"({"phase": "Failed", "containerStatuses": [
          {"name": "c0", "ready": false, "restartCount": 0,
           "state": {"terminated": {"exitCode": 3}}}]})"),
       {"0/1", "ExitCode:3", "0", "60m", "<none>", "<none>", "<none>", "<none>"}},
      {"pending container creating", PodWith(R"({"phase": "Pending", "containerStatuses": [
          {"name": "c0", "ready": false, "restartCount": 0,
           "state": {"waiting": {"reason": "ContainerCreating"}}}]})"),
       {"0/1", "ContainerCreating", "0", "60m", "<none>", "<none>", "<none>", "<none>"}},
      {"pending no status", PodWith(R"({"phase": "Pending"})"),
       {"0/1", "Pending", "0", "60m", "<none>", "<none>", "<none>", "<none>"}},
      {"scheduling gated", PodWith(R"({"phase": "Pending", "conditions": [
          {"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]})"),
       {"0/1", "SchedulingGated", "0", "60m", "<none>", "<none>", "<none>", "<none>"}},
      {"terminating", terminating,
       {"1/1", "Terminating", "0", "60m", "<none>", "<none>", "<none>", "<none>"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(PodRowCells(c.pod, Now()), c.want);
  }
  EXPECT_EQ(PodColumns().size(), 8u);
}

TEST(PodTableTest, InitContainers) {
  struct Case {
    std::string name;
    std::string init_status;
    std::string want_status;
  };
  const std::vector<Case> cases = {
      {"first init running", R"([{"name": "i0", "ready": false, "restartCount": 0,
           "state": {"running": {}}}])", "Init:0/2"},
      {"init failed", R"([{"name": "i0", "ready": false, "restartCount": 0,
           "state": {"terminated": {"exitCode": 1, "reason": "Error"}}}])", "Init:Error"},
      {"init crash loop", R"([{"name": "i0", "ready": false, "restartCount": 3,
           "state": {"waiting": {"reason": "CrashLoopBackOff"}}}])", "Init:CrashLoopBackOff"},
      {"second init", R"([{"name": "i0", "ready": false, "restartCount": 0,
           "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
           {"name": "i1", "ready": false, "restartCount": 0, "state": {"running": {}}}])",
       "Init:1/2"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Json pod = PodWith(R"({"phase": "Pending"})");
    pod["spec"]["initContainers"] = {{{"name", "i0"}}, {{"name", "i1"}}};
    pod["status"]["initContainerStatuses"] = Json::parse(c.init_status);
    EXPECT_EQ(PodRowCells(pod, Now())[1], c.want_status);
  }
}

}  // namespace
}  // namespace batchd::api::core_v1::internal
