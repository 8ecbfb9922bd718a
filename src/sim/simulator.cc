#include "sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "agent/sim/sim_kubelet.h"
#include "api/codec/codec.h"
#include "api/json_access.h"
#include "api/kueue/queue_views.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "api/scheduling/v1alpha2/scheduling_v1alpha2.h"
#include "client/in_process_client.h"
#include "common/string_view.h"
#include "common/testing/fake_clock.h"
#include "controllers/cronjob/cronjob_controller.h"
#include "controllers/endpointslice/endpointslice_controller.h"
#include "controllers/gc/gc_controller.h"
#include "controllers/job/job_controller.h"
#include "controllers/job/workload_with_job.h"
#include "controllers/jobset/exclusive_placement.h"
#include "controllers/jobset/jobset_controller.h"
#include "controllers/nodelifecycle/nodelifecycle.h"
#include "controllers/queueing/queue_manager.h"
#include "controllers/topology/ungater.h"
#include "controllers/admissioncheck/controllers.h"
#include "controllers/workload/jobset_integration.h"
#include "controllers/workload/pod_integration.h"
#include "controllers/workload/workload_controller.h"
#include "reconcile/context.h"
#include "reconcile/events.h"
#include "registry/errors.h"
#include "registry/priority_admission.h"
#include "registry/registry.h"
#include "scheduler/scheduler.h"
#include "sim/invariants.h"
#include "sim/simulator_impl.h"
#include "store/memory/memory_store.h"

namespace batchd::sim {

using api::Amount;
using api::Json;
using client::ObjectRef;

absl::Time SimEpoch() { return absl::FromUnixSeconds(1767225600); }  // 2026-01-01T00:00:00Z

std::string FormatSeconds(absl::Duration d) {
  int64_t ns = absl::ToInt64Nanoseconds(d);
  std::string sign = ns < 0 ? "-" : "";
  if (ns < 0) ns = -ns;
  std::string out = absl::StrCat(sign, ns / 1000000000);
  int64_t frac = ns % 1000000000;
  if (frac != 0) {
    std::string f = absl::StrFormat("%09d", frac);
    while (!f.empty() && f.back() == '0') f.pop_back();
    out += "." + f;
  }
  return out;
}


using internal::KeyOf;
using internal::Units;

namespace {

bool CondTrue(const Json* obj, const char* type) {
  return obj != nullptr && api::meta::IsConditionTrue(*obj, type);
}

// A condition's (status, lastTransitionTime, reason): a change of any is a
// new transition when the status is True.
std::string CondStamp(const Json* obj, const char* type) {
  if (!obj) return "";
  const Json* c = api::meta::FindCondition(*obj, type);
  if (!c || !c->is_object()) return "";
  return c->value("status", "") + "|" + c->value("lastTransitionTime", "") + "|" +
         c->value("reason", "");
}

std::string CondReason(const Json& obj, const char* type) {
  const Json* c = api::meta::FindCondition(obj, type);
  return c && c->is_object() ? c->value("reason", "") : "";
}

bool Unowned(const Json& obj) {
  const Json& refs = api::Member(api::MemberObject(obj, "metadata"), "ownerReferences");
  return !refs.is_array() || refs.empty();
}

// The registry's admission hooks, as `batchd server` registers them
// (src/cmd/server.cc, Server::Create; keep the two in step).
absl::Status SetUpRegistry(registry::Registry& r, const SimOptions& o) {
  if (auto st = r.Start(); !st.ok()) return st;
  registry::AddPriorityAdmission(r);
  if (auto st = registry::EnsureSystemPriorityClasses(r); !st.ok()) return st;
  if (auto st = controllers::AddJobSetPodWebhook(r); !st.ok()) return st;
  const controllers::JobIntegrationOptions jo = controllers::JobIntegrationOptionsFrom(o.queueing);
  // integrations.frameworks decides which kinds are managed (Kueue: batch/job).
  if (o.queueing.FrameworkEnabled("batch/job")) {
    if (auto st = controllers::RegisterJobWebhooks(r, jo); !st.ok()) return st;
  }
  if (auto st = controllers::RegisterJobSetWebhooks(
          r, jo, o.queueing.FrameworkEnabled(controllers::kJobSetFramework));
      !st.ok()) {
    return st;
  }
  if (o.queueing.FrameworkEnabled("pod")) {
    if (auto st =
            controllers::RegisterPodWebhooks(r, controllers::PodIntegrationOptionsFrom(o.queueing));
        !st.ok()) {
      return st;
    }
  }
  if (o.workload_with_job) {
    if (auto st = controllers::job::AddParallelismValidation(r); !st.ok()) return st;
  }
  return absl::OkStatus();
}
}  // namespace


void Simulator::Impl::AddControllers() {
  // The controllers `batchd server` runs (src/cmd/server.cc,
  // Server::Impl::AddControllers), on the simulator's one context.
  reconcile::ControllerContext& c = *ctx;
  controllers::JobControllerOptions job_options;
  job_options.workload_with_job = opts.workload_with_job;
  controllers::AddJobController(c, job_options);
  controllers::AddCronJobController(c);
  controllers::AddJobSetController(c);
  controllers::AddExclusivePlacementController(c);
  controllers::AddGarbageCollector(c);
  controllers::AddTtlAfterFinishedController(c);
  controllers::AddNodeLifecycleController(c);
  controllers::endpointslice::AddEndpointSliceController(c);
  agent::sim::AddSimulatedKubelet(c);
  scheduler::SchedulerOptions so;
  so.binder = std::make_shared<scheduler::RegistryBinder>(*registry);
  scheduler::AddScheduler(c, std::move(so));
  const controllers::JobIntegrationOptions jo =
      controllers::JobIntegrationOptionsFrom(opts.queueing);
  if (opts.queueing.FrameworkEnabled("batch/job")) controllers::AddJobIntegration(c, jo);
  if (opts.queueing.FrameworkEnabled("pod")) {
    controllers::AddPodIntegration(c, controllers::PodIntegrationOptionsFrom(opts.queueing));
  }
  if (opts.queueing.FrameworkEnabled(controllers::kJobSetFramework)) {
    controllers::AddJobSetIntegration(c, jo);
  }
  controllers::topology::AddTopologyUngater(c);
  controllers::admissioncheck::AddAdmissionCheckControllers(c);
  queue_manager = controllers::queueing::AddQueueManager(c, opts.queueing);
  // One write per queue per virtual instant (FlushQueueStatuses), not one
  // per cycle: an instant runs a cycle for each workload change.
  queue_manager->DeferQueueStatuses();
}

std::string Simulator::Impl::CqOfQueue(const std::string& ns, const std::string& lq) const {
  if (lq.empty() || !local_queues) return "";
  ObjectRef o = local_queues->Get(ns, lq);
  if (!o) return "";
  return std::string(api::kueue::LocalQueueView::Parse(*o).cluster_queue);
}

void Simulator::Impl::Emit(const std::string& kind, const Json& obj, const std::string& event,
                           const std::string& cq, const Json& flavors,
                           const std::string& reason) {
  if (opts.events == SimOptions::EventsMode::kNone) return;
  // Field order is the contract's (DESIGN.md), so it is written by hand.
  absl::StrAppend(&events, "{\"t\":", FormatSeconds(Now()), ",\"kind\":", Json(kind).dump(),
                  ",\"namespace\":", Json(api::meta::GetNamespace(obj)).dump(),
                  ",\"name\":", Json(api::meta::GetName(obj)).dump(),
                  ",\"event\":\"", event, "\",\"clusterQueue\":", Json(cq).dump(),
                  ",\"flavors\":", flavors.dump(), ",\"reason\":", Json(reason).dump(), "}\n");
  if (opts.events == SimOptions::EventsMode::kStream && events.size() >= opts.events_chunk) {
    WriteEvents();
  }
}

void Simulator::Impl::WriteEvents() {
  if (opts.events_to != nullptr) opts.events_to->write(events.data(), events.size());
  events.clear();
}

void Simulator::Impl::Touch(QueueStat& q, const std::string& name, bool is_cq) {
  absl::Duration now = Now();
  double dt = absl::ToDoubleSeconds(now - q.last_change);
  if (dt > 0) {
    for (const auto& [k, a] : q.usage) q.usage_seconds[k] += Units(a) * dt;
  }
  q.last_change = now;
  if (is_cq) plot_dirty.insert(name);
}

void Simulator::Impl::SetHolding(WlStat& w, bool holding, const Usage& usage) {
  QueueStat* cq = w.cq.empty() ? nullptr : &cq_stats[w.cq];
  QueueStat* lq = &lq_stats[w.ns + "/" + w.lq];
  if (w.holding) {
    for (QueueStat* q : {cq, lq}) {
      if (!q) continue;
      Touch(*q, q == cq ? w.cq : "", q == cq);
      for (const auto& [k, a] : w.usage) q->usage[k] -= a;
    }
  }
  w.holding = holding;
  w.usage = holding ? usage : Usage();
  if (holding) {
    for (QueueStat* q : {cq, lq}) {
      if (!q) continue;
      Touch(*q, q == cq ? w.cq : "", q == cq);
      for (const auto& [k, a] : w.usage) q->usage[k] += a;
    }
  }
}

void Simulator::Impl::OnWorkload(const Json* old_obj, const Json* new_obj) {
  const Json& any = new_obj ? *new_obj : *old_obj;
  std::string key = KeyOf(any);
  if (checker) checker->OnWorkload(old_obj, new_obj);
  if (Unowned(any)) {
    std::string u = "Workload " + key;
    if (new_obj && !CondTrue(new_obj, "Finished")) {
      unfinished.insert(u);
    } else {
      unfinished.erase(u);
    }
  }
  if (!new_obj) {
    auto it = workloads.find(key);
    if (it == workloads.end()) return;
    WlStat& w = it->second;
    SetHolding(w, false, {});
    if (!w.finished && !w.admitted && !w.deleted) {
      QueueStat* cq = w.cq.empty() ? nullptr : &cq_stats[w.cq];
      for (QueueStat* q : {cq, &lq_stats[w.ns + "/" + w.lq]}) {
        if (!q) continue;
        Touch(*q, q == cq ? w.cq : "", q == cq);
        --q->pending;
      }
    }
    w.deleted = true;
    // Dropped finished work leaves nothing behind (the summary skips
    // deleted workloads).
    if (opts.drop_finished && w.finished) workloads.erase(it);
    return;
  }
  auto view = api::kueue::WorkloadView::Parse(*new_obj);
  bool added = !old_obj;
  auto [it, inserted] = workloads.try_emplace(key);
  WlStat& w = it->second;
  if (inserted) {
    w.ns = api::meta::GetNamespace(*new_obj);
    w.lq = std::string(view.queue_name);
    w.cq = CqOfQueue(w.ns, w.lq);
    w.created = Now();
  }
  QueueStat* cq = w.cq.empty() ? nullptr : &cq_stats[w.cq];
  QueueStat* lq = &lq_stats[w.ns + "/" + w.lq];
  auto both = [&](auto fn) {
    for (QueueStat* q : {cq, lq}) {
      if (q) fn(*q, q == cq);
    }
  };
  std::string admission_cq = std::string(view.admission_cluster_queue);
  Json flavors = Json::object();
  Usage usage;
  const Json* flavor_src = view.has_admission ? new_obj : old_obj;
  if (flavor_src) {
    auto sets = api::kueue::WorkloadPodSetsView::Parse(*flavor_src);
    for (const auto& psa : sets.assignments) {
      for (const auto& [res, fl] : psa.resource_flavors) {
        if (!flavors.contains(std::string(res))) flavors[std::string(res)] = std::string(fl);
      }
      if (view.has_admission && psa.resource_usage) {
        for (const auto& ra : api::kueue::ParseResourceList(*psa.resource_usage)) {
          for (const auto& [res, fl] : psa.resource_flavors) {
            if (res == ra.name) usage[absl::StrCat(Sv(fl), "/", Sv(res))] += ra.amount;
          }
        }
      }
    }
    if (admission_cq.empty() && old_obj) {
      admission_cq = std::string(api::kueue::WorkloadView::Parse(*old_obj).admission_cluster_queue);
    }
  }
  std::string event_cq = admission_cq.empty() ? w.cq : admission_cq;
  if (added) {
    if (!first_submit) first_submit = Now();
    Emit("Workload", *new_obj, "Created", event_cq, Json::object(), "");
    both([&](QueueStat& q, bool is_cq) {
      Touch(q, w.cq, is_cq);
      ++q.created;
      ++q.pending;
      q.peak_pending = std::max(q.peak_pending, q.pending);
    });
  }
  struct T {
    const char* cond;
    const char* event;
  };
  for (T t : {T{"QuotaReserved", "QuotaReserved"}, T{"Admitted", "Admitted"},
              T{"Preempted", "Preempted"}, T{"Evicted", "Evicted"}, T{"Requeued", "Requeued"},
              T{"Finished", "Finished"}}) {
    if (!CondTrue(new_obj, t.cond)) continue;
    if (CondTrue(old_obj, t.cond) && CondStamp(old_obj, t.cond) == CondStamp(new_obj, t.cond)) {
      continue;
    }
    std::string reason = CondReason(*new_obj, t.cond);
    std::string event = t.event;
    if (event == "Finished" && reason == "Failed") event = "Failed";
    bool with_flavors = event == "QuotaReserved" || event == "Admitted" ||
                        event == "Preempted" || event == "Evicted";
    Emit("Workload", *new_obj, event, event_cq, with_flavors ? flavors : Json::object(), reason);
    if (event == "Admitted") {
      both([&](QueueStat& q, bool is_cq) {
        Touch(q, w.cq, is_cq);
        ++q.admitted;
        if (!w.admitted) {
          q.waits.push_back(absl::ToDoubleSeconds(Now() - w.created));
          --q.pending;
        }
      });
      if (!w.admitted) w.admitted = Now();
    } else if (event == "Preempted") {
      both([&](QueueStat& q, bool) { ++q.preempted; });
    } else if (event == "Evicted") {
      both([&](QueueStat& q, bool) { ++q.evicted; });
    } else if (event == "Finished" || event == "Failed") {
      both([&](QueueStat& q, bool is_cq) {
        ++(event == "Finished" ? q.finished : q.failed);
        if (!w.admitted && !w.finished) {
          Touch(q, w.cq, is_cq);
          --q.pending;
        }
      });
      w.finished = true;
    }
  }
  bool holding = view.has_admission && !view.IsConditionTrue("Finished");
  if (holding != w.holding || (holding && usage != w.usage)) SetHolding(w, holding, usage);
}

void Simulator::Impl::OnJob(const char* kind, const Json* old_obj, const Json* new_obj,
                            const char* ok_cond, const char* fail_cond) {
  const Json& any = new_obj ? *new_obj : *old_obj;
  std::string u = absl::StrCat(kind, " ", KeyOf(any));
  if (!new_obj) {
    unfinished.erase(u);
    return;
  }
  std::string ns = api::meta::GetNamespace(*new_obj);
  // The ClusterQueue is looked up only for an event (most changes emit none).
  std::optional<std::string> cq_memo;
  auto cq = [&]() -> const std::string& {
    if (!cq_memo) {
      auto lq = api::meta::GetLabel(*new_obj, "kueue.x-k8s.io/queue-name");
      if (!lq) lq = api::meta::GetAnnotation(*new_obj, "kueue.x-k8s.io/queue-name");
      cq_memo = lq ? CqOfQueue(ns, *lq) : "";
    }
    return *cq_memo;
  };
  if (!old_obj) {
    if (!first_submit) first_submit = Now();
    Emit(kind, *new_obj, "Created", cq(), Json::object(), "");
    ++jobs_by_state[absl::StrCat(kind, "/total")];
  }
  bool ok = CondTrue(new_obj, ok_cond), failed = CondTrue(new_obj, fail_cond);
  if (ok && !CondTrue(old_obj, ok_cond)) {
    Emit(kind, *new_obj, "Finished", cq(), Json::object(), CondReason(*new_obj, ok_cond));
    ++jobs_by_state[absl::StrCat(kind, "/succeeded")];
    last_finish = Now();
  }
  if (failed && !CondTrue(old_obj, fail_cond)) {
    Emit(kind, *new_obj, "Failed", cq(), Json::object(), CondReason(*new_obj, fail_cond));
    ++jobs_by_state[absl::StrCat(kind, "/failed")];
    last_finish = Now();
  }
  if (ok || failed) {
    if (opts.drop_finished && unfinished.erase(u) > 0 && Unowned(*new_obj)) {
      const api::KindDef* k = kind == std::string_view("Job")
                                  ? &client->Kind("batch", "v1", "jobs")
                                  : &client->Kind("jobset.x-k8s.io", "v1alpha2", "jobsets");
      to_drop.push_back(Drop{k, ns, api::meta::GetName(*new_obj), api::meta::GetUid(*new_obj)});
    }
    unfinished.erase(u);
  } else {
    unfinished.insert(u);
  }
}

void Simulator::Impl::AddRecorders() {
  auto& inf = *informers;
  local_queues = &inf.For("kueue.x-k8s.io", "v1beta2", "localqueues");
  pod_groups = &inf.For(api::scheduling_v1alpha2::kGroup, api::scheduling_v1alpha2::kVersion,
                        api::scheduling_v1alpha2::kPodGroups);
  sched_workloads = &inf.For(api::scheduling_v1alpha2::kGroup, api::scheduling_v1alpha2::kVersion,
                             api::scheduling_v1alpha2::kWorkloads);
  client::Informer* pgs = pod_groups;
  client::Informer* swl = sched_workloads;
  checker = std::make_unique<InvariantChecker>([pgs, swl](const std::string& policy)
                                                   -> std::optional<int> {
    // "pg/<ns>/<name>" or "wl/<ns>/<name>/<podGroup>".
    std::vector<std::string> p = absl::StrSplit(policy, '/');
    if (p.size() < 3) return std::nullopt;
    if (p[0] == "pg") {
      ObjectRef o = pgs->Get(p[1], p[2]);
      if (!o) return std::nullopt;
      auto g = api::scheduling_v1alpha2::PodGroupPolicy(*o);
      return g.gang ? std::optional<int>(g.min_count) : std::nullopt;
    }
    ObjectRef o = swl->Get(p[1], p[2]);
    if (!o || p.size() < 4) return std::nullopt;
    auto g = api::scheduling_v1alpha2::WorkloadTemplatePolicy(*o, p[3]);
    return g && g->gang ? std::optional<int>(g->min_count) : std::nullopt;
  });
  InvariantChecker* ch = checker.get();
  inf.For("kueue.x-k8s.io", "v1beta2", "workloads")
      .AddHandlers({[this](const ObjectRef& o) { OnWorkload(nullptr, o.get()); },
                    [this](const ObjectRef& a, const ObjectRef& b) { OnWorkload(a.get(), b.get()); },
                    [this](const ObjectRef& o) { OnWorkload(o.get(), nullptr); }});
  inf.For("batch", "v1", "jobs")
      .AddHandlers(
          {[this](const ObjectRef& o) { OnJob("Job", nullptr, o.get(), "Complete", "Failed"); },
           [this](const ObjectRef& a, const ObjectRef& b) {
             OnJob("Job", a.get(), b.get(), "Complete", "Failed");
           },
           [this](const ObjectRef& o) { OnJob("Job", o.get(), nullptr, "Complete", "Failed"); }});
  inf.For("jobset.x-k8s.io", "v1alpha2", "jobsets")
      .AddHandlers(
          {[this](const ObjectRef& o) {
             OnJob("JobSet", nullptr, o.get(), "Completed", "Failed");
           },
           [this](const ObjectRef& a, const ObjectRef& b) {
             OnJob("JobSet", a.get(), b.get(), "Completed", "Failed");
           },
           [this](const ObjectRef& o) { OnJob("JobSet", o.get(), nullptr, "Completed", "Failed"); }});
  auto pod_done = [](const Json& p) {
    std::string_view phase = api::StringMember(api::MemberObject(p, "status"), "phase");
    return phase == "Succeeded" || phase == "Failed";
  };
  inf.For("", "v1", "pods")
      .AddHandlers({[this, ch, pod_done](const ObjectRef& o) {
                      ch->OnPod(nullptr, o.get());
                      if (Unowned(*o) && !pod_done(*o)) unfinished.insert("Pod " + KeyOf(*o));
                    },
                    [this, ch, pod_done](const ObjectRef& a, const ObjectRef& b) {
                      ch->OnPod(a.get(), b.get());
                      if (Unowned(*b) && pod_done(*b)) {
                        if (unfinished.erase("Pod " + KeyOf(*b))) last_finish = Now();
                      }
                    },
                    [this, ch](const ObjectRef& o) {
                      ch->OnPod(o.get(), nullptr);
                      unfinished.erase("Pod " + KeyOf(*o));
                    }});
  inf.For("", "v1", "nodes")
      .AddHandlers({[ch](const ObjectRef& o) { ch->OnNode(o.get(), false); },
                    [ch](const ObjectRef&, const ObjectRef& b) { ch->OnNode(b.get(), false); },
                    [ch](const ObjectRef& o) { ch->OnNode(o.get(), true); }});
  inf.For("kueue.x-k8s.io", "v1beta2", "clusterqueues")
      .AddHandlers({[ch](const ObjectRef& o) { ch->OnClusterQueue(o.get(), false); },
                    [ch](const ObjectRef& a, const ObjectRef& b) {
                      if (api::kueue::SpecOf(*a) != api::kueue::SpecOf(*b)) {
                        ch->OnClusterQueue(b.get(), false);
                      }
                    },
                    [ch](const ObjectRef& o) { ch->OnClusterQueue(o.get(), true); }});
  inf.For("kueue.x-k8s.io", "v1beta2", "cohorts")
      .AddHandlers({[ch](const ObjectRef& o) { ch->OnCohort(o.get(), false); },
                    [ch](const ObjectRef& a, const ObjectRef& b) {
                      if (api::kueue::SpecOf(*a) != api::kueue::SpecOf(*b)) {
                        ch->OnCohort(b.get(), false);
                      }
                    },
                    [ch](const ObjectRef& o) { ch->OnCohort(o.get(), true); }});
  if (opts.drop_finished) {
    // Finished work is deleted within its step: kept compact (settled.h)
    // meanwhile, it would only be parsed again by every reader of the deletes.
    // (After the informers above: their order is the order events are seen.)
    inf.For("", "v1", "pods").SetCompactWhen({});
    inf.For("batch", "v1", "jobs").SetCompactWhen({});
    inf.For("kueue.x-k8s.io", "v1beta2", "workloads").SetCompactWhen({});
  }
}

absl::Status Simulator::Impl::Submit(ScenarioObject& o) {
  // The object is moved to the store (it is not needed after), its place in
  // the scenario named first for a message.
  const std::string where = o.Where();
  Json obj = std::move(o.object);
  o.object = Json();
  std::string av = obj["apiVersion"];
  std::string group, version = av;
  if (auto slash = av.find('/'); slash != std::string::npos) {
    group = av.substr(0, slash);
    version = av.substr(slash + 1);
  }
  const api::KindDef* k = registry->scheme().ByKind(group, version, obj["kind"].get<std::string>());
  std::string ns;
  if (k->namespaced) {
    ns = api::meta::GetNamespace(obj);
    if (ns.empty()) ns = "default";
  }
  Json status;
  if (k->kind == "Node" && k->group.empty()) {
    obj["metadata"]["annotations"][agent::sim::kSimulatedAnnotation] = "true";
    if (obj.contains("status")) status = obj["status"];
  }
  auto r = client->Create(*k, ns, std::move(obj));
  if (!r.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(o.source, ": ", where, ": at t=", FormatSeconds(Now()), "s: ",
                     r.status().message()));
  }
  if (!status.is_null() && (*r).value("status", Json::object()).value("capacity", Json()) !=
                               status.value("capacity", Json())) {
    auto p = client->MergePatch(*k, "", api::meta::GetName(*r), {{"status", status}}, true);
    if (!p.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(o.source, ": ", where, ": status: ",
                                                     p.status().message()));
    }
  }
  return absl::OkStatus();
}

int Simulator::Impl::FlushQueueStatuses(int budget) {
  int n = 0;
  while (n < budget && queue_manager->QueueStatusesOwed()) {
    // A failed write stays owed and is retried at the next step.
    if (!queue_manager->FlushQueueStatuses()) break;
    n += manager->RunUntilIdle(budget - n);
    if (n < budget) n += DropFinished();
  }
  return n;
}

int Simulator::Impl::DropFinished() {
  int n = 0;
  while (!to_drop.empty()) {
    std::vector<Drop> batch = std::move(to_drop);
    to_drop.clear();
    for (const Drop& d : batch) {
      client::DeleteOptions o;
      o.propagation_policy = "Background";
      o.precondition_uid = d.uid;
      // NotFound or a changed UID: already gone (a TTL, a test): nothing to do.
      (void)client->Delete(*d.kind, d.ns, d.name, o);
    }
    n += manager->RunUntilIdle(opts.max_reconciles_per_step);
  }
  return n;
}

void Simulator::Impl::Flush() {
  for (auto& [name, q] : cq_stats) Touch(q, name, true);
  for (auto& [name, q] : lq_stats) Touch(q, "", false);
}

Simulator::Simulator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Simulator::~Simulator() = default;

absl::StatusOr<std::unique_ptr<Simulator>> Simulator::Create(const SimOptions& opts) {
  auto impl = std::make_unique<Impl>();
  Impl& i = *impl;
  i.opts = opts;
  i.rng.seed(opts.seed);
  i.registry = std::make_unique<registry::Registry>(i.store, api::BuiltinScheme(), i.clock,
                                                    absl::BitGenRef(i.rng));
  if (auto st = SetUpRegistry(*i.registry, opts); !st.ok()) return st;
  i.client = std::make_unique<client::InProcessClient>(*i.registry, "batchd-controller-manager");
  i.manager = std::make_unique<reconcile::Manager>(i.clock);
  i.informers = std::make_unique<reconcile::InformerFactory>(*i.client, *i.manager);
  i.ctx.reset(new reconcile::ControllerContext{*i.client, *i.informers, *i.manager, i.clock,
                                               i.recorder});
  i.AddRecorders();
  i.AddControllers();
  return std::unique_ptr<Simulator>(new Simulator(std::move(impl)));
}

absl::Status Simulator::Load(std::vector<ScenarioObject> objects) {
  Impl& i = *impl_;
  std::stable_sort(objects.begin(), objects.end(),
                   [](const ScenarioObject& a, const ScenarioObject& b) {
                     return a.create_at < b.create_at;
                   });
  {
    // A scratch registry with the same hooks: every object is defaulted,
    // validated and admitted as it will be, before anything runs.
    FakeClock clock{SimEpoch()};
    std::mt19937_64 rng(i.opts.seed);
    store::MemoryStore store;
    registry::Registry reg(store, api::BuiltinScheme(), clock, absl::BitGenRef(rng));
    if (auto st = SetUpRegistry(reg, i.opts); !st.ok()) return st;
    client::InProcessClient c(reg);
    // The options of InProcessClient's writes, dry-run.
    registry::WriteOptions dry_run = client::InProcessClient::Opts();
    dry_run.dry_run = true;
    std::set<std::string> jobs;  // "ns/name" of the Jobs checked. Bound: the scenario's.
    for (const ScenarioObject& o : objects) {
      clock.AdvanceTo(SimEpoch() + o.create_at);
      Json obj = o.object;
      std::string av = obj["apiVersion"];
      std::string group, version = av;
      if (auto slash = av.find('/'); slash != std::string::npos) {
        group = av.substr(0, slash);
        version = av.substr(slash + 1);
      }
      const api::KindDef* k = reg.scheme().ByKind(group, version, obj["kind"].get<std::string>());
      if (!k) {
        return absl::InvalidArgumentError(absl::StrCat(o.source, ": ", o.Where(),
                                                       ": kind: Unsupported value"));
      }
      std::string ns;
      if (k->namespaced) {
        ns = api::meta::GetNamespace(obj);
        if (ns.empty()) ns = "default";
      }
      if (k->kind == "Node" && k->group.empty()) {
        obj["metadata"]["annotations"][agent::sim::kSimulatedAnnotation] = "true";
      }
      absl::StatusOr<Json> r;
      if (k->group == "batch" && k->kind == "Job" && !k->storage) {
        // No admission hook of another object reads a Job, so a Job is only
        // checked (a dry run: defaulted, admitted, validated, not stored);
        // a second Job of the same name fails as its create would.
        std::string name = api::CopyStringMember(api::MemberObject(obj, "metadata"), "name");
        r = reg.Create(*k, ns, std::move(obj), dry_run);
        if (r.ok() && !name.empty() && !jobs.insert(ns + "/" + name).second) {
          r = registry::AlreadyExists(*k, name);
        }
      } else {
        r = c.Create(*k, ns, std::move(obj));
      }
      if (!r.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(o.source, ": ", o.Where(), ": ", r.status().message()));
      }
    }
  }
  i.objects = std::move(objects);
  return absl::OkStatus();
}

client::Client& Simulator::client() { return *impl_->client; }
absl::Duration Simulator::Elapsed() const { return impl_->Now(); }
bool Simulator::finished() const { return impl_->all_finished; }
const std::string& Simulator::Events() const {
  static const std::string kNoEvents;
  return impl_->opts.events == SimOptions::EventsMode::kKeep ? impl_->events : kNoEvents;
}

absl::Status Simulator::FlushEvents() {
  Impl& i = *impl_;
  if (i.opts.events != SimOptions::EventsMode::kStream) return absl::OkStatus();
  if (i.opts.events_to == nullptr) return absl::InvalidArgumentError("no stream for the events");
  i.WriteEvents();
  i.opts.events_to->flush();
  if (!*i.opts.events_to) return absl::InternalError("the events could not be written");
  return absl::OkStatus();
}

absl::StatusOr<bool> Simulator::Step() {
  Impl& i = *impl_;
  if (i.done) return false;
  if (!i.started) {
    if (auto st = i.manager->SyncAll(); !st.ok()) return st;
    i.started = true;
  }
  absl::Time now = i.clock.Now();
  while (i.next_object < i.objects.size() &&
         SimEpoch() + i.objects[i.next_object].create_at <= now) {
    // Submitted, the object is dropped from the scenario (the store holds it).
    if (auto st = i.Submit(i.objects[i.next_object]); !st.ok()) return st;
    ++i.next_object;
  }
  int n = i.manager->RunUntilIdle(i.opts.max_reconciles_per_step);
  if (n < i.opts.max_reconciles_per_step) n += i.DropFinished();
  n += i.FlushQueueStatuses(i.opts.max_reconciles_per_step - n);
  i.reconciles += n;
  ++i.steps;
  i.store_commits = i.store.Revision();
  if (n >= i.opts.max_reconciles_per_step) {
    i.done = true;
    i.stop = "livelock";
    return absl::ResourceExhaustedError(absl::StrCat(
        "t=", FormatSeconds(i.Now()), "s: controllers did not settle after ", n,
        " reconciles (a livelock)"));
  }
  std::vector<std::string> bad = i.checker->Check();
  if (!bad.empty()) {
    std::string msg = absl::StrCat("invariant violated at t=", FormatSeconds(i.Now()), "s");
    for (const auto& b : bad) absl::StrAppend(&msg, "\n  ", b);
    i.done = true;
    i.stop = "invariant";
    i.Flush();
    return absl::FailedPreconditionError(msg);
  }
  // Plot points of the ClusterQueues that changed.
  for (const std::string& cq : i.plot_dirty) {
    const QueueStat& q = i.cq_stats[cq];
    Usage nominal = i.checker->CqNominal(cq);
    double frac = 0;
    for (const auto& [k, a] : q.usage) {
      auto n = nominal.find(k);
      if (n != nominal.end() && n->second.milli() > 0) {
        frac = std::max(frac, Units(a) / Units(n->second));
      }
    }
    auto& pts = i.plot[cq];
    double t = absl::ToDoubleSeconds(i.Now());
    if (!pts.empty() && pts.back().t == t) pts.pop_back();
    pts.push_back({t, frac, static_cast<double>(q.pending)});
    if (pts.size() > 2 * i.opts.plot_points) {
      std::vector<PlotPoint> thin;
      for (size_t j = 0; j < pts.size(); j += 2) thin.push_back(pts[j]);
      thin.back() = pts.back();
      pts = std::move(thin);
    }
  }
  i.plot_dirty.clear();
  if (i.next_object == i.objects.size() && i.unfinished.empty()) {
    i.all_finished = true;
    i.done = true;
    i.stop = "finished";
    i.Flush();
    return false;
  }
  absl::Time next = i.clock.NextTimer();
  if (i.next_object < i.objects.size()) {
    next = std::min(next, SimEpoch() + i.objects[i.next_object].create_at);
  }
  absl::Time end = SimEpoch() + i.opts.until;
  if (next > end) {
    if (end > i.clock.Now()) i.clock.AdvanceTo(end);
    i.done = true;
    i.stop = "until";
    i.Flush();
    return false;
  }
  i.clock.AdvanceTo(next);
  return true;
}

absl::Status Simulator::Run() {
  for (;;) {
    auto r = Step();
    if (!r.ok()) return r.status();
    if (!*r) return absl::OkStatus();
  }
}

}  // namespace batchd::sim
