// NodeAgent's node side: the lease (heartbeat and fencing), the Node
// object and its status, and disk pressure (reclaim and eviction).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/internal/agent_impl.h"
#include "api/core/v1/node_fence.h"
#include "api/json_access.h"
#include "api/meta/object_meta.h"
#include "auth/user.h"
#include "common/logging.h"
#include "common/status_macros.h"

namespace batchd::agent {

using api::Json;
using api::core_v1::PodView;
using internal::IsReason;
using internal::kHeartbeatKey;
namespace meta = api::meta;

namespace {

// Bytes as the kubelet's eviction messages print them ("1234Ki").
std::string KiB(int64_t bytes) {
  return absl::StrCat((std::max<int64_t>(bytes, 0) + 1023) / 1024, "Ki");
}

}  // namespace

absl::Status NodeAgent::Impl::Heartbeat() {
  // Timed from before the request: the server saw the renewal later.
  const absl::Time sent = clock.Now();
  if (absl::Status renewed = RenewLease(); !renewed.ok()) {
    if (fence.Lapsed(clock.Now()) && !fence_lapse_logged.exchange(true)) {
      BATCHD_LOG_WARN("node {}: no lease renewal succeeded for more than the fence period ({}): "
                      "pods are killed as their fence deadlines pass",
                      agent.opts_.node_name, absl::FormatDuration(fence.period()));
    }
    return renewed;
  }
  fence.Renewed(sent);
  if (fence_lapse_logged.exchange(false)) {
    BATCHD_LOG_INFO("node {}: lease renewed again", agent.opts_.node_name);
  }
  RefreshFences();
  if (clock.Now() - last_node_report < agent.opts_.node_status_report_period &&
      !force_node_report.exchange(false)) {
    return absl::OkStatus();
  }
  BATCHD_RETURN_IF_ERROR(RegisterNode());
  last_node_report = clock.Now();
  return absl::OkStatus();
}

void NodeAgent::Impl::RefreshFences() {
  if (!fence.enabled()) return;
  std::vector<std::pair<std::string, std::string>> known;  // uid, key
  {
    absl::MutexLock lock(&mu);
    for (const auto& [uid, key] : uid_key) known.emplace_back(uid, key);
  }
  const absl::Time now = clock.Now();
  for (const auto& [uid, key] : known) {
    std::vector<std::string> parts = absl::StrSplit(key, absl::MaxSplits('/', 1));
    client::ObjectRef pod = parts.size() == 2 ? pods->Get(parts[0], parts[1]) : nullptr;
    // Pods not started here have no sandbox (NotFound); finished ones need none.
    if (!pod || meta::GetUid(*pod) != uid || PodView::Parse(*pod).terminal()) continue;
    absl::Status s = agent.runtime_->SetFence(uid, fence.RemainingFor(*pod, now));
    if (!s.ok() && s.code() != absl::StatusCode::kNotFound) {
      BATCHD_LOG_WARN("node {}: fence deadline of pod {}: {}", agent.opts_.node_name, key,
                      s.ToString());
    }
  }
}

void NodeAgent::Impl::ClearFences() {
  if (fence.enabled()) return;
  for (const std::string& uid : agent.runtime_->List()) {
    (void)agent.runtime_->SetFence(uid, absl::InfiniteDuration());
  }
}

absl::Status NodeAgent::Impl::RegisterNode() {
  const AgentOptions& o = agent.opts_;
  absl::Time now = clock.Now();
  auto existing = client.Get(node_kind, "", o.node_name);
  if (!existing.ok() && !IsReason(existing.status(), "NotFound")) return existing.status();
  if (!existing.ok()) {
    Json node = internal::BuildNode(o, capacity, facts, now);
    auto created = client.Create(node_kind, "", node);
    if (!created.ok()) return created.status();
    existing = std::move(created);
  } else {
    Json want = internal::BuildNode(o, capacity, facts, now)["metadata"]["labels"];
    Json have = existing->value("metadata", Json::object()).value("labels", Json::object());
    bool missing = false;
    for (const auto& [k, v] : want.items()) missing |= !have.contains(k) || have[k] != v;
    // The fence period this agent announces (none when it does not fence).
    const Json want_fence = internal::FenceAnnotationValue(o);
    const Json have_fence = existing->value("metadata", Json::object())
                                .value("annotations", Json::object())
                                .value(api::core_v1::kFencePeriodAnnotation, Json());
    const bool fence_differs = want_fence != have_fence;
    // The log port's endpoint (address, port, serving CA) as this start has it.
    const std::string endpoint = internal::KubeletEndpointAnnotation(o);
    const bool endpoint_differs =
        !endpoint.empty() &&
        api::StringMember(api::MemberObject(existing->value("metadata", Json::object()),
                                            "annotations"),
                          auth::kKubeletEndpointAnnotation) != endpoint;
    if (missing || fence_differs || endpoint_differs) {
      Json meta_patch = {{"labels", want}};
      if (fence_differs) {
        meta_patch["annotations"][api::core_v1::kFencePeriodAnnotation] = want_fence;
      }
      if (endpoint_differs) meta_patch["annotations"][auth::kKubeletEndpointAnnotation] = endpoint;
      auto patched = client.MergePatch(node_kind, "", o.node_name,
                                       Json{{"metadata", std::move(meta_patch)}});
      if (!patched.ok()) return patched.status();
      existing = std::move(patched);
    }
  }
  Json node = *existing;
  NodeFacts f = facts;
  f.disk_pressure = disk_pressure.load();
  node["status"] = internal::NodeStatus(o, capacity, f, *existing, now);
  return client.UpdateStatusForVersion(node_kind, std::move(node)).status();
}

absl::Status NodeAgent::Impl::RenewLease() {
  const AgentOptions& o = agent.opts_;
  Json want = internal::BuildLease(o, clock.Now());
  auto lease = client.Get(lease_kind, "kube-node-lease", o.node_name);
  if (!lease.ok()) {
    if (!IsReason(lease.status(), "NotFound")) return lease.status();
    want["spec"]["acquireTime"] = want["spec"]["renewTime"];
    auto c = client.Create(lease_kind, "kube-node-lease", want);
    if (!c.ok() && !IsReason(c.status(), "AlreadyExists")) return c.status();
    return absl::OkStatus();
  }
  Json l = *lease;
  for (const auto& [k, v] : want["spec"].items()) l["spec"][k] = v;
  auto u = client.Update(lease_kind, std::move(l));
  return u.status();
}

void NodeAgent::Impl::CheckDisk() {
  const AgentOptions& o = agent.opts_;
  if (o.eviction_nodefs_available_fraction <= 0 && o.eviction_nodefs_available_bytes <= 0) return;
  const int64_t capacity_bytes = probe.DiskBytes(o.data_dir);
  int64_t available = probe.DiskAvailableBytes(o.data_dir);
  if (capacity_bytes <= 0 || available < 0) return;
  const int64_t threshold =
      o.eviction_nodefs_available_bytes > 0
          ? o.eviction_nodefs_available_bytes
          : static_cast<int64_t>(static_cast<double>(capacity_bytes) *
                                 o.eviction_nodefs_available_fraction);
  const absl::Time now = clock.Now();
  bool under = available < threshold;
  if (under) {
    // Reclaim first (the kubelet's container GC): logs of finished pods.
    bool reclaimed = false;
    for (const std::string& uid : agent.runtime_->List()) {
      auto rt = agent.runtime_->Status(uid);
      if (!rt.ok() || !rt->finished || rt->supervisor_alive) continue;
      if (agent.runtime_->LogBytes(uid) <= 0) continue;
      reclaimed |= agent.runtime_->RemoveLogs(uid).ok();
    }
    if (reclaimed) {
      available = probe.DiskAvailableBytes(o.data_dir);
      under = available >= 0 && available < threshold;
    }
  }
  const bool was = disk_pressure.load();
  if (under) {
    pressure_clear_since = absl::InfiniteFuture();
    if (!was) {
      BATCHD_LOG_WARN("node {}: disk pressure: {} available, threshold {}", o.node_name,
                      KiB(available), KiB(threshold));
      disk_pressure = true;
      force_node_report = true;
      controller->queue().Add(kHeartbeatKey);
    }
    (void)EvictLargestLogs(threshold, available);
    return;
  }
  if (!was) return;
  if (pressure_clear_since == absl::InfiniteFuture()) pressure_clear_since = now;
  if (now - pressure_clear_since < o.eviction_pressure_transition_period) return;
  BATCHD_LOG_INFO("node {}: disk pressure cleared ({} available)", o.node_name, KiB(available));
  disk_pressure = false;
  pressure_clear_since = absl::InfiniteFuture();
  force_node_report = true;
  controller->queue().Add(kHeartbeatKey);
}

bool NodeAgent::Impl::EvictLargestLogs(int64_t threshold, int64_t available) {
  // Running pods of this node (known to the informer), by log bytes.
  struct Candidate {
    int64_t bytes;
    std::string uid, key;
  };
  std::vector<Candidate> candidates;
  {
    absl::MutexLock lock(&mu);
    for (const auto& [uid, key] : uid_key) {
      if (!evictions.contains(uid)) candidates.push_back({0, uid, key});
    }
  }
  // Only pods whose containers run (a PodState belongs to its pod's
  // reconcile: the runtime is asked instead).
  std::erase_if(candidates, [this](const Candidate& c) {
    auto rt = agent.runtime_->Status(c.uid);
    return !rt.ok() || !rt->found || rt->finished || rt->stop_requested;
  });
  for (Candidate& c : candidates) c.bytes = agent.runtime_->LogBytes(c.uid);
  if (candidates.empty()) return false;
  const Candidate& victim = *std::max_element(
      candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
        return a.bytes != b.bytes ? a.bytes < b.bytes : a.uid > b.uid;
      });
  std::vector<std::string> parts = absl::StrSplit(victim.key, absl::MaxSplits('/', 1));
  client::ObjectRef pod = parts.size() == 2 ? pods->Get(parts[0], parts[1]) : nullptr;
  if (!pod || meta::GetUid(*pod) != victim.uid) return false;
  std::string message = absl::StrCat("The node was low on resource: ephemeral-storage. ",
                                     "Threshold quantity: ", KiB(threshold),
                                     ", available: ", KiB(available), ". ");
  for (const Json& c : api::MemberArray(api::MemberObject(*pod, "spec"), "containers")) {
    absl::StrAppend(&message, "Container ", c.value("name", ""), " was using ",
                    KiB(victim.bytes), ", request is 0, has larger consumption of "
                    "ephemeral-storage. ");
    break;  // the pod's log bytes are counted for the pod, named for its first container
  }
  BATCHD_LOG_WARN("node {}: evicting pod {} ({} of logs): disk pressure", agent.opts_.node_name,
                  victim.key, KiB(victim.bytes));
  {
    // The pod's own reconcile takes it from here (ReconcilePod): it records
    // the reason before anything else and stops the pod at once.
    absl::MutexLock lock(&mu);
    evictions[victim.uid] = {"Evicted", message};
  }
  Warn(*pod, "Evicted", message);
  controller->queue().Add(victim.key);
  return true;
}

}  // namespace batchd::agent
