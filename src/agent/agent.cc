#include "agent/agent.h"

#include <filesystem>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "agent/internal/agent_impl.h"
#include "agent/internal/fence.h"
#include "agent/internal/hosts.h"
#include "agent/internal/logs.h"
#include "agent/internal/resource_stats.h"
#include "agent/internal/node.h"
#include "agent/internal/pod_spec.h"
#include "agent/internal/pod_status.h"
#include "agent/internal/security.h"
#include "agent/internal/volumes.h"
#include "api/core/v1/claim_deletion.h"
#include "api/core/v1/node_fence.h"
#include "api/core/v1/pod_security.h"
#include "api/core/v1/pod_view.h"
#include "api/discovery/v1/endpoint_slice_view.h"
#include "api/json_access.h"
#include "api/meta/object_meta.h"
#include "api/meta/time_util.h"
#include "auth/user.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "common/string_view.h"
#include "reconcile/controller.h"
#include "reconcile/events.h"
#include "registry/errors.h"

namespace batchd::agent {

using api::Json;
namespace meta = api::meta;
using internal::IsReason;
using internal::kDiskKey;
using internal::kHeartbeatKey;
using internal::kOrphanPrefix;
using internal::kStatsKey;
using internal::PodState;

namespace {

constexpr char kDiskPressureTaint[] = "node.kubernetes.io/disk-pressure";


// Whether the pod tolerates node.kubernetes.io/disk-pressure:NoSchedule.
bool ToleratesDiskPressure(const Json& pod) {
  for (const Json& t : api::MemberArray(api::MemberObject(pod, "spec"), "tolerations")) {
    if (!t.is_object()) continue;
    const std::string key = t.value("key", "");
    const std::string op = t.value("operator", "Equal");
    const std::string effect = t.value("effect", "");
    if ((key.empty() && op == "Exists") || (key == kDiskPressureTaint)) {
      if (effect.empty() || effect == "NoSchedule") return true;
    }
  }
  return false;
}


using api::core_v1::PodView;

// spec.terminationGracePeriodSeconds, 30 s when unset (as the API defaults it).
absl::Duration TerminationGrace(const PodView& pod) {
  return absl::Seconds(pod.termination_grace_period_seconds.value_or(30));
}

// When spec.activeDeadlineSeconds runs out; nullopt without a (positive)
// deadline or a start time.
std::optional<absl::Time> ActiveDeadline(const PodView& pod) {
  const int64_t deadline = pod.active_deadline_seconds.value_or(0);
  if (deadline <= 0) return std::nullopt;
  const std::optional<absl::Time> start = api::meta::ParseOptionalRfc3339(pod.start_time);
  if (!start) return std::nullopt;
  return *start + absl::Seconds(deadline);
}


// "ns/subdomain": the headless Service whose slices name a pod's peers.
// The pod's annotations ask its (controller-driven) containers for a newer
// generation, or to start after a hold.
bool RestartDue(const Json& pod, const PodSandboxStatus& rt) {
  const internal::RestartRequest want = internal::RestartRequestOf(pod);
  if (want.generation < 0 || rt.generation < 0 || rt.finished) return false;
  return want.generation > rt.generation ||
         (want.generation == rt.generation && rt.held && !want.hold);
}

std::string PeerGroupKey(std::string_view ns, std::string_view subdomain) {
  return absl::StrCat(Sv(ns), "/", Sv(subdomain));
}

}  // namespace

PodState& NodeAgent::Impl::StateOf(const std::string& uid) {
  absl::MutexLock lock(&mu);
  auto [it, fresh] = states.try_emplace(uid);
  if (fresh) it->second.poll = agent.opts_.status_poll_min;
  return it->second;
}

void NodeAgent::Impl::Forget(const std::string& uid) {
  absl::MutexLock lock(&mu);
  states.erase(uid);
  evictions.erase(uid);
}

void NodeAgent::Impl::Setup() {
  const AgentOptions& o = agent.opts_;
  if (o.shared_pods != nullptr) {
    pods = o.shared_pods;
  } else {
    auto inf = std::make_unique<client::Informer>(
        client, pod_kind, "", client::Selector{"", "spec.nodeName=" + o.node_name});
    pods = &mgr.AddInformer(std::move(inf));
  }
  controller = &mgr.AddController(
      std::make_unique<reconcile::Controller>("node-agent", *this, clock));
  // The shared informer sees every pod: only those bound to this node count
  // (a pod's nodeName never changes once set).
  auto enqueue = [this, node = o.node_name](const client::ObjectRef& o) {
    if (PodView::Parse(*o).node_name == node) controller->Enqueue(*o);
  };
  pods->AddHandlers({[this, enqueue](const client::ObjectRef& o) {
                       IndexPod(o, false);
                       enqueue(o);
                     },
                     [this, enqueue](const client::ObjectRef&, const client::ObjectRef& n) {
                       IndexPod(n, false);
                       enqueue(n);
                     },
                     [this, enqueue](const client::ObjectRef& o) {
                       IndexPod(o, true);
                       enqueue(o);
                     }});
  if (o.shared_endpoint_slices != nullptr) {
    slices = o.shared_endpoint_slices;
  } else {
    slices = &mgr.AddInformer(std::make_unique<client::Informer>(
        client, client.Kind(api::discovery_v1::kGroup, "v1", "endpointslices")));
  }
  auto on_slice = [this](const client::ObjectRef& s) { OnSlice(s); };
  slices->AddHandlers({on_slice, [on_slice](const client::ObjectRef&,
                                            const client::ObjectRef& n) { on_slice(n); },
                       on_slice});
  if (o.events != nullptr) {
    events = o.events;
  } else {
    owned_events = std::make_unique<reconcile::ApiEventRecorder>(client, clock, "kubelet");
    events = owned_events.get();
  }
  logs = internal::NewLocalLogSource(*agent.runtime_, clock);
  internal::ResourceStats::Options so;
  so.node_name = o.node_name;
  so.node_usage = o.node_usage;
  stats = std::make_unique<internal::ResourceStats>(std::move(so), *agent.runtime_);
}

std::vector<internal::RunningPod> NodeAgent::Impl::KnownPods() {
  std::vector<internal::RunningPod> out;
  absl::MutexLock lock(&mu);
  for (const auto& [uid, key] : uid_key) {
    std::vector<std::string> parts = absl::StrSplit(key, absl::MaxSplits('/', 1));
    if (parts.size() == 2) out.push_back({uid, parts[0], parts[1]});
  }
  return out;
}

absl::StatusOr<reconcile::Result> NodeAgent::Impl::Reconcile(const std::string& key) {
  if (key == kHeartbeatKey) {
    // Never backs off beyond the period: a lease must not lapse because the
    // server was briefly away.
    if (absl::Status hb = Heartbeat(); !hb.ok()) {
      BATCHD_LOG_WARN("node {}: heartbeat failed: {}", agent.opts_.node_name, hb.ToString());
    }
    return reconcile::Result::After(agent.opts_.heartbeat_period);
  }
  if (key == kDiskKey) {
    CheckDisk();
    return reconcile::Result::After(agent.opts_.eviction_check_period);
  }
  if (key == kStatsKey) {
    stats->Collect(clock.Now(), KnownPods());
    return reconcile::Result::After(agent.opts_.stats_period);
  }
  if (absl::StartsWith(key, kOrphanPrefix)) {
    return ReconcileOrphan(key.substr(sizeof(kOrphanPrefix) - 1));
  }
  std::vector<std::string> parts = absl::StrSplit(key, absl::MaxSplits('/', 1));
  client::ObjectRef pod = parts.size() == 2 ? pods->Get(parts[0], parts[1]) : nullptr;
  std::string old_uid;
  {
    absl::MutexLock lock(&mu);
    auto it = key_uid.find(key);
    if (it != key_uid.end()) old_uid = it->second;
    const std::string uid = pod ? meta::GetUid(*pod) : "";
    if (!old_uid.empty() && old_uid != uid) uid_key.erase(old_uid);
    if (pod) {
      key_uid[key] = uid;
      uid_key[uid] = key;
    } else {
      key_uid.erase(key);
    }
  }
  // A pod gone (or replaced by a namesake): its sandbox is an orphan now.
  if (!old_uid.empty() && (!pod || meta::GetUid(*pod) != old_uid)) {
    controller->queue().Add(kOrphanPrefix + old_uid);
  }
  if (!pod) return reconcile::Result::Done();
  return ReconcilePod(*pod);
}

std::string NodeAgent::Impl::ClaimsRoot() const {
  return agent.opts_.claims_root.empty() ? agent.opts_.data_dir + "/volumes"
                                         : agent.opts_.claims_root;
}

std::string NodeAgent::Impl::ConfigVolumesRoot() const {
  return std::filesystem::path(ClaimsRoot()).parent_path().append("config-volumes").string();
}

void NodeAgent::Impl::RemoveConfigVolumes(const std::string& uid) {
  if (uid.empty() || uid.find('/') != std::string::npos || uid == "." || uid == "..") return;
  std::error_code ec;
  std::filesystem::remove_all(absl::StrCat(ConfigVolumesRoot(), "/", uid), ec);
  if (ec) BATCHD_LOG_WARN("removing the config volumes of pod {}: {}", uid, ec.message());
}

absl::StatusOr<std::optional<Json>> NodeAgent::Impl::LookupForEnv(std::string_view resource,
                                                                  const std::string& ns,
                                                                  const std::string& name) {
  auto got = client.Get(client.Kind("", "v1", std::string(resource)), ns, name);
  if (got.ok()) return std::optional<Json>(*std::move(got));
  if (IsReason(got.status(), "NotFound")) return std::optional<Json>();
  return got.status();
}

absl::StatusOr<reconcile::Result> NodeAgent::Impl::ReconcilePod(const Json& pod) {
  const PodView view = PodView::Parse(pod);
  if (view.node_name != agent.opts_.node_name) return reconcile::Result::Done();
  const std::string uid(view.meta.uid);
  PodState& st = StateOf(uid);
  std::optional<std::pair<std::string, std::string>> evicted;
  {
    absl::MutexLock lock(&mu);
    if (auto e = evictions.find(uid); e != evictions.end()) {
      evicted = std::move(e->second);
      evictions.erase(e);
    }
  }
  if (evicted && !view.terminal() && !view.meta.being_deleted()) {
    // The disk-pressure check chose this pod (EvictLargestLogs).
    if (!st.failed_reason) st.failed_reason = std::move(evicted);
    st.stop_requested = true;
    BATCHD_RETURN_IF_ERROR(agent.runtime_->Stop(uid, absl::ZeroDuration()));
  }
  if (view.meta.being_deleted()) return ReconcileDeleting(pod, view, st);
  if (view.terminal()) {
    // Finished pods stay (with their logs) until deleted; make sure nothing
    // of them still runs (e.g. a deadline or an outside status write). Once
    // the runtime said so, later events of the pod need not ask again.
    if (st.finished) return reconcile::Result::Done();
    auto rt = agent.runtime_->Status(uid);
    if (rt.ok() && rt->finished) st.finished = true;
    if (rt.ok() && rt->found && !rt->finished && !st.stop_requested) {
      // The API says the pod ended but it runs here: ended by someone else
      // (an eviction while this agent was away); its replacement may run
      // already, so this copy stops now, without a grace period.
      st.stop_requested = true;
      BATCHD_RETURN_IF_ERROR(agent.runtime_->Stop(uid, absl::ZeroDuration()));
    }
    return reconcile::Result::Done();
  }
  BATCHD_RETURN_IF_ERROR(EnsureStarted(pod, st));
  SyncHosts(pod, st);
  CheckDeadline(view, st);
  BATCHD_ASSIGN_OR_RETURN(PodSandboxStatus rt, agent.runtime_->Status(uid));
  if (RestartDue(pod, rt)) {
    // A controller asks for the containers to run again in place (or to
    // start after a hold): api/core/v1/restart_generation.h.
    const internal::RestartRequest want = internal::RestartRequestOf(pod);
    BATCHD_RETURN_IF_ERROR(agent.runtime_->RestartContainers(uid, want.generation, want.hold,
                                                             TerminationGrace(view)));
    BATCHD_ASSIGN_OR_RETURN(rt, agent.runtime_->Status(uid));
    st.poll = agent.opts_.status_poll_min;
  }
  st.finished = rt.finished;
  ReportRuntimeWarnings(pod, rt, st);
  // The shim ended the pod itself (an emptyDir outgrew its sizeLimit).
  if (!rt.reason.empty() && !st.failed_reason) st.failed_reason = {rt.reason, rt.message};
  if (DeferFirstStatus(pod, rt, st)) {
    return reconcile::Result::After(agent.opts_.first_status_delay);
  }
  if (rt.finished && !st.claims_deleted &&
      meta::GetAnnotation(pod, api::core_v1::kDeleteClaimsAnnotation) == "true" &&
      internal::ComputePhase(api::Member(pod, "spec"), rt, true) == "Succeeded") {
    // Before it is reported Succeeded (api/core/v1/claim_deletion.h).
    BATCHD_RETURN_IF_ERROR(
        internal::DeleteClaimDirectories(pod, ClaimsRoot()));
    st.claims_deleted = true;
  }
  BATCHD_RETURN_IF_ERROR(WriteStatus(pod, rt, st));
  if (st.config_error || !st.mount_error.empty()) {
    return reconcile::Result::After(absl::Seconds(10));
  }
  if (rt.finished) return reconcile::Result::Done();
  return Poll(view, st);
}

absl::Status NodeAgent::Impl::EnsureStarted(const Json& pod, PodState& st) {
  if (st.started) return absl::OkStatus();
  const AgentOptions& o = agent.opts_;
  // The kubelet's eviction admission: a new pod that does not tolerate the
  // disk-pressure taint is refused while the node has DiskPressure.
  if (disk_pressure.load() && !st.failed_reason && !ToleratesDiskPressure(pod) &&
      !agent.runtime_->Status(meta::GetUid(pod)).value_or(PodSandboxStatus{}).found) {
    st.failed_reason = {"Evicted", "The node had condition: [DiskPressure]. "};
    return absl::OkStatus();
  }
  Json p = pod;
  p["status"]["hostIP"] = o.host_ip;
  p["status"]["podIP"] = o.host_ip;
  internal::SandboxInputs in;
  in.allocatable = capacity;
  in.identity = internal::NodeIdentity{.agent_is_root = o.agent_is_root,
                                       .agent_uid = o.agent_uid,
                                       .agent_gid = o.agent_gid,
                                       .pod_user = o.pod_user,
                                       .pod_uid = o.pod_uid,
                                       .pod_gid = o.pod_gid,
                                       .lookup_uid = [this](int64_t uid) {
                                         return user_groups.Get(uid);
                                       }};
  in.pids_limit = o.pod_pids_limit;
  in.lookup = [this](std::string_view resource, const std::string& ns, const std::string& name) {
    return LookupForEnv(resource, ns, name);
  };
  std::vector<std::string> env_warnings;
  auto spec = internal::BuildSandboxSpec(p, in, &env_warnings);
  if (!spec.ok()) {
    // The kubelet's CreateContainerConfigError: the pod waits (retried), with
    // a Warning event "Failed" "Error: <text>" once per distinct text. The
    // text never holds a Secret's value (pod_spec.h).
    st.config_error = std::string(spec.status().message());
    if (st.config_error_reported != *st.config_error) {
      Warn(pod, "Failed", "Error: " + *st.config_error);
      st.config_error_reported = *st.config_error;
    }
    return absl::OkStatus();
  }
  st.config_error.reset();
  // Volumes first: a failed hostPath check keeps the pod ContainerCreating
  // (retried), as the kubelet's FailedMount does.
  internal::ConfigVolumes config{absl::StrCat(ConfigVolumesRoot(), "/", spec->uid), in.lookup};
  absl::StatusOr<internal::PodVolumes> volumes =
      internal::ResolveVolumes(pod, ClaimsRoot(), spec->owner_uid, spec->owner_gid, &config);
  if (!volumes.ok()) {
    const std::string message(volumes.status().message());
    if (st.mount_error != message) Warn(pod, "FailedMount", message);
    st.mount_error = message;
    return absl::OkStatus();
  }
  st.mount_error.clear();
  spec->volumes = volumes->volumes;
  for (auto* list : {&spec->init_containers, &spec->containers}) {
    for (ContainerSpec& c : *list) c.mounts = volumes->mounts[c.name];
  }
  bool memory_volume = false;
  for (const VolumeSpec& v : spec->volumes) memory_volume |= v.memory;
  const PodView view = PodView::Parse(pod);
  const internal::PodNames names = internal::NamesOf(pod);
  // A host name alone (every Indexed Job pod has one) does not isolate a
  // pod: that costs a namespace and a hosts file per pod (about a tenth more
  // time per trivial pod), for a name nobody else can resolve without a
  // Service. Its HOSTNAME is set either way.
  const bool named = !view.subdomain.empty() ||
                     !api::MemberArray(api::MemberObject(pod, "spec"), "hostAliases").empty();
  spec->isolate = o.pod_isolation && (named || volumes->any_mount() || memory_volume);
  spec->hostname = names.uts_hostname;
  if (spec->isolate || named) {
    st.hosts_generation = slice_generation.load();
    st.hosts = RenderHosts(pod);
    spec->hosts = st.hosts;
  }
  if (fence.enabled()) spec->fence_remaining = fence.RemainingFor(pod, clock.Now());
  BATCHD_RETURN_IF_ERROR(agent.runtime_->Start(*spec));
  // A re-adopted pod keeps its sandbox: bring its hosts file up to date.
  if (!spec->hosts.empty()) (void)agent.runtime_->WriteHosts(spec->uid, spec->hosts);
  st.started = true;
  // What the kubelet would warn about, once per start.
  for (const std::string& w : env_warnings) Warn(pod, "InvalidEnvironmentVariableNames", w);
  const std::vector<std::string> unapplied = api::core_v1::UnappliedSecurityFields(pod);
  if (!unapplied.empty()) {
    Warn(pod, "SecurityContextNotApplied",
         absl::StrCat("batchd does not apply: ", absl::StrJoin(unapplied, "; ")));
  }
  if (!o.pod_isolation && !view.subdomain.empty()) {
    Warn(pod, "PeerNamesNotResolvable",
         "peer names resolve only with a root agent: this pod's hosts file is not its "
         "/etc/hosts; $BATCHD_HOSTS_FILE names it");
  }
  if (!o.pod_isolation && volumes->any_mount()) {
    Warn(pod, "VolumesNotMounted",
         "volume mounts need a root agent: nothing is mounted at the mount paths; "
         "$BATCHD_VOLUME_<NAME> names each volume's directory");
  }
  return absl::OkStatus();
}

std::string NodeAgent::Impl::RenderHosts(const Json& pod) const {
  const PodView view = PodView::Parse(pod);
  std::vector<internal::Peer> peers;
  if (!view.subdomain.empty()) {
    const std::string selector =
        absl::StrCat(api::discovery_v1::kServiceNameLabel, "=", Sv(view.subdomain));
    for (const client::ObjectRef& s :
         slices->ListMatching(std::string(view.meta.namespace_), selector)) {
      const api::discovery_v1::EndpointSliceView slice =
          api::discovery_v1::EndpointSliceView::Parse(*s);
      if (slice.address_type != "IPv4" && slice.address_type != "IPv6") continue;
      for (const api::discovery_v1::EndpointView& e : slice.endpoints) {
        if (e.hostname.empty() || e.addresses.empty() || !e.ResolvesAsReady()) continue;
        peers.push_back({std::string(e.hostname), std::string(e.addresses[0])});
      }
    }
  }
  return internal::RenderHostsFile(agent.opts_.node_hosts, view.meta.namespace_, view.meta.name,
                                   internal::NamesOf(pod), view.subdomain, agent.opts_.host_ip,
                                   std::move(peers),
                                   api::FindMember(api::MemberObject(pod, "spec"), "hostAliases"));
}

void NodeAgent::Impl::SyncHosts(const Json& pod, PodState& st) {
  if (!st.started || st.hosts.empty()) return;
  const uint64_t generation = slice_generation.load();
  if (generation == st.hosts_generation) return;
  std::string hosts = RenderHosts(pod);
  st.hosts_generation = generation;
  if (hosts == st.hosts) return;
  absl::Status s = agent.runtime_->WriteHosts(std::string(PodView::Parse(pod).meta.uid), hosts);
  if (!s.ok()) {
    BATCHD_LOG_WARN("node {}: hosts file of pod {}: {}", agent.opts_.node_name,
                    meta::GetName(pod), s.ToString());
    return;
  }
  st.hosts = std::move(hosts);
}

void NodeAgent::Impl::IndexPod(const client::ObjectRef& pod, bool deleted) {
  const PodView v = PodView::Parse(*pod);
  if (v.subdomain.empty() || v.node_name != agent.opts_.node_name) return;
  const std::string group = PeerGroupKey(v.meta.namespace_, v.subdomain);
  absl::MutexLock lock(&mu);
  if (deleted) {
    auto it = peer_groups.find(group);
    if (it == peer_groups.end()) return;
    it->second.erase(v.meta.Key());
    if (it->second.empty()) peer_groups.erase(it);
  } else {
    peer_groups[group].insert(v.meta.Key());
  }
}

void NodeAgent::Impl::OnSlice(const client::ObjectRef& slice) {
  const api::discovery_v1::EndpointSliceView v = api::discovery_v1::EndpointSliceView::Parse(*slice);
  if (v.service_name.empty()) return;
  slice_generation.fetch_add(1);
  std::vector<std::string> keys;
  {
    absl::MutexLock lock(&mu);
    auto it = peer_groups.find(PeerGroupKey(v.meta.namespace_, v.service_name));
    if (it == peer_groups.end()) return;
    keys.assign(it->second.begin(), it->second.end());
  }
  for (const std::string& k : keys) controller->queue().Add(k);
}

void NodeAgent::Impl::ReportRuntimeWarnings(const Json& pod, const PodSandboxStatus& rt,
                                            PodState& st) {
  if (rt.limits_warning.empty() || rt.limits_warning == st.limits_reported) return;
  st.limits_reported = rt.limits_warning;
  Warn(pod, "CgroupLimitsNotApplied", rt.limits_warning);
}

void NodeAgent::Impl::Warn(const Json& pod, const std::string& reason,
                           const std::string& message) {
  events->Event(pod, "Warning", reason, message);
}

void NodeAgent::Impl::CheckDeadline(const PodView& pod, PodState& st) {
  if (st.failed_reason) return;
  const std::optional<absl::Time> due = ActiveDeadline(pod);
  if (!due || clock.Now() < *due) return;
  st.failed_reason = {"DeadlineExceeded",
                      "Pod was active on the node longer than the specified deadline"};
  st.stop_requested = true;
  (void)agent.runtime_->Stop(std::string(pod.meta.uid), TerminationGrace(pod));
}

reconcile::Result NodeAgent::Impl::Poll(const PodView& pod, PodState& st) {
  absl::Duration next = st.poll;
  st.poll = std::min(st.poll * 2, agent.opts_.status_poll_max);
  if (!st.failed_reason) {
    if (const std::optional<absl::Time> due = ActiveDeadline(pod)) {
      next = std::max(absl::ZeroDuration(), std::min(next, *due - clock.Now()));
    }
  }
  return reconcile::Result::After(next);
}

// Once per pod, while nothing was reported yet and its containers just
// started: wait `first_status_delay` so a short container's first report is
// its final one.
bool NodeAgent::Impl::DeferFirstStatus(const Json& pod, const PodSandboxStatus& rt,
                                       PodState& st) {
  if (agent.opts_.first_status_delay <= absl::ZeroDuration() || st.first_status_deferred ||
      !st.last_written.is_null() || rt.finished || !rt.found || st.config_error ||
      st.failed_reason) {
    return false;
  }
  // Only before any phase was reported (unset) or while Pending.
  const std::string_view phase = api::StringMember(api::MemberObject(pod, "status"), "phase");
  if (!phase.empty() && phase != "Pending") return false;
  st.first_status_deferred = true;
  return true;
}

bool NodeAgent::Impl::SupersededCopy(const Json& pod, const PodState& st) {
  const std::string_view phase = api::StringMember(api::MemberObject(pod, "status"), "phase");
  if (phase != "Failed" && phase != "Succeeded") return false;
  // This agent ended it itself (deadline, eviction): it stops with its grace.
  if (st.failed_reason || st.stop_requested) return false;
  const std::string_view written = api::StringMember(st.last_written, "phase");
  if (written == "Failed" || written == "Succeeded") return false;
  // Terminal in the API while this sandbox still runs: someone else ended it.
  auto rt = agent.runtime_->Status(meta::GetUid(pod));
  return rt.ok() && rt->found && !rt->finished;
}

void NodeAgent::Impl::KillSuperseded(const std::string& uid, PodState& st) {
  auto rt = agent.runtime_->Status(uid);
  if (!rt.ok() || !rt->found || rt->finished) return;
  BATCHD_LOG_WARN("node {}: pod {} was ended or replaced while this agent was away: killing "
                  "its copy here", agent.opts_.node_name, uid);
  st.stop_requested = true;
  (void)agent.runtime_->Stop(uid, absl::ZeroDuration());
}

absl::Status NodeAgent::Impl::WriteStatus(const Json& pod, const PodSandboxStatus& rt,
                                          PodState& st) {
  internal::StatusInput in;
  in.now = clock.Now();
  in.host_ip = agent.opts_.host_ip;
  in.failed_reason = st.failed_reason;
  in.config_error = st.config_error;
  Json status = internal::ComputePodStatus(pod, rt, in);
  // Unchanged from what is stored, or from what this agent last wrote (the
  // registry may normalize a field): nothing to write.
  if (pod.contains("status") && pod["status"] == status) return absl::OkStatus();
  if (st.last_written == status) return absl::OkStatus();
  // The status subresource takes only the status (and the identity and
  // resourceVersion that address and guard the write): no copy of the spec.
  const Json& m = api::MemberObject(pod, "metadata");
  Json updated = {{"apiVersion", "v1"},
                  {"kind", "Pod"},
                  {"metadata",
                   {{"name", m.value("name", "")},
                    {"namespace", m.value("namespace", "")},
                    {"uid", m.value("uid", "")},
                    {"resourceVersion", m.value("resourceVersion", "")}}},
                  {"status", status}};
  absl::StatusOr<std::string> r = client.UpdateStatusForVersion(pod_kind, std::move(updated));
  if (!r.ok() && IsReason(r.status(), "Conflict")) {
    // The cached copy is stale (a finalizer or label changed, or this agent
    // was cut off while the pod was evicted and replaced): look at the
    // latest version first.
    auto fresh = client.Get(pod_kind, meta::GetNamespace(pod), meta::GetName(pod));
    const std::string uid = meta::GetUid(pod);
    if (!fresh.ok() && !IsReason(fresh.status(), "NotFound")) return fresh.status();
    if (!fresh.ok() || meta::GetUid(*fresh) != uid || SupersededCopy(*fresh, st)) {
      // Gone, replaced by a namesake, or declared Failed/Succeeded by
      // someone else (the taint manager evicted it while this agent was
      // away): its replacement may run elsewhere. This copy is killed now,
      // before anything of it is reported (an index never runs twice).
      KillSuperseded(uid, st);
      return absl::OkStatus();
    }
    status = internal::ComputePodStatus(*fresh, rt, in);
    (*fresh)["status"] = status;
    r = client.UpdateStatusForVersion(pod_kind, std::move(*fresh));
  }
  if (!r.ok()) return r.status();
  st.last_written = std::move(status);
  ++status_writes;
  return absl::OkStatus();
}

absl::StatusOr<reconcile::Result> NodeAgent::Impl::ReconcileDeleting(const Json& pod,
                                                                     const PodView& view,
                                                                     PodState& st) {
  const std::string uid(view.meta.uid);
  {
    absl::MutexLock lock(&mu);
    if (deleted.count(uid)) return reconcile::Result::Done();
  }
  int64_t grace = view.termination_grace_period_seconds.value_or(30);
  if (view.meta.deletion_grace_period_seconds) {
    grace = std::min(grace, *view.meta.deletion_grace_period_seconds);
  }
  BATCHD_ASSIGN_OR_RETURN(PodSandboxStatus rt, agent.runtime_->Status(uid));
  // Deleted after someone else declared it Failed (the taint manager's
  // eviction): no grace, its replacement may already run.
  if (view.terminal()) grace = 0;
  if (rt.found && !rt.finished) {
    if (!st.stop_requested) {
      st.stop_requested = true;
      BATCHD_RETURN_IF_ERROR(agent.runtime_->Stop(uid, absl::Seconds(std::max<int64_t>(grace, 0))));
    }
    BATCHD_RETURN_IF_ERROR(WriteStatus(pod, rt, st));
    return Poll(view, st);
  }
  if (rt.found) BATCHD_RETURN_IF_ERROR(WriteStatus(pod, rt, st));
  client::DeleteOptions del;
  del.grace_period_seconds = 0;
  del.precondition_uid = uid;
  absl::Status ds = client.Delete(pod_kind, meta::GetNamespace(pod), meta::GetName(pod), del);
  if (!ds.ok() && !IsReason(ds, "NotFound") && !IsReason(ds, "Conflict")) return ds;
  {
    absl::MutexLock lock(&mu);
    deleted.insert(uid);
  }
  controller->queue().Add(kOrphanPrefix + uid);
  return reconcile::Result::Done();
}

absl::StatusOr<reconcile::Result> NodeAgent::Impl::ReconcileOrphan(const std::string& uid) {
  {
    absl::MutexLock lock(&mu);
    if (!deleted.count(uid)) {
      for (const client::ObjectRef& p : pods->List()) {
        if (meta::GetUid(*p) == uid) return reconcile::Result::Done();  // Its pod handles it.
      }
    }
  }
  BATCHD_ASSIGN_OR_RETURN(PodSandboxStatus rt, agent.runtime_->Status(uid));
  if (!rt.found) {
    Forget(uid);
    return reconcile::Result::Done();
  }
  PodState& st = StateOf(uid);
  if (rt.supervisor_alive) {
    if (!st.stop_requested && !rt.finished) {
      st.stop_requested = true;
      BATCHD_RETURN_IF_ERROR(agent.runtime_->Stop(uid, absl::ZeroDuration()));
    }
    absl::Duration next = st.poll;
    st.poll = std::min(st.poll * 2, agent.opts_.status_poll_max);
    return reconcile::Result::After(next);
  }
  BATCHD_RETURN_IF_ERROR(agent.runtime_->Remove(uid));
  RemoveConfigVolumes(uid);
  Forget(uid);
  return reconcile::Result::Done();
}

NodeAgent::NodeAgent(AgentOptions opts, client::Client& client, Clock& clock,
                     std::unique_ptr<PodRuntime> runtime, HostProbe& probe)
    : opts_(std::move(opts)), runtime_(std::move(runtime)),
      impl_(std::make_unique<Impl>(*this, client, clock, probe)) {
  impl_->Setup();
}

NodeAgent::~NodeAgent() { Stop(); }

absl::Status NodeAgent::Sync() {
  impl_->capacity = internal::NodeCapacity(opts_, impl_->probe);
  impl_->facts = impl_->probe.Facts();
  impl_->ClearFences();
  BATCHD_RETURN_IF_ERROR(impl_->Heartbeat());
  BATCHD_RETURN_IF_ERROR(impl_->mgr.SyncAll());
  impl_->controller->queue().AddAfter(kHeartbeatKey, opts_.heartbeat_period);
  impl_->controller->queue().Add(kDiskKey);
  impl_->controller->queue().Add(kStatsKey);
  // Re-adoption: every sandbox on disk is reconciled as an orphan candidate;
  // those whose pod still exists are left to the pod's own reconcile.
  for (const std::string& uid : runtime_->List()) {
    impl_->controller->queue().Add(kOrphanPrefix + uid);
  }
  return absl::OkStatus();
}

int NodeAgent::RunUntilIdle() { return impl_->mgr.RunUntilIdle(); }

absl::Status NodeAgent::Start() {
  impl_->capacity = internal::NodeCapacity(opts_, impl_->probe);
  impl_->facts = impl_->probe.Facts();
  impl_->ClearFences();
  BATCHD_RETURN_IF_ERROR(impl_->Heartbeat());
  BATCHD_RETURN_IF_ERROR(impl_->mgr.Start(opts_.workers));
  // A pod whose container exited is reconciled now, not at its next poll:
  // a finished pod frees its slot on the node as soon as it is reported.
  runtime_->WatchChanges([impl = impl_.get()](const std::string& uid) {
    std::string key;
    {
      absl::MutexLock lock(&impl->mu);
      auto it = impl->uid_key.find(uid);
      if (it == impl->uid_key.end()) return;
      key = it->second;
    }
    impl->controller->queue().Add(key);
  });
  impl_->controller->queue().AddAfter(kHeartbeatKey, opts_.heartbeat_period);
  impl_->controller->queue().Add(kDiskKey);
  impl_->controller->queue().Add(kStatsKey);
  for (const std::string& uid : runtime_->List()) {
    impl_->controller->queue().Add(kOrphanPrefix + uid);
  }
  return absl::OkStatus();
}

void NodeAgent::Stop() {
  if (runtime_) runtime_->WatchChanges(nullptr);
  if (impl_) impl_->mgr.Stop();
}

apiserver::PodLogSource& NodeAgent::logs() { return *impl_->logs; }

void NodeAgent::AdoptProbe(std::unique_ptr<HostProbe> probe) {
  impl_->owned_probe = std::move(probe);
}

int64_t NodeAgent::status_writes() const { return impl_->status_writes.load(); }

apiserver::NodeUsageSummary NodeAgent::ResourceUsage() {
  return impl_->stats->Collect(impl_->clock.Now(), impl_->KnownPods());
}

void NodeAgent::ServeLogs(const apiserver::HttpRequest& req, apiserver::ResponseWriter& w) {
  if (req.path == "/stats/summary") {
    if (req.method != "GET" && req.method != "HEAD") {
      w.Send(405, {{"Content-Type", "text/plain; charset=utf-8"}}, "method not allowed\n");
      return;
    }
    w.Send(200, {{"Content-Type", "application/json"}},
           apiserver::SummaryToJson(ResourceUsage()).dump());
    return;
  }
  internal::ServeContainerLogs(
      req, w, [this](const std::string& ns, const std::string& name) -> client::ObjectRef {
        return impl_->pods->Get(ns, name);
      },
      *impl_->logs);
}

}  // namespace batchd::agent
