// The API server's ResourceMetricsSource (metrics.k8s.io, kubectl top): the
// local agent's usage directly, a remote agent's through its /stats/summary,
// and a simulated node's from the requests of the pods running on it.
#include <memory>

#include "absl/strings/str_cat.h"
#include "agent/agent.h"
#include "agent/internal/kubelet_client.h"
#include "api/json_access.h"
#include "api/meta/object_meta.h"
#include "api/resource/quantity.h"
#include "client/http_client.h"
#include "registry/errors.h"

namespace batchd::agent {

namespace {

using api::Json;

// The summary of a remote agent is small (one entry per container on the
// node); a larger answer is refused rather than buffered.
constexpr size_t kMaxSummaryBytes = 16 << 20;

// The window simulated usage is reported over (a simulated pod uses its
// requests all the time; kubectl shows the window only in -o yaml).
constexpr absl::Duration kSimulatedWindow = absl::Seconds(10);

int64_t Requested(const Json& container, const char* resource, bool milli) {
  const Json& q = api::MemberAt(container, {"resources", "requests", resource});
  if (q.is_null()) return 0;
  absl::StatusOr<api::Quantity> v = api::Quantity::FromJson(q);
  if (!v.ok()) return 0;
  return milli ? v->MilliValue() : v->Value();
}

class AgentMetricsSource : public apiserver::ResourceMetricsSource {
 public:
  AgentMetricsSource(client::Client& client, Clock& clock, std::string local_node,
                     NodeAgent* local, KubeletClientOptions kubelet)
      : client_(client), clock_(clock), local_node_(std::move(local_node)), local_(local),
        kubelet_(std::move(kubelet)) {}

  absl::StatusOr<apiserver::NodeUsageSummary> NodeUsage(const Json& node) override {
    const Json& meta = api::MemberObject(node, "metadata");
    const std::string name = api::CopyStringMember(meta, "name");
    // agent/sim/sim_kubelet.h's kSimulatedAnnotation.
    if (api::StringMember(api::MemberObject(meta, "annotations"), "batchd.io/simulated") ==
        "true") {
      return Simulated(name);
    }
    if (local_ != nullptr && name == local_node_) return local_->ResourceUsage();
    // Only where the node itself said, verifying its serving certificate.
    auto t = internal::KubeletTargetFor(node, kubelet_);
    if (!t.ok()) return absl::UnavailableError(t.status().message());
    client::HttpClientOptions ho = t->options;
    ho.user_agent = "batchd-metrics";
    ho.connect_timeout = absl::Seconds(5);
    ho.request_timeout = absl::Seconds(10);  // a stalled agent holds no request longer
    ho.max_idle_connections = 0;
    // The scheme is the caller's (it outlives this call): not owned here.
    std::shared_ptr<const api::Scheme> scheme(std::shared_ptr<const api::Scheme>(),
                                              &client_.scheme());
    auto c = client::HttpClient::Create(t->base_url, scheme, ho);
    if (!c.ok()) return c.status();
    auto resp = (*c)->Do("GET", "/stats/summary");
    if (!resp.ok()) return resp.status();
    if (resp->code != 200) return client::StatusFromResponse(resp->code, resp->body);
    if (resp->body.size() > kMaxSummaryBytes) {
      return absl::ResourceExhaustedError("node summary over 16 MiB");
    }
    Json j = Json::parse(resp->body, nullptr, false);
    if (j.is_discarded()) return absl::InvalidArgumentError("node summary is not JSON");
    return apiserver::SummaryFromJson(j);
  }

 private:
  absl::StatusOr<apiserver::NodeUsageSummary> Simulated(const std::string& node) {
    auto pods = client_.List(client_.Kind("", "v1", "pods"), "",
                             client::Selector{"", absl::StrCat("spec.nodeName=", node)});
    if (!pods.ok()) return pods.status();
    const absl::Time now = clock_.Now();
    apiserver::NodeUsageSummary s;
    s.node_name = node;
    s.usage = {0, 0, now, kSimulatedWindow};
    for (const Json& p : pods->items) {
      if (api::StringMember(api::MemberObject(p, "status"), "phase") != "Running") continue;
      const Json& meta = api::MemberObject(p, "metadata");
      apiserver::PodUsageSummary pu{api::CopyStringMember(meta, "namespace"),
                                    api::CopyStringMember(meta, "name"),
                                    api::CopyStringMember(meta, "uid"),
                                    {}};
      for (const Json& c : api::MemberArray(api::MemberObject(p, "spec"), "containers")) {
        apiserver::ResourceUsage u{Requested(c, "cpu", true) * 1000000,
                                   Requested(c, "memory", false), now, kSimulatedWindow};
        s.usage.cpu_nanocores += u.cpu_nanocores;
        s.usage.memory_bytes += u.memory_bytes;
        pu.containers.push_back({api::CopyStringMember(c, "name"), u});
      }
      s.pods.push_back(std::move(pu));
    }
    return s;
  }

  client::Client& client_;
  Clock& clock_;
  const std::string local_node_;
  NodeAgent* const local_;
  const KubeletClientOptions kubelet_;
};

}  // namespace

std::unique_ptr<apiserver::ResourceMetricsSource> NewResourceMetricsSource(
    client::Client& client, Clock& clock, std::string local_node, NodeAgent* local,
    KubeletClientOptions kubelet) {
  return std::make_unique<AgentMetricsSource>(client, clock, std::move(local_node), local,
                                              std::move(kubelet));
}

}  // namespace batchd::agent
