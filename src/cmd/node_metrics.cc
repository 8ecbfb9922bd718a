#include "cmd/node_metrics.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "api/resource/quantity.h"

namespace batchd::cmd {
namespace {

std::string Escape(std::string_view v) {
  return absl::StrReplaceAll(std::string(v), {{"\\", "\\\\"}, {"\"", "\\\""}, {"\n", "\\n"}});
}

// kube-state-metrics' label value for a resource: "nvidia.com/gpu" ->
// "nvidia_com_gpu".
std::string ResourceLabel(const std::string& r) {
  std::string out(r);
  for (char& c : out) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return out;
}

}  // namespace

void AppendNodeMetrics(const std::vector<const api::Json*>& in, std::string* out) {
  std::vector<const api::Json*> nodes = in;
  std::sort(nodes.begin(), nodes.end(), [](const api::Json* a, const api::Json* b) {
    return api::StringMember(api::MemberObject(*a, "metadata"), "name") <
           api::StringMember(api::MemberObject(*b, "metadata"), "name");
  });
  absl::StrAppend(out,
                  "# HELP kube_node_status_condition The condition of a cluster node.\n"
                  "# TYPE kube_node_status_condition gauge\n");
  for (const api::Json* n : nodes) {
    std::string node = Escape(api::StringMember(api::MemberObject(*n, "metadata"), "name"));
    for (const api::Json& c : api::MemberArray(api::MemberObject(*n, "status"), "conditions")) {
      std::string type = Escape(api::StringMember(c, "type"));
      if (type.empty()) continue;
      std::string status = absl::AsciiStrToLower(std::string(api::StringMember(c, "status", "Unknown")));
      for (const char* s : {"true", "false", "unknown"}) {
        absl::StrAppend(out, "kube_node_status_condition{node=\"", node, "\",condition=\"", type,
                        "\",status=\"", s, "\"} ", status == s ? 1 : 0, "\n");
      }
    }
  }
  absl::StrAppend(out,
                  "# HELP kube_node_spec_unschedulable Whether a node can schedule new pods.\n"
                  "# TYPE kube_node_spec_unschedulable gauge\n");
  for (const api::Json* n : nodes) {
    std::string node = Escape(api::StringMember(api::MemberObject(*n, "metadata"), "name"));
    bool u = api::AsBool(api::Member(api::MemberObject(*n, "spec"), "unschedulable"));
    absl::StrAppend(out, "kube_node_spec_unschedulable{node=\"", node, "\"} ", u ? 1 : 0, "\n");
  }
  absl::StrAppend(out,
                  "# HELP kube_node_status_allocatable The allocatable for different resources "
                  "of a node that are available for scheduling.\n"
                  "# TYPE kube_node_status_allocatable gauge\n");
  for (const api::Json* n : nodes) {
    std::string node = Escape(api::StringMember(api::MemberObject(*n, "metadata"), "name"));
    const api::Json& alloc = api::MemberObject(api::MemberObject(*n, "status"), "allocatable");
    for (auto it = alloc.begin(); it != alloc.end(); ++it) {
      absl::StatusOr<api::Quantity> q = api::Quantity::FromJson(it.value());
      if (!q.ok()) continue;
      const std::string& r = it.key();
      const char* unit = r == "cpu" ? "core" : (r == "memory" || r == "ephemeral-storage") ? "byte"
                                                                                         : "integer";
      absl::StrAppend(out, "kube_node_status_allocatable{node=\"", node, "\",resource=\"",
                      Escape(ResourceLabel(r)), "\",unit=\"", unit, "\"} ",
                      absl::StrFormat("%.17g", q->AsApproximateDouble()), "\n");
    }
  }
}

}  // namespace batchd::cmd
