// "provisioning-request-admission-check": the built-in AdmissionCheck of
// controller `kueue.x-k8s.io/provisioning-request` (see controllers.h and
// provisioner.h).
//
// An AdmissionCheck of this controller is Active when its parameters name an
// existing ProvisioningRequestConfig whose class and parameters the
// provisioner honours (else Active=False, reason BadParametersRef or
// UnsupportedParameters, with the message; its ClusterQueues hold).
//
// A workload's Pending state of such a check is one attempt; it started at
// the state's lastTransitionTime (the reservation) and is numbered
// retryCount + 1. The controller asks the provisioner for the pod sets that
// request a managed resource (all when managedResources is empty; none
// needed: Ready at once) with the reserved per-pod usage, the assigned
// flavors' node labels and tolerations and the template's. Provisioned:
// Ready, with podSetUpdates (the pool's node selector and Kueue's
// consume-provisioning-request / provisioning-class-name annotations).
// Failed, or still waiting when the attempt's timeout (parameter
// batchd.io/provisioning-timeout, default 15m) passes: Retry with
// requeueAfterSeconds = min(backoffBaseSeconds * 2^retryCount,
// backoffMaxSeconds), or Rejected once retryCount reaches
// backoffLimitCount (retryStrategy defaults 3 / 60 / 1800, as Kueue's).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/core/v1/node_view.h"
#include "api/core/v1/pod_view.h"
#include "api/core/v1/taint.h"
#include "api/json_access.h"
#include "api/kueue/kueue.h"
#include "api/kueue/queue_views.h"
#include "api/kueue/queue_writers.h"
#include "api/kueue/workload_writers.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "api/meta/time_util.h"
#include "api/resource/quantity.h"
#include "common/logging.h"
#include "controllers/admissioncheck/admission_checks.h"
#include "controllers/admissioncheck/internal/controllers_impl.h"

namespace batchd::controllers::admissioncheck::internal {

using api::AsString;
using api::IntMember;
using api::MemberArray;
using api::MemberObject;
using api::StringMember;
using api::meta::kConditionFalse;
using api::meta::kConditionTrue;
using client::ObjectRef;
using reconcile::Result;

namespace {

constexpr char kConsumeAnnotation[] = "autoscaling.x-k8s.io/consume-provisioning-request";
constexpr char kClassAnnotation[] = "autoscaling.x-k8s.io/provisioning-class-name";

std::map<std::string, std::string> Parameters(const Json& prc) {
  return api::StringMap(MemberObject(MemberObject(prc, "spec"), "parameters"));
}

struct Retry {
  int64_t limit = 3, base = 60, max = 1800;
};

Retry RetryOf(const Json& prc) {
  const Json& r = MemberObject(MemberObject(prc, "spec"), "retryStrategy");
  Retry out;
  out.limit = IntMember(r, "backoffLimitCount", out.limit);
  out.base = IntMember(r, "backoffBaseSeconds", out.base);
  out.max = IntMember(r, "backoffMaxSeconds", out.max);
  return out;
}

}  // namespace

ProvisioningChecks::ProvisioningChecks(reconcile::ControllerContext& ctx,
                                       std::shared_ptr<Provisioner> provisioner)
    : ctx_(ctx),
      provisioner_(std::move(provisioner)),
      wl_kind_(ctx.client.Kind(api::kueue::kGroup, api::kueue::kStorageVersion,
                               api::kueue::kWorkloads)),
      ac_kind_(ctx.client.Kind(api::kueue::kGroup, api::kueue::kStorageVersion,
                               api::kueue::kAdmissionChecks)),
      workloads_(ctx.informers.For(wl_kind_)),
      checks_(ctx.informers.For(ac_kind_)),
      configs_(ctx.informers.For(api::kueue::kGroup, api::kueue::kStorageVersion,
                                 api::kueue::kProvisioningRequestConfigs)),
      flavors_(ctx.informers.For(api::kueue::kGroup, api::kueue::kStorageVersion,
                                 api::kueue::kResourceFlavors)),
      nodes_(ctx.informers.For("", "v1", "nodes")),
      pods_(ctx.informers.For("", "v1", "pods")) {}

bool ProvisioningChecks::Ours(const Json& ac) const {
  return StringMember(MemberObject(ac, "spec"), "controllerName") == kProvisioningController;
}

void ProvisioningChecks::EnqueueWaiting() {
  std::set<std::string> keys;
  {
    absl::MutexLock lock(&mu_);
    keys = waiting_;
  }
  for (const std::string& k : keys) controller_->queue().Add("wl/" + k);
}

void ProvisioningChecks::Register() {
  controller_ = &ctx_.manager.AddController(std::make_unique<reconcile::Controller>(
      "provisioning-request-admission-check", *this, ctx_.clock));
  reconcile::Controller* c = controller_;
  auto on_wl = [c](const ObjectRef& o) {
    const Json& st = MemberObject(*o, "status");
    if (api::HasMember(st, "admission") && !MemberArray(st, "admissionChecks").empty()) {
      c->queue().Add("wl/" + client::Informer::KeyOf(*o));
    }
  };
  workloads_.AddHandlers({on_wl, [on_wl](const ObjectRef&, const ObjectRef& n) { on_wl(n); },
                          [this](const ObjectRef& o) {
                            absl::MutexLock lock(&mu_);
                            waiting_.erase(client::Informer::KeyOf(*o));
                          }});
  // A check turning (in)active: its status, and the workloads that name it.
  auto on_ac = [this, c](const ObjectRef& o) {
    if (!Ours(*o)) return;
    const std::string name = api::meta::GetName(*o);
    c->queue().Add("ac/" + name);
    for (const ObjectRef& w : workloads_.List()) {
      if (FindCheckState(*w, name) != nullptr) c->queue().Add("wl/" + client::Informer::KeyOf(*w));
    }
  };
  checks_.AddHandlers({on_ac, [on_ac](const ObjectRef&, const ObjectRef& n) { on_ac(n); }, {}});
  auto on_config = [this](const ObjectRef&) {
    for (const ObjectRef& ac : checks_.List()) {
      if (Ours(*ac)) controller_->queue().Add("ac/" + api::meta::GetName(*ac));
    }
    EnqueueWaiting();
  };
  configs_.AddHandlers({on_config,
                        [on_config](const ObjectRef&, const ObjectRef& n) { on_config(n); },
                        on_config});
  // Capacity appearing or freeing up.
  auto capacity = [this](const ObjectRef&) { EnqueueWaiting(); };
  nodes_.AddHandlers({capacity,
                      [this](const ObjectRef& a, const ObjectRef& b) {
                        if (api::meta::Labels(*a) != api::meta::Labels(*b) ||
                            MemberObject(*a, "spec") != MemberObject(*b, "spec") ||
                            MemberObject(MemberObject(*a, "status"), "allocatable") !=
                                MemberObject(MemberObject(*b, "status"), "allocatable") ||
                            api::core_v1::NodeView::Parse(*a).ReadyStatus() !=
                                api::core_v1::NodeView::Parse(*b).ReadyStatus()) {
                          EnqueueWaiting();
                        }
                      },
                      capacity});
  pods_.AddHandlers({{},
                     [this](const ObjectRef& a, const ObjectRef& b) {
                       // The node and phase only (no views parsed: every pod change).
                       auto node = [](const Json& p) {
                         return StringMember(MemberObject(p, "spec"), "nodeName");
                       };
                       auto phase = [](const Json& p) {
                         return api::core_v1::ParsePodPhase(
                             StringMember(MemberObject(p, "status"), "phase"));
                       };
                       if (node(*a) != node(*b) || phase(*a) != phase(*b)) EnqueueWaiting();
                     },
                     capacity});
}

std::string ProvisioningChecks::Problem(const Json& ac, std::string* reason) const {
  *reason = "BadParametersRef";
  const Json& params = MemberObject(MemberObject(ac, "spec"), "parameters");
  if (params.empty()) return "missing parameters reference";
  if (StringMember(params, "apiGroup") != api::kueue::kGroup ||
      StringMember(params, "kind") != "ProvisioningRequestConfig") {
    return absl::StrCat("wrong kind; expecting ", api::kueue::kGroup,
                        "/ProvisioningRequestConfig");
  }
  const std::string name(StringMember(params, "name"));
  ObjectRef prc = configs_.Get("", name);
  if (!prc) return absl::StrCat("ProvisioningRequestConfig \"", name, "\" not found");
  *reason = "UnsupportedParameters";
  const Json& spec = MemberObject(*prc, "spec");
  if (!MemberArray(MemberObject(spec, "podSetUpdates"), "nodeSelector").empty()) {
    return "podSetUpdates.nodeSelector is not supported: batchd's provisioner has no "
           "provisioning class details";
  }
  return provisioner_->Unsupported(std::string(StringMember(spec, "provisioningClassName")),
                                   Parameters(*prc));
}

absl::StatusOr<Result> ProvisioningChecks::Reconcile(const std::string& key) {
  if (key.rfind("ac/", 0) == 0) return ReconcileCheck(key.substr(3));
  if (key.rfind("wl/", 0) == 0) return ReconcileWorkload(key.substr(3));
  return Result::Done();
}

absl::StatusOr<Result> ProvisioningChecks::ReconcileCheck(const std::string& name) {
  ObjectRef ac = checks_.Get("", name);
  if (!ac || !Ours(*ac)) return Result::Done();
  std::string reason;
  std::string problem = Problem(*ac, &reason);
  api::meta::Condition cond{"Active", kConditionTrue, "Active", "The admission check is active"};
  if (!problem.empty()) cond = {"Active", kConditionFalse, reason, problem};
  api::kueue::StatusUpdate update(*ac);
  if (!api::kueue::SetCondition(update, cond, ctx_.clock.Now())) return Result::Done();
  auto r = ctx_.client.UpdateStatus(ac_kind_,
                                    std::move(update).Build(ac_kind_.ApiVersion(), ac_kind_.kind));
  if (!r.ok() && !absl::IsNotFound(r.status()) && !absl::IsAborted(r.status())) return r.status();
  return Result::Done();
}

absl::StatusOr<Result> ProvisioningChecks::ReconcileWorkload(const std::string& key) {
  const size_t slash = key.find('/');
  if (slash == std::string::npos) return Result::Done();
  ObjectRef obj = workloads_.Get(key.substr(0, slash), key.substr(slash + 1));
  auto forget = [&] {
    absl::MutexLock lock(&mu_);
    waiting_.erase(key);
  };
  if (!obj) {
    forget();
    return Result::Done();
  }
  const Json& wl = *obj;
  const Json& status = MemberObject(wl, "status");
  if (!api::HasMember(status, "admission") || !api::meta::IsConditionTrue(wl, "QuotaReserved") ||
      api::meta::IsConditionTrue(wl, api::kueue::kEvicted) ||
      api::meta::IsConditionTrue(wl, api::kueue::kFinished)) {
    forget();
    return Result::Done();
  }
  const absl::Time now = ctx_.clock.Now();
  api::kueue::StatusUpdate update(wl);
  std::optional<absl::Time> wake;
  bool waiting = false;
  const Json& podsets = MemberArray(MemberObject(wl, "spec"), "podSets");
  for (const Json& state : MemberArray(status, "admissionChecks")) {
    if (StringMember(state, "state") != kPending) continue;
    const std::string check(StringMember(state, "name"));
    ObjectRef ac = checks_.Get("", check);
    if (!ac || !Ours(*ac) || !CheckActive(*ac)) continue;
    ObjectRef prc = configs_.Get(
        "", std::string(StringMember(MemberObject(MemberObject(*ac, "spec"), "parameters"), "name")));
    if (!prc) continue;
    const Json& spec = MemberObject(*prc, "spec");
    const int64_t retries = IntMember(state, "retryCount");
    CapacityRequest req;
    req.name = absl::StrCat(api::meta::GetName(wl), "-", check, "-", retries + 1);
    req.provisioning_class = std::string(StringMember(spec, "provisioningClassName"));
    req.parameters = Parameters(*prc);
    std::set<std::string> managed;
    for (const Json& m : MemberArray(spec, "managedResources")) managed.emplace(AsString(m));
    for (const Json& psa : MemberArray(MemberObject(status, "admission"), "podSetAssignments")) {
      PodSetDemand d;
      d.name = std::string(StringMember(psa, "name"));
      const Json* ps = nullptr;
      for (const Json& p : podsets) {
        if (StringMember(p, "name") == d.name) ps = &p;
      }
      d.count = static_cast<int32_t>(
          IntMember(psa, "count", ps != nullptr ? IntMember(*ps, "count", 1) : 1));
      if (d.count <= 0) continue;
      bool needs = managed.empty();
      const Json& usage = MemberObject(psa, "resourceUsage");
      for (auto it = usage.begin(); it != usage.end(); ++it) {
        if (!it->is_string()) continue;
        auto q = api::Quantity::Parse(it->get<std::string>());
        if (!q.ok()) continue;
        const int64_t total = api::Amount::FromQuantity(*q).milli();
        d.per_pod[it.key()] = api::Amount::FromMilli((total + d.count - 1) / d.count);
        if (managed.count(it.key()) > 0) needs = true;
      }
      if (!needs) continue;
      if (ps != nullptr) {
        const Json& tspec = MemberObject(MemberObject(*ps, "template"), "spec");
        d.node_selector = api::StringMap(MemberObject(tspec, "nodeSelector"));
        d.tolerations = api::core_v1::ParseTolerationList(MemberArray(tspec, "tolerations"));
      }
      const Json& flavors = MemberObject(psa, "flavors");
      for (auto it = flavors.begin(); it != flavors.end(); ++it) {
        if (!it->is_string()) continue;
        if (ObjectRef rf = flavors_.Get("", it->get<std::string>())) {
          const Json& rspec = MemberObject(*rf, "spec");
          for (auto& [k, v] : api::StringMap(MemberObject(rspec, "nodeLabels"))) {
            d.node_selector[k] = v;
          }
          for (auto& t : api::core_v1::ParseTolerationList(MemberArray(rspec, "tolerations"))) {
            d.tolerations.push_back(std::move(t));
          }
        }
      }
      req.pod_sets.push_back(std::move(d));
    }
    CheckStateUpdate next;
    if (req.pod_sets.empty()) {
      next.state = kReady;
      next.message = "The workload requests none of the managed resources";
      SetCheckState(update.status(), check, next, now);
      continue;
    }
    const ProvisionOutcome out = provisioner_->Provision(req);
    const absl::Time started =
        api::meta::ParseOptionalRfc3339(StringMember(state, "lastTransitionTime")).value_or(now);
    const absl::Duration timeout = ProvisioningTimeout(req.parameters, nullptr);
    if (out.state == ProvisionOutcome::State::kProvisioned) {
      next.state = kReady;
      next.message = absl::StrCat("Provisioned (", req.name, "): ", out.message);
      Json updates = Json::array();
      for (const PodSetDemand& d : req.pod_sets) {
        Json u = {{"name", d.name},
                  {"annotations",
                   {{kConsumeAnnotation, req.name}, {kClassAnnotation, req.provisioning_class}}}};
        if (!out.node_selector.empty()) u["nodeSelector"] = out.node_selector;
        updates.push_back(std::move(u));
      }
      next.pod_set_updates = std::move(updates);
    } else if (out.state == ProvisionOutcome::State::kFailed || now >= started + timeout) {
      const Retry rs = RetryOf(*prc);
      const std::string why = out.state == ProvisionOutcome::State::kFailed
                                  ? out.message
                                  : absl::StrCat("not provisioned within ",
                                                 absl::FormatDuration(timeout), ": ", out.message);
      if (retries < rs.limit) {
        double delay = static_cast<double>(rs.base) * std::ldexp(1.0, static_cast<int>(std::min<int64_t>(retries, 40)));
        delay = std::min(delay, static_cast<double>(rs.max));
        next.state = kRetry;
        next.requeue_after_seconds = static_cast<int32_t>(std::max(0.0, delay));
        next.message = absl::StrCat("Retrying (attempt ", retries + 1, " of ", rs.limit + 1,
                                    " failed): ", why);
      } else {
        next.state = kRejected;
        next.message = absl::StrCat("Rejected after ", retries + 1, " attempt(s): ", why);
      }
    } else {
      waiting = true;
      const absl::Time deadline = started + timeout;
      if (!wake || deadline < *wake) wake = deadline;
      next.state = kPending;
      next.message = out.message;
    }
    SetCheckState(update.status(), check, next, now);
  }
  {
    absl::MutexLock lock(&mu_);
    if (waiting) {
      waiting_.insert(key);
    } else {
      waiting_.erase(key);
    }
  }
  if (update.changed()) {
    auto r = ctx_.client.UpdateStatus(
        wl_kind_, std::move(update).Build(wl_kind_.ApiVersion(), wl_kind_.kind));
    if (!r.ok()) {
      // Gone, or changed since read: the newer version's event enqueues it again.
      if (absl::IsNotFound(r.status()) || absl::IsAborted(r.status())) return Result::Done();
      return r.status();
    }
  }
  if (!wake) return Result::Done();
  return Result::After(std::max(*wake - now, absl::Milliseconds(1)));
}

}  // namespace batchd::controllers::admissioncheck::internal
