// QueueCommands: the batchctl verbs against a client::Client.
#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "api/json_access.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "api/meta/time_util.h"
#include "api/resource/amount.h"
#include "cli/pending_insight.h"
#include "cli/queue_commands.h"

namespace batchd::cli {
namespace {

using api::Json;

// A condition that is absent reads as Unknown.
bool ConditionStatus(const Json& obj, const std::string& type, const std::string& want) {
  const Json* c = api::meta::FindCondition(obj, type);
  if (c == nullptr) return want == api::meta::kConditionUnknown;
  return api::StringMember(*c, "status") == want;
}

// A quantity as its text (a string, or a bare number).
std::string JsonText(const Json& v, const std::string& dflt) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) return v.dump();
  return dflt;
}

std::string obj_queue_name(const Json& wl) {
  return std::string(api::StringMember(api::MemberObject(wl, "spec"), "queueName"));
}

void SortByNamespaceAndName(std::vector<Json>& items) {
  std::sort(items.begin(), items.end(), [](const Json& a, const Json& b) {
    auto ka = std::make_pair(api::meta::GetNamespace(a), api::meta::GetName(a));
    auto kb = std::make_pair(api::meta::GetNamespace(b), api::meta::GetName(b));
    return ka < kb;
  });
}

}  // namespace

const api::KindDef& QueueCommands::Kind(const std::string& plural) const {
  return client_.Kind(kKueueGroup, kKueueVersion, plural);
}

absl::Status QueueCommands::List(const std::string& what, const ListFlags& f) {
  const std::string res = ResourceFor(what);
  if (res.empty() || res == "resourceflavors") {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot list \"", what, "\": use clusterqueues, localqueues or workloads"));
  }
  const api::KindDef& k = Kind(res);
  const std::string ns = (!k.namespaced || f.all_namespaces) ? "" : f.namespace_;
  client::Selector sel;
  sel.labels = f.label_selector;
  auto list = client_.List(k, ns, sel);
  if (!list.ok()) return list.status();
  std::vector<Json> items;
  for (Json& obj : list->items) {
    if (res == "clusterqueues") {
      if (f.active == "true" && !ConditionStatus(obj, "Active", "True")) continue;
      if (f.active == "false" && ConditionStatus(obj, "Active", "True")) continue;
    } else if (res == "localqueues") {
      if (!f.cluster_queue.empty() && obj["spec"].value("clusterQueue", "") != f.cluster_queue) {
        continue;
      }
    } else {
      if (!f.local_queue.empty() && obj["spec"].value("queueName", "") != f.local_queue) continue;
      if (!f.cluster_queue.empty()) {
        auto st = obj.find("status");
        std::string cq;
        if (st != obj.end() && st->contains("admission")) {
          cq = (*st)["admission"].value("clusterQueue", "");
        }
        if (cq != f.cluster_queue) continue;
      }
      auto m = WorkloadMatches(obj, f.status);
      if (!m.ok()) return m.status();
      if (!*m) continue;
    }
    items.push_back(std::move(obj));
  }
  SortByNamespaceAndName(items);
  if (items.empty()) {
    out_ << (ns.empty() ? std::string("No resources found\n")
                        : absl::StrCat("No resources found in ", ns, " namespace.\n"));
    return absl::OkStatus();
  }
  if (res == "clusterqueues") {
    out_ << FormatClusterQueues(items, now_);
  } else if (res == "localqueues") {
    out_ << FormatLocalQueues(items, f.all_namespaces, now_);
  } else if (!raw_get_) {
    out_ << FormatWorkloads(items, f.all_namespaces, now_);
  } else {
    // Positions of the pending ones, one visibility request per LocalQueue.
    std::map<std::string, std::pair<int64_t, int64_t>> both;
    std::set<std::pair<std::string, std::string>> asked;
    for (const Json& wl : items) {
      if (WorkloadState(wl) != "Pending") continue;
      std::pair<std::string, std::string> lq = {api::meta::GetNamespace(wl),
                                                obj_queue_name(wl)};
      if (!asked.insert(lq).second) continue;
      // A missing queue (NotFound) leaves its workloads without a position.
      (void)Positions(lq.first, lq.second, &both);
    }
    std::map<std::string, int64_t> positions;
    for (const auto& [key, p] : both) positions[key] = p.first;
    out_ << FormatWorkloads(items, f.all_namespaces, now_, &positions);
  }
  return absl::OkStatus();
}

absl::Status QueueCommands::Positions(const std::string& ns, const std::string& lq,
                                      std::map<std::string, std::pair<int64_t, int64_t>>* out) {
  if (!raw_get_ || lq.empty()) return absl::OkStatus();
  // Kueue's limit default is 1000; ask for more so deep queues are covered.
  auto r = raw_get_(absl::StrCat("/apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/", ns,
                                 "/localqueues/", lq, "/pendingworkloads?limit=100000"));
  if (!r.ok()) return r.status();
  for (const Json& item : api::MemberArray(*r, "items")) {
    const Json& meta = api::MemberObject(item, "metadata");
    (*out)[absl::StrCat(api::CopyStringMember(meta, "namespace"), "/",
                        api::CopyStringMember(meta, "name"))] = {
        api::IntMember(item, "positionInClusterQueue", -1),
        api::IntMember(item, "positionInLocalQueue", -1)};
  }
  return absl::OkStatus();
}

std::string QueueCommands::PendingLines(const Json& wl) {
  std::string out;
  auto line = [&out](const std::string& k, const std::string& v) {
    absl::StrAppend(&out, k, ":", std::string(k.size() < 15 ? 15 - k.size() : 1, ' '), v, "\n");
  };
  const std::string ns = api::meta::GetNamespace(wl), name = api::meta::GetName(wl);
  const std::string lq_name = obj_queue_name(wl);
  std::map<std::string, std::pair<int64_t, int64_t>> pos;
  std::optional<std::pair<int64_t, int64_t>> mine;
  if (Positions(ns, lq_name, &pos).ok()) {
    if (auto it = pos.find(ns + "/" + name); it != pos.end()) mine = it->second;
  }
  if (mine) {
    line("Position", absl::StrCat(mine->first, " in ClusterQueue, ", mine->second,
                                  " in LocalQueue (0 = next)"));
  }
  const Json* qr = api::meta::FindCondition(wl, "QuotaReserved");
  std::optional<QuotaShortfall> s =
      qr == nullptr ? std::nullopt : ParseShortfall(std::string(api::StringMember(*qr, "message")));
  if (!s) return out;
  auto lq = client_.Get(Kind("localqueues"), ns, lq_name);
  if (!lq.ok()) return out;
  const std::string cq_name(api::StringMember(api::MemberObject(*lq, "spec"), "clusterQueue"));
  auto cq = client_.Get(Kind("clusterqueues"), "", cq_name);
  if (!cq.ok()) return out;
  // The quota of the resource in the flavor, and what the queue uses of it.
  std::string nominal = "?", used = "0", borrowed = "0";
  for (const Json& g : api::MemberArray(api::MemberObject(*cq, "spec"), "resourceGroups")) {
    for (const Json& fl : api::MemberArray(g, "flavors")) {
      if (api::StringMember(fl, "name") != s->flavor) continue;
      for (const Json& r : api::MemberArray(fl, "resources")) {
        if (api::StringMember(r, "name") == s->resource) nominal = JsonText(api::Member(r, "nominalQuota"), "?");
      }
    }
  }
  for (const Json& fl : api::MemberArray(api::MemberObject(*cq, "status"), "flavorsReservation")) {
    if (api::StringMember(fl, "name") != s->flavor) continue;
    for (const Json& r : api::MemberArray(fl, "resources")) {
      if (api::StringMember(r, "name") != s->resource) continue;
      used = JsonText(api::Member(r, "total"), "0");
      borrowed = JsonText(api::Member(r, "borrowed"), "0");
    }
  }
  const std::string cohort(api::StringMember(api::MemberObject(*cq, "spec"), "cohortName"));
  const std::string more = api::Amount::FromMilli(s->more_needed_milli).ToString();
  line("Blocked by", absl::StrCat(s->resource, " in flavor ", s->flavor, " of ClusterQueue ",
                                  cq_name, cohort.empty() ? "" : " (cohort " + cohort + ")",
                                  ": ", more, " more needed; in use ", used, " of nominal ",
                                  nominal, ", borrowed ", borrowed));
  // The estimate: what this workload lacks plus what the workloads ahead of
  // it in the ClusterQueue (all its LocalQueues) ask for, released by the
  // running workloads whose end is known.
  auto all = client_.List(Kind("workloads"), "");
  if (!all.ok()) return out;
  std::vector<Json> admitted;
  std::map<std::string, const Json*> by_key;
  for (const Json& w : all->items) {
    if (WorkloadState(w) == "Finished") continue;
    by_key[api::meta::GetNamespace(w) + "/" + api::meta::GetName(w)] = &w;
    if (api::StringMember(api::MemberObject(api::MemberObject(w, "status"), "admission"),
                          "clusterQueue") == cq_name) {
      admitted.push_back(w);
    }
  }
  int64_t ahead = 0;
  if (mine && mine->first > 0) {
    auto r = raw_get_(absl::StrCat("/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/",
                                   cq_name, "/pendingworkloads?limit=", mine->first));
    if (r.ok()) {
      for (const Json& item : api::MemberArray(*r, "items")) {
        const Json& meta = api::MemberObject(item, "metadata");
        auto it = by_key.find(absl::StrCat(api::CopyStringMember(meta, "namespace"), "/",
                                           api::CopyStringMember(meta, "name")));
        if (it != by_key.end()) ahead += RequestOf(*it->second, s->resource);
      }
    }
  }
  std::optional<absl::Time> eta = EstimateStart(admitted, *s, s->more_needed_milli + ahead, now_);
  line("Est. start", eta ? absl::StrCat(api::meta::FormatRfc3339(*eta), " (in ",
                                        api::meta::ShortHumanDuration(*eta - now_),
                                        "; estimate from running workloads' "
                                        "maximumExecutionTimeSeconds)")
                         : "unknown (running workloads without a known end)");
  return out;
}

absl::Status QueueCommands::Stop(const std::string& what, const std::string& name,
                                 const std::string& ns, bool keep_running) {
  const std::string res = ResourceFor(what);
  Json patch;
  if (res == "clusterqueues" || res == "localqueues") {
    patch = {{"spec", {{"stopPolicy", keep_running ? "Hold" : "HoldAndDrain"}}}};
  } else if (res == "workloads") {
    patch = {{"spec", {{"active", false}}}};
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot stop \"", what, "\": use clusterqueue, localqueue or workload"));
  }
  const api::KindDef& k = Kind(res);
  auto r = client_.MergePatch(k, k.namespaced ? ns : "", name, patch);
  if (!r.ok()) return r.status();
  out_ << k.singular << "." << k.group << "/" << name << " stopped\n";
  return absl::OkStatus();
}

absl::Status QueueCommands::Resume(const std::string& what, const std::string& name,
                                   const std::string& ns) {
  const std::string res = ResourceFor(what);
  Json patch;
  if (res == "clusterqueues" || res == "localqueues") {
    patch = {{"spec", {{"stopPolicy", "None"}}}};
  } else if (res == "workloads") {
    patch = {{"spec", {{"active", true}}}};
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot resume \"", what, "\": use clusterqueue, localqueue or workload"));
  }
  const api::KindDef& k = Kind(res);
  auto r = client_.MergePatch(k, k.namespaced ? ns : "", name, patch);
  if (!r.ok()) return r.status();
  out_ << k.singular << "." << k.group << "/" << name << " resumed\n";
  return absl::OkStatus();
}

absl::Status QueueCommands::Describe(const std::string& what, const std::string& name,
                                     const std::string& ns) {
  if (ResourceFor(what) != "workloads") {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot describe \"", what, "\": use workload"));
  }
  auto wl = client_.Get(Kind("workloads"), ns, name);
  if (!wl.ok()) return wl.status();
  out_ << DescribeWorkload(*wl, now_);
  if (raw_get_ && WorkloadState(*wl) == "Pending") out_ << PendingLines(*wl);
  return absl::OkStatus();
}

absl::Status QueueCommands::Create(const std::string& what, const std::string& ns, Json obj) {
  const std::string res = ResourceFor(what);
  if (res.empty() || res == "workloads") {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot create \"", what, "\": use clusterqueue, localqueue or resourceflavor"));
  }
  const api::KindDef& k = Kind(res);
  auto r = client_.Create(k, k.namespaced ? ns : "", std::move(obj));
  if (!r.ok()) return r.status();
  out_ << k.singular << "." << k.group << "/" << api::meta::GetName(*r) << " created\n";
  return absl::OkStatus();
}

}  // namespace batchd::cli
