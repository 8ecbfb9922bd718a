#include "agent/sim/sim_kubelet.h"

#include <algorithm>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/synchronization/mutex.h"
#include "agent/sim/go_duration.h"
#include "agent/sim/internal/sim_status.h"
#include "api/json_access.h"
#include "api/meta/object_meta.h"
#include "api/meta/time_util.h"
#include "registry/errors.h"

namespace batchd::agent::sim {

using api::Json;
using client::ObjectRef;
using reconcile::Result;

bool IsSimulatedNode(const Json& node) {
  return api::meta::GetAnnotation(node, kSimulatedAnnotation).value_or("") == "true";
}

namespace {

// What the simulated kubelet remembers about a pod it runs (virtual
// timestamps finer than the RFC 3339 seconds in the status).
struct Run {
  std::string uid;
  bool backing_off = false;
  absl::Time since;  // Containers started, or back-off began.
  int restarts = 0;
  // The resourceVersion of the kubelet's last write of the pod: the event
  // of that write (its echo) is not reconciled (SimKubelet::OnPod).
  std::string rv;
};

// The body of a status write of `obj`: its status and the metadata the
// status subresource reads (name, namespace, and uid and resourceVersion as
// preconditions). The registry builds the new object from the stored one and
// this status alone, so the rest (a pod's spec) is not copied.
Json StatusBody(const Json& obj) {
  const Json& meta = api::MemberObject(obj, "metadata");
  Json m = Json::object();
  for (const char* k : {"name", "namespace", "uid", "resourceVersion"}) {
    if (auto it = meta.find(k); it != meta.end()) m[k] = *it;
  }
  Json body = {{"apiVersion", api::Member(obj, "apiVersion")},
               {"kind", api::Member(obj, "kind")},
               {"metadata", std::move(m)}};
  if (auto it = obj.find("status"); it != obj.end()) body["status"] = *it;
  return body;
}

std::pair<std::string, std::string> SplitKey(const std::string& key) {
  size_t slash = key.find('/');
  if (slash == std::string::npos) return {"", key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

class SimKubelet : public std::enable_shared_from_this<SimKubelet> {
 public:
  explicit SimKubelet(reconcile::ControllerContext& ctx)
      : ctx_(ctx),
        pods_(ctx.informers.For("", "v1", "pods")),
        nodes_(ctx.informers.For("", "v1", "nodes")) {}

  void Register();
  absl::StatusOr<Result> ReconcileNode(const std::string& name);
  absl::StatusOr<Result> ReconcilePod(const std::string& key);

 private:
  class Adapter : public reconcile::Reconciler {
   public:
    Adapter(SimKubelet& k, bool nodes) : k_(k), nodes_(nodes) {}
    absl::StatusOr<Result> Reconcile(const std::string& key) override {
      return nodes_ ? k_.ReconcileNode(key) : k_.ReconcilePod(key);
    }

   private:
    SimKubelet& k_;
    bool nodes_;
  };

  void OnNode(const ObjectRef& node);
  void OnNodeDelete(const ObjectRef& node);
  void OnPod(const ObjectRef& pod);
  void OnPodDelete(const ObjectRef& pod);
  bool IsSim(const std::string& node) {
    absl::MutexLock lock(&mu_);
    return sim_nodes_.contains(node);
  }
  absl::StatusOr<Result> Write(Json body, Run run, absl::Duration requeue);
  absl::StatusOr<Result> Advance(const Json& pod, Run run);

  reconcile::ControllerContext& ctx_;
  client::Informer& pods_;
  client::Informer& nodes_;
  Adapter node_adapter_{*this, true};
  Adapter pod_adapter_{*this, false};
  reconcile::Controller* node_ctl_ = nullptr;
  reconcile::Controller* pod_ctl_ = nullptr;

  absl::Mutex mu_;
  absl::flat_hash_set<std::string> sim_nodes_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, absl::flat_hash_set<std::string>> pods_by_node_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, Run> runs_ ABSL_GUARDED_BY(mu_);
  // The resourceVersion of the kubelet's last status write of each node.
  // Bound: the nodes (erased with them).
  absl::flat_hash_map<std::string, std::string> node_writes_ ABSL_GUARDED_BY(mu_);
};

void SimKubelet::Register() {
  node_ctl_ = &ctx_.manager.AddController(
      std::make_unique<reconcile::Controller>("sim-kubelet-nodes", node_adapter_, ctx_.clock));
  pod_ctl_ = &ctx_.manager.AddController(
      std::make_unique<reconcile::Controller>("sim-kubelet-pods", pod_adapter_, ctx_.clock));
  // The handlers own this object; the manager destroys controllers before informers.
  auto self = shared_from_this();
  nodes_.AddHandlers({[self](const ObjectRef& o) { self->OnNode(o); },
                      [self](const ObjectRef&, const ObjectRef& n) { self->OnNode(n); },
                      [self](const ObjectRef& o) { self->OnNodeDelete(o); }});
  pods_.AddHandlers({[self](const ObjectRef& o) { self->OnPod(o); },
                     [self](const ObjectRef&, const ObjectRef& n) { self->OnPod(n); },
                     [self](const ObjectRef& o) { self->OnPodDelete(o); }});
}

void SimKubelet::OnNode(const ObjectRef& node) {
  std::string name = api::meta::GetName(*node);
  std::vector<std::string> pods;
  {
    absl::MutexLock lock(&mu_);
    if (!IsSimulatedNode(*node)) {
      sim_nodes_.erase(name);
      return;
    }
    if (sim_nodes_.insert(name).second) {
      auto it = pods_by_node_.find(name);
      if (it != pods_by_node_.end()) pods.assign(it->second.begin(), it->second.end());
    } else if (auto w = node_writes_.find(name);
               w != node_writes_.end() && w->second == api::meta::GetResourceVersion(*node)) {
      // The echo of the kubelet's own write: its status is the Ready status
      // just written, so a reconcile would find nothing to set.
      return;
    }
  }
  node_ctl_->queue().Add(name);
  for (const auto& p : pods) pod_ctl_->queue().Add(p);
}

void SimKubelet::OnNodeDelete(const ObjectRef& node) {
  absl::MutexLock lock(&mu_);
  sim_nodes_.erase(api::meta::GetName(*node));
  node_writes_.erase(api::meta::GetName(*node));
}

void SimKubelet::OnPod(const ObjectRef& pod) {
  std::string node = api::CopyStringMember(api::MemberObject(*pod, "spec"), "nodeName");
  if (node.empty()) return;
  std::string key = client::Informer::KeyOf(*pod);
  {
    absl::MutexLock lock(&mu_);
    pods_by_node_[node].insert(key);
    if (!sim_nodes_.contains(node)) return;
    // Changes whose reconcile would do nothing but what is done here are
    // not queued (a pending requeue of the key still runs):
    if (!api::meta::IsBeingDeleted(*pod)) {
      std::string_view phase =
          api::StringMember(api::MemberObject(*pod, "status"), "phase", "Pending");
      // a finished pod (its reconcile forgets the run);
      if (phase == "Succeeded" || phase == "Failed") {
        runs_.erase(key);
        return;
      }
      // the echo of the kubelet's own write: the requeue that write
      // returned is the one a reconcile would return (ReconcilePod, Advance).
      auto it = runs_.find(key);
      if (it != runs_.end() && !it->second.rv.empty() &&
          it->second.rv == api::meta::GetResourceVersion(*pod) &&
          it->second.uid == api::meta::GetUid(*pod)) {
        return;
      }
    }
  }
  pod_ctl_->queue().Add(key);
}

void SimKubelet::OnPodDelete(const ObjectRef& pod) {
  std::string node = (*pod)["spec"].value("nodeName", "");
  std::string key = client::Informer::KeyOf(*pod);
  absl::MutexLock lock(&mu_);
  runs_.erase(key);
  auto it = pods_by_node_.find(node);
  if (it == pods_by_node_.end()) return;
  it->second.erase(key);
  if (it->second.empty()) pods_by_node_.erase(it);
}

absl::StatusOr<Result> SimKubelet::ReconcileNode(const std::string& name) {
  ObjectRef node = nodes_.Get("", name);
  if (!node || !IsSimulatedNode(*node)) return Result::Done();
  Json updated = StatusBody(*node);
  if (!internal::SetNodeReady(updated, ctx_.clock.Now())) return Result::Done();
  auto r = ctx_.client.UpdateStatusForVersion(nodes_.kind(), std::move(updated));
  if (!r.ok()) {
    if (registry::GetPayload(r.status()).reason != "NotFound") return r.status();
    return Result::Done();
  }
  absl::MutexLock lock(&mu_);
  node_writes_[name] = *std::move(r);
  return Result::Done();
}

absl::StatusOr<Result> SimKubelet::Write(Json body, Run run, absl::Duration requeue) {
  std::string key = client::Informer::KeyOf(body);
  auto r = ctx_.client.UpdateStatusForVersion(pods_.kind(), std::move(body));
  if (!r.ok()) {
    if (registry::GetPayload(r.status()).reason == "NotFound") return Result::Done();
    return r.status();  // Conflict: retried with backoff on a fresher copy.
  }
  run.rv = *std::move(r);
  {
    absl::MutexLock lock(&mu_);
    runs_[key] = std::move(run);
  }
  return Result::After(requeue);
}

int ExitCodeOf(const Json& pod) {
  int code = 0;
  auto v = api::meta::GetAnnotation(pod, kSimExitCodeAnnotation);
  if (v && !absl::SimpleAtoi(*v, &code)) code = 1;
  return code;
}

absl::Duration DurationOf(const Json& pod) {
  auto v = api::meta::GetAnnotation(pod, kSimDurationAnnotation);
  if (!v) return absl::ZeroDuration();
  auto d = ParseGoDuration(*v);
  return d.ok() ? std::max(*d, absl::ZeroDuration()) : absl::ZeroDuration();
}

// Moves a running or backing-off pod along its timeline.
absl::StatusOr<Result> SimKubelet::Advance(const Json& pod, Run run) {
  absl::Time now = ctx_.clock.Now();
  if (run.backing_off) {
    absl::Time due = run.since + internal::CrashLoopBackOff(run.restarts);
    if (now < due) return Result::After(due - now);
    Json next = StatusBody(pod);
    internal::SetRunning(pod, next["status"], now, run.restarts, now);
    run.backing_off = false;
    run.since = now;
    return Write(std::move(next), run, DurationOf(pod));
  }
  absl::Time end = run.since + DurationOf(pod);
  if (now < end) return Result::After(end - now);
  int code = ExitCodeOf(pod);
  std::string policy = pod["spec"].value("restartPolicy", "Always");
  Json next = StatusBody(pod);
  if (policy == "Always" || (policy == "OnFailure" && code != 0)) {
    ++run.restarts;
    absl::Duration backoff = internal::CrashLoopBackOff(run.restarts);
    internal::SetBackOff(pod, next["status"], code, run.since, run.restarts, backoff, now);
    run.backing_off = true;
    run.since = now;
    return Write(std::move(next), run, backoff);
  }
  internal::SetTerminated(pod, next["status"], code, run.since, now);
  auto r = Write(std::move(next), run, absl::ZeroDuration());
  if (!r.ok()) return r;
  return Result::Done();
}

// Recovers the timeline of a Running pod this process did not start.
Run RecoverRun(const Json& pod, absl::Time now) {
  Run run{api::meta::GetUid(pod), false, now, 0};
  for (const Json& cs : pod["status"].value("containerStatuses", Json::array())) {
    run.restarts = std::max(run.restarts, cs.value("restartCount", 0));
    const Json& state = cs.value("state", Json::object());
    if (state.contains("running")) {
      auto t = api::meta::ParseRfc3339(state["running"].value("startedAt", ""));
      if (t.ok()) run.since = std::min(run.since, *t);
    } else if (state.contains("waiting")) {
      run.backing_off = true;
    }
  }
  return run;
}

absl::StatusOr<Result> SimKubelet::ReconcilePod(const std::string& key) {
  auto [ns, name] = SplitKey(key);
  ObjectRef pod = pods_.Get(ns, name);
  if (!pod || !IsSim((*pod)["spec"].value("nodeName", ""))) return Result::Done();
  if (api::meta::IsBeingDeleted(*pod)) {
    client::DeleteOptions opts;
    opts.grace_period_seconds = 0;
    opts.precondition_uid = api::meta::GetUid(*pod);
    absl::Status st = ctx_.client.Delete(pods_.kind(), ns, name, opts);
    if (!st.ok() && registry::GetPayload(st).reason != "NotFound" &&
        registry::GetPayload(st).reason != "Conflict") {
      return st;
    }
    return Result::Done();
  }
  std::string phase = (*pod)["status"].value("phase", "Pending");
  if (phase == "Succeeded" || phase == "Failed") {
    absl::MutexLock lock(&mu_);
    runs_.erase(key);
    return Result::Done();
  }
  absl::Time now = ctx_.clock.Now();
  std::optional<Run> run;
  {
    absl::MutexLock lock(&mu_);
    auto it = runs_.find(key);
    if (it != runs_.end() && it->second.uid == api::meta::GetUid(*pod)) run = it->second;
  }
  if (!run && phase != "Running") {
    Json next = StatusBody(*pod);
    internal::SetRunning(*pod, next["status"], now, 0, now);
    return Write(std::move(next), Run{api::meta::GetUid(*pod), false, now, 0}, DurationOf(*pod));
  }
  return Advance(*pod, run ? *run : RecoverRun(*pod, now));
}

}  // namespace

void AddSimulatedKubelet(reconcile::ControllerContext& ctx) {
  std::make_shared<SimKubelet>(ctx)->Register();
}

}  // namespace batchd::agent::sim
