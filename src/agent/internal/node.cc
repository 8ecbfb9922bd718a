#include "agent/internal/node.h"

#include "absl/strings/str_cat.h"
#include "api/core/v1/node_fence.h"
#include "api/meta/time_util.h"
#include "auth/user.h"

namespace batchd::agent::internal {

using api::Json;

namespace {

Json Condition(const std::string& type, bool status, const std::string& reason,
               const std::string& message, const Json& old_conds, absl::Time now) {
  std::string s = status ? "True" : "False";
  std::string ts = api::meta::FormatRfc3339(now);
  std::string ltt = ts;
  if (old_conds.is_array()) {
    for (const Json& c : old_conds) {
      if (c.value("type", "") == type && c.value("status", "") == s &&
          c.contains("lastTransitionTime")) {
        ltt = c["lastTransitionTime"];
      }
    }
  }
  return {{"type", type},         {"status", s},          {"reason", reason},
          {"message", message},   {"lastHeartbeatTime", ts}, {"lastTransitionTime", ltt}};
}

}  // namespace

Json NodeCapacity(const AgentOptions& opts, HostProbe& probe) {
  Json cap = {{"cpu", std::to_string(probe.CpuCount())},
              {"memory", absl::StrCat(probe.MemoryBytes() / 1024, "Ki")},
              {"ephemeral-storage", absl::StrCat(probe.DiskBytes(opts.data_dir) / 1024, "Ki")},
              {"pods", std::to_string(opts.max_pods)}};
  if (int gpus = probe.GpuCount(); gpus > 0) cap["nvidia.com/gpu"] = std::to_string(gpus);
  return cap;
}

Json NodeStatus(const AgentOptions& opts, const Json& capacity, const NodeFacts& facts,
                const Json& existing, absl::Time now) {
  Json old_conds = existing.is_object() && existing.contains("status")
                       ? existing["status"].value("conditions", Json::array())
                       : Json::array();
  Json conds = Json::array();
  conds.push_back(Condition("MemoryPressure", false, "KubeletHasSufficientMemory",
                            "kubelet has sufficient memory available", old_conds, now));
  conds.push_back(facts.disk_pressure
                      ? Condition("DiskPressure", true, "KubeletHasDiskPressure",
                                  "kubelet has disk pressure", old_conds, now)
                      : Condition("DiskPressure", false, "KubeletHasNoDiskPressure",
                                  "kubelet has no disk pressure", old_conds, now));
  conds.push_back(Condition("PIDPressure", false, "KubeletHasSufficientPID",
                            "kubelet has sufficient PID available", old_conds, now));
  conds.push_back(Condition("Ready", true, "KubeletReady", "batchd agent is posting ready status",
                            old_conds, now));
  return {
      {"capacity", capacity},
      {"allocatable", capacity},
      {"conditions", conds},
      {"addresses",
       Json::array({{{"type", "InternalIP"}, {"address", opts.host_ip}},
                    {{"type", "Hostname"},
                     {"address", facts.hostname.empty() ? opts.node_name : facts.hostname}}})},
      {"daemonEndpoints", {{"kubeletEndpoint", {{"Port", opts.log_port}}}}},
      {"nodeInfo",
       {{"machineID", facts.machine_id},
        {"systemUUID", facts.machine_id},
        {"bootID", facts.boot_id},
        {"kernelVersion", facts.kernel_version},
        {"osImage", facts.os_image},
        {"containerRuntimeVersion", "batchd://0.1.0"},
        {"kubeletVersion", "v1.32.0-batchd"},
        {"kubeProxyVersion", ""},
        {"operatingSystem", "linux"},
        {"architecture", facts.arch}}},
  };
}

Json BuildNode(const AgentOptions& opts, const Json& capacity, const NodeFacts& facts,
               absl::Time now) {
  Json labels = {{"kubernetes.io/hostname", opts.node_name},
                 {"kubernetes.io/os", "linux"},
                 {"kubernetes.io/arch", facts.arch},
                 {"beta.kubernetes.io/os", "linux"},
                 {"beta.kubernetes.io/arch", facts.arch}};
  for (const auto& [k, v] : opts.labels) labels[k] = v;
  Json node = {{"apiVersion", "v1"},
               {"kind", "Node"},
               {"metadata", {{"name", opts.node_name}, {"labels", labels}}},
               {"spec", Json::object()}};
  if (std::string ep = KubeletEndpointAnnotation(opts); !ep.empty()) {
    node["metadata"]["annotations"][auth::kKubeletEndpointAnnotation] = ep;
  }
  if (opts.taints.is_array() && !opts.taints.empty()) node["spec"]["taints"] = opts.taints;
  if (Json fence = FenceAnnotationValue(opts); !fence.is_null()) {
    node["metadata"]["annotations"][api::core_v1::kFencePeriodAnnotation] = fence;
  }
  node["status"] = NodeStatus(opts, capacity, facts, Json(), now);
  return node;
}

std::string KubeletEndpointAnnotation(const AgentOptions& opts) {
  if (opts.serving_ca_pem.empty() || opts.log_port <= 0) return "";
  return Json{{"address", opts.host_ip}, {"port", opts.log_port}, {"ca", opts.serving_ca_pem}}
      .dump();
}

Json FenceAnnotationValue(const AgentOptions& opts) {
  if (opts.fence_period <= absl::ZeroDuration()) return Json();
  return std::to_string(absl::ToInt64Seconds(absl::Ceil(opts.fence_period, absl::Seconds(1))));
}

Json BuildLease(const AgentOptions& opts, absl::Time now) {
  std::string t = api::meta::FormatRfc3339Micro(now);
  return {{"apiVersion", "coordination.k8s.io/v1"},
          {"kind", "Lease"},
          {"metadata", {{"name", opts.node_name}, {"namespace", "kube-node-lease"}}},
          {"spec",
           {{"holderIdentity", opts.node_name},
            {"leaseDurationSeconds", absl::ToInt64Seconds(opts.lease_duration)},
            {"renewTime", t}}}};
}

}  // namespace batchd::agent::internal
