#include "cmd/node_metrics.h"

#include <gtest/gtest.h>

namespace batchd::cmd {
namespace {

using api::Json;

TEST(NodeMetrics, ConditionsUnschedulableAndAllocatable) {
  Json ready = Json::parse(R"({"metadata": {"name": "b"},
    "status": {"conditions": [{"type": "Ready", "status": "True"}],
               "allocatable": {"cpu": "1500m", "memory": "1Ki", "nvidia.com/gpu": "2"}}})");
  Json lost = Json::parse(R"({"metadata": {"name": "a"}, "spec": {"unschedulable": true},
    "status": {"conditions": [{"type": "Ready", "status": "Unknown"},
                              {"type": "DiskPressure", "status": "False"}]}})");
  std::string out;
  AppendNodeMetrics({&ready, &lost}, &out);
  EXPECT_NE(out.find("# TYPE kube_node_status_condition gauge\n"), std::string::npos);
  // Sorted by node name: "a" first.
  EXPECT_LT(out.find("node=\"a\""), out.find("node=\"b\""));
  EXPECT_NE(out.find("kube_node_status_condition{node=\"a\",condition=\"Ready\",status=\"unknown\"} 1\n"),
            std::string::npos);
  EXPECT_NE(out.find("kube_node_status_condition{node=\"a\",condition=\"Ready\",status=\"true\"} 0\n"),
            std::string::npos);
  EXPECT_NE(out.find("kube_node_status_condition{node=\"a\",condition=\"DiskPressure\",status=\"false\"} 1\n"),
            std::string::npos);
  EXPECT_NE(out.find("kube_node_status_condition{node=\"b\",condition=\"Ready\",status=\"true\"} 1\n"),
            std::string::npos);
  EXPECT_NE(out.find("kube_node_spec_unschedulable{node=\"a\"} 1\n"), std::string::npos);
  EXPECT_NE(out.find("kube_node_spec_unschedulable{node=\"b\"} 0\n"), std::string::npos);
  EXPECT_NE(out.find("kube_node_status_allocatable{node=\"b\",resource=\"cpu\",unit=\"core\"} 1.5\n"),
            std::string::npos);
  EXPECT_NE(out.find("kube_node_status_allocatable{node=\"b\",resource=\"memory\",unit=\"byte\"} 1024\n"),
            std::string::npos);
  EXPECT_NE(
      out.find("kube_node_status_allocatable{node=\"b\",resource=\"nvidia_com_gpu\",unit=\"integer\"} 2\n"),
      std::string::npos);
}

TEST(NodeMetrics, NoNodesStillDeclaresFamilies) {
  std::string out;
  AppendNodeMetrics({}, &out);
  EXPECT_NE(out.find("# TYPE kube_node_status_condition gauge"), std::string::npos);
  EXPECT_EQ(out.find("kube_node_status_condition{"), std::string::npos);
}

TEST(NodeMetrics, LabelValuesAreEscaped) {
  Json odd = Json::parse(R"({"metadata": {"name": "x\"y"},
    "status": {"conditions": [{"type": "Ready", "status": "False"}]}})");
  std::string out;
  AppendNodeMetrics({&odd}, &out);
  EXPECT_NE(out.find("node=\"x\\\"y\",condition=\"Ready\",status=\"false\"} 1"), std::string::npos);
}

}  // namespace
}  // namespace batchd::cmd
