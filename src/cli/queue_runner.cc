// QueueCommands: the batchctl verbs against a client::Client.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "api/json_access.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
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
  } else {
    out_ << FormatWorkloads(items, f.all_namespaces, now_);
  }
  return absl::OkStatus();
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
