// "multikueue-clusters": worker connections, their Active conditions, the
// MultiKueue AdmissionChecks' Active conditions and the garbage collection
// of orphaned copies (multikueue.h).
#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/json_access.h"
#include "api/kueue/kueue.h"
#include "api/kueue/queue_writers.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "common/logging.h"
#include "controllers/multikueue/internal/multikueue_impl.h"

namespace batchd::controllers::multikueue::internal {

using api::MemberArray;
using api::MemberObject;
using api::StringMember;
using api::meta::kConditionFalse;
using api::meta::kConditionTrue;
using client::ObjectRef;
using reconcile::Result;

// --- Workers ---------------------------------------------------------------

std::optional<Worker> Workers::Get(const std::string& name) const {
  absl::MutexLock lock(&mu_);
  auto it = workers_.find(name);
  if (it == workers_.end()) return std::nullopt;
  return it->second;
}

void Workers::Put(const std::string& name, Worker w) {
  absl::MutexLock lock(&mu_);
  workers_[name] = std::move(w);
}

void Workers::MarkUnreachable(const std::string& name, absl::Time now, const std::string& why) {
  absl::MutexLock lock(&mu_);
  auto it = workers_.find(name);
  if (it == workers_.end() || !it->second.active) return;
  it->second.active = false;
  it->second.reason = "ClientConnectionFailed";
  it->second.message = why;
  if (!it->second.inactive_since) it->second.inactive_since = now;
}

void Workers::Remove(const std::string& name) {
  absl::MutexLock lock(&mu_);
  workers_.erase(name);
}

// --- Lookup ----------------------------------------------------------------

bool Lookup::IsOurs(const std::string& name) const {
  ObjectRef ac = checks.Get("", name);
  return ac && StringMember(MemberObject(*ac, "spec"), "controllerName") == kControllerName;
}

std::vector<std::string> Lookup::ClustersOf(const Json& ac, std::string* problem) const {
  const Json& params = MemberObject(MemberObject(ac, "spec"), "parameters");
  if (params.empty()) {
    *problem = "Cannot load the AdmissionChecks parameters: missing parameters reference";
    return {};
  }
  if (StringMember(params, "apiGroup") != api::kueue::kGroup ||
      StringMember(params, "kind") != "MultiKueueConfig") {
    *problem = absl::StrCat("Cannot load the AdmissionChecks parameters: wrong kind; expecting ",
                            api::kueue::kGroup, "/MultiKueueConfig");
    return {};
  }
  const std::string name(StringMember(params, "name"));
  ObjectRef cfg = configs.Get("", name);
  if (!cfg) {
    *problem = absl::StrCat("Cannot load the AdmissionChecks parameters: MultiKueueConfig \"",
                            name, "\" not found");
    return {};
  }
  std::vector<std::string> out;
  for (const Json& c : MemberArray(MemberObject(*cfg, "spec"), "clusters")) {
    out.emplace_back(api::AsString(c));
  }
  return out;
}

// --- ClusterReconciler -----------------------------------------------------

ClusterReconciler::ClusterReconciler(reconcile::ControllerContext& ctx,
                                     const MultiKueueOptions& opts,
                                     std::shared_ptr<Workers> workers,
                                     reconcile::Controller** dispatch)
    : ctx_(ctx),
      opts_(opts),
      workers_(std::move(workers)),
      dispatch_(dispatch),
      mkc_kind_(ctx.client.Kind(api::kueue::kGroup, api::kueue::kStorageVersion,
                                api::kueue::kMultiKueueClusters)),
      ac_kind_(ctx.client.Kind(api::kueue::kGroup, api::kueue::kStorageVersion,
                               api::kueue::kAdmissionChecks)),
      clusters_(ctx.informers.For(mkc_kind_)),
      checks_(ctx.informers.For(ac_kind_)),
      configs_(ctx.informers.For(api::kueue::kGroup, api::kueue::kStorageVersion,
                                 api::kueue::kMultiKueueConfigs)),
      workloads_(ctx.informers.For(api::kueue::kGroup, api::kueue::kStorageVersion,
                                   api::kueue::kWorkloads)),
      lookup_{checks_, configs_} {}

void ClusterReconciler::Register() {
  controller_ = &ctx_.manager.AddController(
      std::make_unique<reconcile::Controller>("multikueue-clusters", *this, ctx_.clock));
  reconcile::Controller* c = controller_;
  auto on_mkc = [c](const ObjectRef& o) { c->queue().Add("mkc/" + api::meta::GetName(*o)); };
  clusters_.AddHandlers({on_mkc,
                         [on_mkc](const ObjectRef& a, const ObjectRef& b) {
                           // Our own status writes need no probe.
                           if (MemberObject(*a, "spec") != MemberObject(*b, "spec")) on_mkc(b);
                         },
                         on_mkc});
  auto on_ac = [c](const ObjectRef& o) {
    if (StringMember(MemberObject(*o, "spec"), "controllerName") == kControllerName) {
      c->queue().Add("ac/" + api::meta::GetName(*o));
    }
  };
  checks_.AddHandlers({on_ac, [on_ac](const ObjectRef&, const ObjectRef& n) { on_ac(n); }, {}});
  auto on_config = [this](const ObjectRef&) {
    for (const ObjectRef& ac : checks_.List()) {
      if (StringMember(MemberObject(*ac, "spec"), "controllerName") == kControllerName) {
        controller_->queue().Add("ac/" + api::meta::GetName(*ac));
      }
    }
  };
  configs_.AddHandlers({on_config,
                        [on_config](const ObjectRef&, const ObjectRef& n) { on_config(n); },
                        on_config});
}

absl::StatusOr<Result> ClusterReconciler::Reconcile(const std::string& key) {
  if (key.rfind("mkc/", 0) == 0) return ReconcileCluster(key.substr(4));
  if (key.rfind("ac/", 0) == 0) return ReconcileCheck(key.substr(3));
  if (key.rfind("watch/", 0) == 0) {
    // The worker's watch events become reconciles of the manager's
    // Workloads (pumped here too without watch threads: tests).
    std::optional<Worker> w = workers_->Get(key.substr(6));
    if (!w || !w->watches) return Result::Done();
    if (!opts_.watch_threads) w->watches->PumpAll();
    if (*dispatch_ != nullptr) {
      for (const std::string& k : w->watches->TakeChanged()) (*dispatch_)->queue().Add(k);
    }
    return Result::After(opts_.watch_pump_interval);
  }
  return Result::Done();
}

absl::StatusOr<std::string> ClusterReconciler::ReadKubeconfig(const Json& mkc,
                                                              std::string* source,
                                                              std::string* dir) {
  const Json& kc = MemberObject(MemberObject(MemberObject(mkc, "spec"), "clusterSource"),
                                "kubeConfig");
  const std::string location(StringMember(kc, "location"));
  if (StringMember(kc, "locationType") == "Path") {
    *source = location;
    const size_t slash = location.rfind('/');
    *dir = slash == std::string::npos ? "." : location.substr(0, slash);
    std::ifstream in(location, std::ios::binary);
    if (!in) return absl::InvalidArgumentError(absl::StrCat("cannot read ", location));
    std::string text(kMaxKubeconfigBytes + 1, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxKubeconfigBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat(location, " is larger than ", kMaxKubeconfigBytes, " bytes"));
    }
    return text;
  }
  *source = absl::StrCat("secret ", kSecretNamespace, "/", location);
  *dir = ".";
  auto secret = ctx_.client.Get(ctx_.client.Kind("", "v1", "secrets"), kSecretNamespace, location);
  if (!secret.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read ", *source, ": ", secret.status().message()));
  }
  const Json& data = MemberObject(*secret, "data");
  if (!api::HasMember(data, kSecretKey)) {
    return absl::InvalidArgumentError(absl::StrCat(*source, " has no \"", kSecretKey, "\" key"));
  }
  std::string text;
  if (!absl::Base64Unescape(std::string(api::AsString(api::Member(data, kSecretKey))), &text)) {
    return absl::InvalidArgumentError(absl::StrCat(*source, ": \"", kSecretKey,
                                                   "\" is not base64"));
  }
  if (text.size() > kMaxKubeconfigBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(*source, " is larger than ", kMaxKubeconfigBytes, " bytes"));
  }
  return text;
}

absl::StatusOr<Result> ClusterReconciler::ReconcileCluster(const std::string& name) {
  ObjectRef obj = clusters_.Get("", name);
  if (!obj) {
    workers_->Remove(name);
    ClusterChanged(name);
    return Result::Done();
  }
  const absl::Time now = ctx_.clock.Now();
  const std::optional<Worker> prev = workers_->Get(name);
  Worker w = prev.value_or(Worker{});
  std::string source, dir;
  absl::StatusOr<std::string> text = ReadKubeconfig(*obj, &source, &dir);
  bool ok = false;
  bool new_watches = false;
  std::vector<Json> copies;
  if (!text.ok()) {
    w.reason = "BadConfig";
    w.message = std::string(text.status().message());
    w.client = nullptr;
    w.watches = nullptr;
    w.kubeconfig.clear();
  } else {
    if (!w.client || w.kubeconfig != *text) {
      auto c = opts_.dialer->Dial(*text, source, dir);
      w.watches = nullptr;  // (the old ones stop with their last holder)
      if (!c.ok()) {
        w.reason = "BadConfig";
        w.message = std::string(c.status().message());
        w.client = nullptr;
        w.kubeconfig.clear();
      } else {
        w.client = std::move(*c);
        w.kubeconfig = *text;
        w.watches = std::make_shared<WorkerWatches>(w.client, opts_.origin, ctx_.clock, name);
        if (opts_.watch_threads) w.watches->Start();
        new_watches = true;
      }
    }
    if (w.client) {
      // The probe: our copies on the worker (bounded by what we dispatched).
      client::Selector sel;
      sel.labels = absl::StrCat(kOriginLabel, "=", opts_.origin);
      auto list = w.client->List(w.client->Kind(api::kueue::kGroup, api::kueue::kStorageVersion,
                                                api::kueue::kWorkloads),
                                 "", sel);
      // A worker that answers the probe but whose watch on our copies has
      // failed for longer than a probe period (it answers garbage, say) is
      // no more usable than one that is down.
      const std::optional<absl::Time> watch_trouble =
          w.watches ? w.watches->workloads().UnsyncedSince() : std::nullopt;
      // It answers: watches waiting out a backoff reconnect now.
      if (list.ok() && watch_trouble) w.watches->RetryNow();
      if (!list.ok()) {
        w.reason = "ClientConnectionFailed";
        w.message = std::string(list.status().message());
      } else if (watch_trouble && now - *watch_trouble > opts_.probe_interval &&
                 !w.watches->workloads().last_error().empty()) {
        w.reason = "ClientConnectionFailed";
        w.message = absl::StrCat("watching workloads: ", w.watches->workloads().last_error());
      } else {
        ok = true;
        copies = std::move(list->items);
      }
    }
  }
  w.active = ok;
  if (ok) {
    w.reason = "Active";
    w.message = "Connected";
    w.inactive_since.reset();
  } else if (!w.inactive_since) {
    w.inactive_since = now;
  }
  if (ok && opts_.gc_interval > absl::ZeroDuration() && now - w.last_gc >= opts_.gc_interval) {
    CollectGarbage(name, *w.client, copies);
    w.last_gc = now;
  }
  const bool changed = !prev || prev->active != ok;
  if (changed && ok && w.watches) w.watches->RetryNow();  // back: reconnect now
  Json cond_reason = w.reason, cond_message = w.message;
  workers_->Put(name, std::move(w));
  // (After the Put: another worker thread may take the key at once.)
  if (new_watches) controller_->queue().Add("watch/" + name);
  if (changed) {
    BATCHD_LOG_INFO("multikueue: cluster {} is {} ({})", name, ok ? "active" : "inactive",
                    cond_message.get<std::string>());
    ClusterChanged(name);
  }
  api::kueue::StatusUpdate update(*obj);
  api::kueue::SetCondition(update,
                           {"Active", ok ? kConditionTrue : kConditionFalse,
                            cond_reason.get<std::string>(), cond_message.get<std::string>()},
                           now);
  if (update.changed()) {
    auto r = ctx_.client.UpdateStatus(
        mkc_kind_, std::move(update).Build(mkc_kind_.ApiVersion(), mkc_kind_.kind));
    if (!r.ok() && !absl::IsNotFound(r.status()) && !absl::IsAborted(r.status())) {
      return r.status();
    }
  }
  return Result::After(opts_.probe_interval);
}

void ClusterReconciler::CollectGarbage(const std::string& cluster, client::Client& remote,
                                       const std::vector<Json>& copies) {
  const api::KindDef& wl_kind =
      remote.Kind(api::kueue::kGroup, api::kueue::kStorageVersion, api::kueue::kWorkloads);
  for (const Json& copy : copies) {
    const std::string ns = api::meta::GetNamespace(copy), name = api::meta::GetName(copy);
    ObjectRef local = workloads_.Get(ns, name);
    const std::string origin_uid =
        api::meta::GetAnnotation(copy, kOriginUidAnnotation).value_or("");
    if (local && api::meta::GetUid(*local) == origin_uid) continue;
    BATCHD_LOG_INFO("multikueue: removing orphaned copy {}/{} on {}", ns, name, cluster);
    client::DeleteOptions bg;
    bg.propagation_policy = "Background";
    if (auto ref = api::meta::GetControllerRef(copy)) {
      if (const JobKindAdapter* a = AdapterFor(ref->api_version, ref->kind)) {
        const api::KindDef& job_kind = remote.Kind(a->group, a->version, a->plural);
        auto job = remote.Get(job_kind, ns, ref->name);
        if (job.ok() && api::meta::GetLabel(*job, kOriginLabel)) {
          (void)remote.Delete(job_kind, ns, ref->name, bg);
        }
      }
    }
    (void)remote.Delete(wl_kind, ns, name, bg);
  }
}

void ClusterReconciler::ClusterChanged(const std::string& name) {
  (void)name;
  std::set<std::string> ours;
  for (const ObjectRef& ac : checks_.List()) {
    if (StringMember(MemberObject(*ac, "spec"), "controllerName") == kControllerName) {
      ours.insert(api::meta::GetName(*ac));
      controller_->queue().Add("ac/" + api::meta::GetName(*ac));
    }
  }
  if (*dispatch_ == nullptr || ours.empty()) return;
  for (const ObjectRef& wl : workloads_.List()) {
    for (const Json& s : MemberArray(MemberObject(*wl, "status"), "admissionChecks")) {
      if (ours.count(std::string(StringMember(s, "name"))) > 0) {
        (*dispatch_)->Enqueue(*wl);
        break;
      }
    }
  }
}

absl::StatusOr<Result> ClusterReconciler::ReconcileCheck(const std::string& name) {
  ObjectRef ac = checks_.Get("", name);
  if (!ac || StringMember(MemberObject(*ac, "spec"), "controllerName") != kControllerName) {
    return Result::Done();
  }
  std::string problem;
  std::vector<std::string> clusters = lookup_.ClustersOf(*ac, &problem);
  api::meta::Condition cond{"Active", kConditionTrue, "Active", "The admission check is active"};
  if (!problem.empty()) {
    cond = {"Active", kConditionFalse, "BadConfig", problem};
  } else {
    std::vector<std::string> inactive;
    for (const std::string& c : clusters) {
      std::optional<Worker> w = workers_->Get(c);
      if (!w || !w->active) inactive.push_back(c);
    }
    if (!inactive.empty()) {
      const std::string msg =
          absl::StrCat("Inactive clusters: [", absl::StrJoin(inactive, " "), "]");
      cond = inactive.size() == clusters.size()
                 ? api::meta::Condition{"Active", kConditionFalse, "NoUsableClusters", msg}
                 : api::meta::Condition{"Active", kConditionTrue, "SomeActiveClusters", msg};
    }
  }
  api::kueue::StatusUpdate update(*ac);
  if (!api::kueue::SetCondition(update, cond, ctx_.clock.Now())) return Result::Done();
  auto r = ctx_.client.UpdateStatus(ac_kind_,
                                    std::move(update).Build(ac_kind_.ApiVersion(), ac_kind_.kind));
  if (!r.ok() && !absl::IsNotFound(r.status()) && !absl::IsAborted(r.status())) return r.status();
  return Result::Done();
}

}  // namespace batchd::controllers::multikueue::internal
