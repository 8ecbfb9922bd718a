// Simulator's outputs: --state, --summary, the stderr table and the --plot
// SVG (simulator.h), from what the run kept (simulator_impl.h).
#include <algorithm>
#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "api/kueue/queue_views.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "sim/simulator_impl.h"

namespace batchd::sim {

using api::Json;
using client::ObjectRef;
using internal::KeyOf;
using internal::Units;

namespace {

Json Percentiles(std::vector<double> v) {
  if (v.empty()) return Json::object();
  std::sort(v.begin(), v.end());
  auto pct = [&](double p) {
    size_t i = static_cast<size_t>(std::ceil(p / 100.0 * v.size()));
    return v[std::min(v.size() - 1, i == 0 ? 0 : i - 1)];
  };
  double sum = 0;
  for (double x : v) sum += x;
  auto r = [](double x) { return std::round(x * 1000) / 1000; };
  return {{"p50", r(pct(50))}, {"p90", r(pct(90))}, {"p99", r(pct(99))},
          {"max", r(v.back())}, {"mean", r(sum / v.size())}};
}

}  // namespace

absl::StatusOr<std::string> Simulator::State() const {
  const Impl& i = *impl_;
  Json items = Json::array();
  std::vector<std::shared_ptr<const api::KindDef>> kinds = i.registry->scheme().All();
  std::sort(kinds.begin(), kinds.end(), [](const auto& a, const auto& b) {
    return std::tie(a->group, a->plural, a->version) < std::tie(b->group, b->plural, b->version);
  });
  std::set<std::string> seen;  // One version of each resource: the storage one.
  for (const auto& k : kinds) {
    if (k->storage != nullptr) continue;  // Served by conversion; listed in its storage version.
    if (k->kind == "Event" || !seen.insert(k->group + "/" + k->plural).second) continue;
    auto l = i.client->List(*k, "");
    if (!l.ok()) continue;  // Kinds that cannot be listed (none today).
    std::vector<Json> objs = std::move(l->items);
    std::sort(objs.begin(), objs.end(), [](const Json& a, const Json& b) {
      return KeyOf(a) < KeyOf(b);
    });
    for (Json& o : objs) {
      o["apiVersion"] = k->ApiVersion();
      o["kind"] = k->kind;
      items.push_back(std::move(o));
    }
  }
  Json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"metadata", Json::object()},
               {"items", std::move(items)}};
  return list.dump(1) + "\n";
}

Json Simulator::Summary() const {
  const Impl& i = *impl_;
  Json s;
  s["seed"] = i.opts.seed;
  s["untilSeconds"] = absl::ToDoubleSeconds(i.opts.until);
  s["endSeconds"] = absl::ToDoubleSeconds(i.Now());
  s["finished"] = i.all_finished;
  // Why the run ended: finished (all work), until (--until reached),
  // invariant (a violation), livelock (controllers did not settle).
  s["stoppedBy"] = i.stop;
  double makespan = 0;
  if (i.first_submit && i.last_finish) {
    makespan = absl::ToDoubleSeconds(*i.last_finish - *i.first_submit);
  }
  if (!i.all_finished && i.first_submit) makespan = absl::ToDoubleSeconds(i.Now() - *i.first_submit);
  s["makespanSeconds"] = makespan;
  // How the engine got there (changes with any controller's implementation).
  s["engine"] = {{"steps", i.steps}, {"reconciles", i.reconciles}};
  // Where the reconciles went, and the store's commits (creates, updates,
  // deletes: its revision), to tell the cost per job apart.
  Json by_controller = Json::object();
  for (const auto& [name, n] : i.manager->ProcessedByController()) {
    if (n > 0) by_controller[name] = by_controller.value(name, int64_t{0}) + n;
  }
  s["engine"]["reconcilesByController"] = std::move(by_controller);
  s["engine"]["storeCommits"] = i.store_commits;
  double span = absl::ToDoubleSeconds(i.Now());
  auto queue_json = [&](const QueueStat& q, const Usage& nominal) {
    Json j;
    j["created"] = q.created;
    j["admitted"] = q.admitted;
    j["preempted"] = q.preempted;
    j["evicted"] = q.evicted;
    j["finished"] = q.finished;
    j["failed"] = q.failed;
    j["pendingAtEnd"] = q.pending;
    j["peakPending"] = q.peak_pending;
    j["waitSeconds"] = Percentiles(q.waits);
    Json avg = Json::object(), util = Json::object();
    for (const auto& [k, sec] : q.usage_seconds) {
      double a = span > 0 ? sec / span : 0;
      avg[k] = std::round(a * 1000) / 1000;
      auto n = nominal.find(k);
      if (n != nominal.end() && n->second.milli() > 0) {
        util[k] = std::round(a / Units(n->second) * 10000) / 10000;
      }
    }
    j["averageUsage"] = avg;
    if (!nominal.empty()) {
      Json nom = Json::object();
      for (const auto& [k, a] : nominal) nom[k] = Units(a);
      j["nominalQuota"] = nom;
      j["utilisation"] = util;
    }
    return j;
  };
  Json cqs = Json::array();
  std::set<std::string> names;
  for (const auto& n : i.checker->ClusterQueues()) names.insert(n);
  for (const auto& [n, q] : i.cq_stats) names.insert(n);
  static const QueueStat kEmpty;
  for (const std::string& n : names) {
    auto it = i.cq_stats.find(n);
    Json j = queue_json(it == i.cq_stats.end() ? kEmpty : it->second, i.checker->CqNominal(n));
    j["name"] = n;
    j["cohort"] = i.checker->CohortOf(n);
    cqs.push_back(std::move(j));
  }
  s["clusterQueues"] = std::move(cqs);
  Json lqs = Json::array();
  std::vector<double> all_waits;
  Json totals = {{"created", 0}, {"admitted", 0}, {"preempted", 0}, {"evicted", 0},
                 {"finished", 0}, {"failed", 0}, {"pendingAtEnd", 0}};
  for (const auto& [key, q] : i.lq_stats) {
    Json j = queue_json(q, {});
    auto slash = key.find('/');
    j["namespace"] = key.substr(0, slash);
    j["name"] = key.substr(slash + 1);
    j["clusterQueue"] = i.CqOfQueue(key.substr(0, slash), key.substr(slash + 1));
    lqs.push_back(std::move(j));
    all_waits.insert(all_waits.end(), q.waits.begin(), q.waits.end());
    totals["created"] = totals["created"].get<int64_t>() + q.created;
    totals["admitted"] = totals["admitted"].get<int64_t>() + q.admitted;
    totals["preempted"] = totals["preempted"].get<int64_t>() + q.preempted;
    totals["evicted"] = totals["evicted"].get<int64_t>() + q.evicted;
    totals["finished"] = totals["finished"].get<int64_t>() + q.finished;
    totals["failed"] = totals["failed"].get<int64_t>() + q.failed;
    totals["pendingAtEnd"] = totals["pendingAtEnd"].get<int64_t>() + q.pending;
  }
  s["localQueues"] = std::move(lqs);
  totals["waitSeconds"] = Percentiles(all_waits);
  s["workloads"] = std::move(totals);
  Json jobs = Json::object();
  for (const auto& [k, v] : i.jobs_by_state) {
    auto slash = k.find('/');
    jobs[k.substr(0, slash)][k.substr(slash + 1)] = v;
  }
  s["jobs"] = std::move(jobs);
  // Pending work: what never finished, with why (bounded).
  constexpr size_t kMaxPending = 1000;
  // Why the pods of unfinished work wait: the first unschedulable pod's
  // PodScheduled message per owner (one pass over the pods).
  std::map<std::string, std::string> why;
  if (!i.unfinished.empty()) {
    for (const ObjectRef& p : i.informers->For("", "v1", "pods").List()) {
      const Json* c = api::meta::FindCondition(*p, "PodScheduled");
      if (!c || c->value("status", "") != "False") continue;
      auto owner = api::meta::GetControllerRef(*p);
      std::string key = owner ? absl::StrCat(owner->kind, " ", api::meta::GetNamespace(*p), "/",
                                             owner->name)
                              : "Pod " + KeyOf(*p);
      why.emplace(key, absl::StrCat("pod ", api::meta::GetName(*p), ": ",
                                    c->value("reason", ""), ": ", c->value("message", "")));
    }
  }
  Json pending = Json::array();
  size_t total_pending = 0;
  for (const std::string& u : i.unfinished) {
    ++total_pending;
    if (pending.size() >= kMaxPending) continue;
    auto sp = u.find(' ');
    std::string kind = u.substr(0, sp), key = u.substr(sp + 1);
    auto slash = key.find('/');
    Json p = {{"kind", kind},
              {"namespace", slash == std::string::npos ? "" : key.substr(0, slash)},
              {"name", slash == std::string::npos ? key : key.substr(slash + 1)}};
    if (auto w = why.find(u); w != why.end()) p["message"] = w->second;
    pending.push_back(std::move(p));
  }
  // Workloads still waiting for quota, with the queue manager's message.
  for (const auto& [key, w] : i.workloads) {
    if (w.finished || w.deleted || w.holding) continue;
    ++total_pending;
    if (pending.size() >= kMaxPending) continue;
    auto slash = key.find('/');
    Json p = {{"kind", "Workload"}, {"namespace", key.substr(0, slash)},
              {"name", key.substr(slash + 1)}, {"clusterQueue", w.cq}};
    auto obj = i.client->Get(i.client->Kind("kueue.x-k8s.io", "v1beta2", "workloads"),
                             key.substr(0, slash), key.substr(slash + 1));
    if (obj.ok()) {
      if (const Json* c = api::meta::FindCondition(*obj, "QuotaReserved")) {
        p["reason"] = c->value("reason", "");
        p["message"] = c->value("message", "");
      }
    }
    pending.push_back(std::move(p));
  }
  s["pending"] = std::move(pending);
  s["pendingCount"] = total_pending;
  Json ev = Json::object();
  for (const auto& [k, v] : i.recorder.counts) ev[k] = v;
  s["k8sEvents"] = std::move(ev);
  return s;
}

std::string Simulator::Table() const {
  Json s = Summary();
  std::string out;
  absl::StrAppendFormat(&out, "simulated %s s (%s), makespan %s s, %d steps, %d reconciles\n",
                        FormatSeconds(Elapsed()),
                        s["stoppedBy"] == "finished" ? "all work finished"
                        : s["stoppedBy"] == "until"  ? "stopped at --until"
                                                     : "stopped by " + s["stoppedBy"].get<std::string>(),
                        FormatSeconds(absl::Seconds(s["makespanSeconds"].get<double>())),
                        s["engine"]["steps"].get<int64_t>(),
                        s["engine"]["reconciles"].get<int64_t>());
  auto wait = [](const Json& w, const char* p) {
    return w.contains(p) ? absl::StrFormat("%.0f", w[p].get<double>()) : std::string("-");
  };
  auto util = [](const Json& q) {
    std::string u;
    if (q.contains("utilisation")) {
      for (auto it = q["utilisation"].begin(); it != q["utilisation"].end(); ++it) {
        if (!u.empty()) u += " ";
        u += absl::StrFormat("%s=%.0f%%", it.key(), it->get<double>() * 100);
      }
    } else {
      for (auto it = q["averageUsage"].begin(); it != q["averageUsage"].end(); ++it) {
        if (!u.empty()) u += " ";
        u += absl::StrFormat("%s=%g", it.key(), it->get<double>());
      }
    }
    return u.empty() ? std::string("-") : u;
  };
  absl::StrAppendFormat(&out, "%-24s %8s %8s %8s %8s %8s %8s %8s %8s  %s\n", "CLUSTERQUEUE",
                        "ADMITTED", "PREEMPT", "EVICTED", "FINISHED", "PENDING", "WAIT-P50",
                        "WAIT-P90", "WAIT-P99", "UTILISATION");
  for (const Json& q : s["clusterQueues"]) {
    absl::StrAppendFormat(&out, "%-24s %8d %8d %8d %8d %8d %8s %8s %8s  %s\n",
                          q["name"].get<std::string>(), q["admitted"].get<int64_t>(),
                          q["preempted"].get<int64_t>(), q["evicted"].get<int64_t>(),
                          q["finished"].get<int64_t>(), q["pendingAtEnd"].get<int64_t>(),
                          wait(q["waitSeconds"], "p50"), wait(q["waitSeconds"], "p90"),
                          wait(q["waitSeconds"], "p99"), util(q));
  }
  absl::StrAppendFormat(&out, "%-24s %8s %8s %8s %8s %8s %8s %8s %8s  %s\n", "LOCALQUEUE",
                        "ADMITTED", "PREEMPT", "EVICTED", "FINISHED", "PENDING", "WAIT-P50",
                        "WAIT-P90", "WAIT-P99", "AVERAGE-USAGE");
  for (const Json& q : s["localQueues"]) {
    absl::StrAppendFormat(
        &out, "%-24s %8d %8d %8d %8d %8d %8s %8s %8s  %s\n",
        q["namespace"].get<std::string>() + "/" + q["name"].get<std::string>(),
        q["admitted"].get<int64_t>(), q["preempted"].get<int64_t>(), q["evicted"].get<int64_t>(),
        q["finished"].get<int64_t>(), q["pendingAtEnd"].get<int64_t>(),
        wait(q["waitSeconds"], "p50"), wait(q["waitSeconds"], "p90"),
        wait(q["waitSeconds"], "p99"), util(q));
  }
  if (s["pendingCount"].get<int64_t>() > 0) {
    absl::StrAppendFormat(&out, "pending at the end: %d\n", s["pendingCount"].get<int64_t>());
    int shown = 0;
    for (const Json& p : s["pending"]) {
      if (++shown > 20) {
        out += "  ...\n";
        break;
      }
      absl::StrAppendFormat(&out, "  %s %s/%s%s\n", p["kind"].get<std::string>(),
                            p["namespace"].get<std::string>(), p["name"].get<std::string>(),
                            p.contains("message")
                                ? ": " + p["message"].get<std::string>()
                                : std::string());
    }
  }
  return out;
}

std::string Simulator::Svg() const {
  const Impl& i = *impl_;
  // One panel per ClusterQueue (at most 12 shown): usage (share of the
  // nominal quota of its most used resource) and pending workloads.
  constexpr int kW = 800, kH = 120, kPad = 40;
  std::vector<std::string> cqs;
  for (const auto& [name, pts] : i.plot) cqs.push_back(name);
  if (cqs.size() > 12) cqs.resize(12);
  double tmax = std::max(1.0, absl::ToDoubleSeconds(i.Now()));
  std::string out = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n",
      kW + 2 * kPad, static_cast<int>(cqs.size()) * (kH + kPad) + kPad);
  absl::StrAppendFormat(&out,
                        "<text x=\"%d\" y=\"16\">quota usage (blue, share of nominal) and "
                        "pending workloads (red) per ClusterQueue over %s s</text>\n",
                        kPad, FormatSeconds(i.Now()));
  int y0 = kPad;
  for (const std::string& cq : cqs) {
    const auto& pts = i.plot.at(cq);
    double pmax = 1;
    for (const auto& p : pts) pmax = std::max(pmax, p.pending);
    absl::StrAppendFormat(&out,
                          "<text x=\"%d\" y=\"%d\">%s (pending max %.0f)</text>\n"
                          "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
                          "stroke=\"#999\"/>\n",
                          kPad, y0 - 4, cq, pmax, kPad, y0, kW, kH);
    for (int series = 0; series < 2; ++series) {
      std::string path;
      double last_y = kH;
      for (const auto& p : pts) {
        double x = kPad + p.t / tmax * kW;
        double v = series == 0 ? std::min(p.used, 1.5) / 1.5 : p.pending / pmax;
        double y = y0 + kH - v * kH;
        // Steps: the value holds until the next point.
        absl::StrAppendFormat(&path, "%s%.1f,%.1f ", path.empty() ? "M" : "L", x,
                              path.empty() ? y : last_y);
        absl::StrAppendFormat(&path, "L%.1f,%.1f ", x, y);
        last_y = y;
      }
      if (!path.empty()) absl::StrAppendFormat(&path, "L%.1f,%.1f", kPad + kW * 1.0, last_y);
      absl::StrAppendFormat(&out, "<path d=\"%s\" fill=\"none\" stroke=\"%s\"/>\n", path,
                            series == 0 ? "#1f77b4" : "#d62728");
    }
    y0 += kH + kPad;
  }
  out += "</svg>\n";
  return out;
}

}  // namespace batchd::sim
