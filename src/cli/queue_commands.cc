#include "cli/queue_commands.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "api/json_access.h"
#include "api/kueue/topology_assignment.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "api/meta/time_util.h"
#include "api/resource/quantity.h"

namespace batchd::cli {
namespace {

using api::Json;

absl::Status Bad(const std::string& flag, const std::string& msg) {
  return absl::InvalidArgumentError(absl::StrCat("--", flag, ": ", msg));
}

std::string Str(const Json& obj, std::initializer_list<std::string_view> path,
                const std::string& dflt = "") {
  const Json* v = api::FindMemberAt(obj, path);
  if (v == nullptr) return dflt;
  if (v->is_string()) return v->get<std::string>();
  if (v->is_number_integer()) return std::to_string(v->get<int64_t>());
  if (v->is_boolean()) return v->get<bool>() ? "true" : "false";
  return dflt;
}


std::string Age(const Json& obj, absl::Time now) {
  auto created = api::meta::GetCreationTimestamp(obj);
  if (!created) return "<unknown>";
  return api::meta::ShortHumanDuration(now - *created);
}

// kubectl-style table: upper-case headers, columns separated by 3 spaces.
std::string Table(const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(header.size(), 0);
  for (size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
  for (const auto& r : rows) {
    for (size_t i = 0; i < r.size() && i < width.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  std::ostringstream out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (size_t i = 0; i < cells.size(); ++i) {
      s += cells[i];
      if (i + 1 < cells.size()) s += std::string(width[i] - cells[i].size() + 3, ' ');
    }
    out << s << "\n";
  };
  line(header);
  for (const auto& r : rows) line(r);
  return out.str();
}

// "default: cpu 4/10, memory 2Gi/36Gi" per flavor, from spec quotas and
// status.flavorsReservation (what admission counts).
std::string UsageSummary(const Json& cq, bool borrowed_only) {
  std::map<std::string, std::string> nominal;  // "flavor/resource" -> quantity.
  if (const Json* groups = api::FindMemberAt(cq, {"spec", "resourceGroups"}); groups && groups->is_array()) {
    for (const Json& g : *groups) {
      for (const Json& f : g.value("flavors", Json::array())) {
        for (const Json& r : f.value("resources", Json::array())) {
          nominal[f.value("name", "") + "/" + r.value("name", "")] = Str(r, {"nominalQuota"}, "0");
        }
      }
    }
  }
  std::vector<std::string> flavors;
  const Json* usage = api::FindMemberAt(cq, {"status", "flavorsReservation"});
  if (usage == nullptr || !usage->is_array()) return borrowed_only ? "-" : "";
  for (const Json& f : *usage) {
    std::vector<std::string> parts;
    const std::string flavor = f.value("name", "");
    for (const Json& r : f.value("resources", Json::array())) {
      const std::string res = r.value("name", "");
      if (borrowed_only) {
        std::string b = Str(r, {"borrowed"}, "0");
        if (b != "0") parts.push_back(absl::StrCat(res, " ", b));
      } else {
        parts.push_back(absl::StrCat(res, " ", Str(r, {"total"}, "0"), "/",
                                     nominal.count(flavor + "/" + res) ? nominal[flavor + "/" + res] : "0"));
      }
    }
    if (!parts.empty()) flavors.push_back(absl::StrCat(flavor, ": ", absl::StrJoin(parts, ", ")));
  }
  if (flavors.empty()) return borrowed_only ? "-" : "";
  return absl::StrJoin(flavors, "; ");
}

}  // namespace

// --- shared flag syntax -------------------------------------------------------

absl::StatusOr<std::map<std::string, std::string>> ParseKeyValues(const std::string& s,
                                                                   const std::string& flag) {
  std::map<std::string, std::string> out;
  if (s.empty()) return out;
  for (absl::string_view part : absl::StrSplit(s, ',')) {
    std::vector<std::string> kv = absl::StrSplit(part, absl::MaxSplits('=', 1));
    if (kv.size() != 2 || kv[0].empty()) {
      return Bad(flag, absl::StrCat("\"", std::string(part), "\" is not key=value"));
    }
    out[kv[0]] = kv[1];
  }
  return out;
}

absl::StatusOr<std::vector<TaintFlag>> ParseTaints(const std::string& s, const std::string& flag,
                                                   bool effect_required) {
  std::vector<TaintFlag> out;
  if (s.empty()) return out;
  for (absl::string_view part : absl::StrSplit(s, ',')) {
    TaintFlag t;
    std::string rest(part);
    auto colon = rest.rfind(':');
    if (colon != std::string::npos) {
      t.effect = rest.substr(colon + 1);
      rest = rest.substr(0, colon);
    }
    auto eq = rest.find('=');
    t.key = rest.substr(0, eq);
    if (eq != std::string::npos) {
      t.value = rest.substr(eq + 1);
      t.has_value = true;
    }
    if (t.key.empty()) return Bad(flag, absl::StrCat("\"", std::string(part), "\" has no key"));
    if (effect_required && t.effect.empty()) {
      return Bad(flag, absl::StrCat("\"", std::string(part), "\" needs an effect (key=value:Effect)"));
    }
    if (!t.effect.empty() && t.effect != "NoSchedule" && t.effect != "PreferNoSchedule" &&
        t.effect != "NoExecute") {
      return Bad(flag, absl::StrCat("unknown effect \"", t.effect,
                                    "\" (NoSchedule, PreferNoSchedule or NoExecute)"));
    }
    out.push_back(std::move(t));
  }
  return out;
}

// --- create -----------------------------------------------------------------

absl::StatusOr<FlavorQuantities> ParseFlavorQuantities(const std::string& s,
                                                       const std::string& flag) {
  FlavorQuantities out;
  if (s.empty()) return out;
  for (absl::string_view fpart : absl::StrSplit(s, ',')) {
    std::vector<std::string> fr = absl::StrSplit(fpart, absl::MaxSplits(':', 1));
    if (fr.size() != 2 || fr[0].empty()) {
      return Bad(flag, absl::StrCat("\"", std::string(fpart),
                                    "\" is not flavor:resource=quantity;resource=quantity"));
    }
    if (out.resources.count(fr[0])) return Bad(flag, "flavor \"" + fr[0] + "\" given twice");
    out.order.push_back(fr[0]);
    auto& list = out.resources[fr[0]];
    for (absl::string_view rpart : absl::StrSplit(fr[1], ';', absl::SkipEmpty())) {
      std::vector<std::string> kv = absl::StrSplit(rpart, absl::MaxSplits('=', 1));
      if (kv.size() != 2 || kv[0].empty()) {
        return Bad(flag, absl::StrCat("\"", std::string(rpart), "\" is not resource=quantity"));
      }
      auto q = api::Quantity::Parse(kv[1]);
      if (!q.ok()) return Bad(flag, absl::StrCat(kv[0], ": ", q.status().message()));
      list.emplace_back(kv[0], q->String());
    }
  }
  return out;
}

absl::StatusOr<Json> BuildClusterQueue(const ClusterQueueFlags& f) {
  if (f.name.empty()) return absl::InvalidArgumentError("a ClusterQueue name is required");
  auto nominal = ParseFlavorQuantities(f.nominal_quota, "nominal-quota");
  if (!nominal.ok()) return nominal.status();
  auto borrowing = ParseFlavorQuantities(f.borrowing_limit, "borrowing-limit");
  if (!borrowing.ok()) return borrowing.status();
  auto lending = ParseFlavorQuantities(f.lending_limit, "lending-limit");
  if (!lending.ok()) return lending.status();
  Json spec = Json::object();
  if (!f.cohort.empty()) spec["cohortName"] = f.cohort;
  if (!f.queueing_strategy.empty()) spec["queueingStrategy"] = f.queueing_strategy;
  auto sel = ParseKeyValues(f.namespace_selector, "namespace-selector");
  if (!sel.ok()) return sel.status();
  spec["namespaceSelector"] = sel->empty() ? Json::object() : Json{{"matchLabels", *sel}};
  if (!f.reclaim_within_cohort.empty() || !f.preemption_within_cluster_queue.empty()) {
    Json p = Json::object();
    if (!f.reclaim_within_cohort.empty()) p["reclaimWithinCohort"] = f.reclaim_within_cohort;
    if (!f.preemption_within_cluster_queue.empty()) {
      p["withinClusterQueue"] = f.preemption_within_cluster_queue;
    }
    spec["preemption"] = p;
  }
  // Resource groups: flavors that cover the same resource set share a group,
  // in the order the flavors were given.
  auto limit_of = [](const FlavorQuantities& fq, const std::string& flavor,
                     const std::string& res) -> std::string {
    auto it = fq.resources.find(flavor);
    if (it == fq.resources.end()) return "";
    for (const auto& [r, q] : it->second) {
      if (r == res) return q;
    }
    return "";
  };
  Json groups = Json::array();
  std::map<std::string, size_t> group_of;  // joined covered resources -> index.
  for (const std::string& flavor : nominal->order) {
    std::vector<std::string> covered;
    Json resources = Json::array();
    for (const auto& [res, qty] : nominal->resources[flavor]) {
      covered.push_back(res);
      Json r = {{"name", res}, {"nominalQuota", qty}};
      if (auto b = limit_of(*borrowing, flavor, res); !b.empty()) r["borrowingLimit"] = b;
      if (auto l = limit_of(*lending, flavor, res); !l.empty()) r["lendingLimit"] = l;
      resources.push_back(std::move(r));
    }
    std::string key = absl::StrJoin(covered, ",");
    auto it = group_of.find(key);
    if (it == group_of.end()) {
      group_of[key] = groups.size();
      groups.push_back({{"coveredResources", covered}, {"flavors", Json::array()}});
      it = group_of.find(key);
    }
    groups[it->second]["flavors"].push_back({{"name", flavor}, {"resources", resources}});
  }
  for (const FlavorQuantities* fq : {&*borrowing, &*lending}) {
    for (const std::string& flavor : fq->order) {
      if (!nominal->resources.count(flavor)) {
        return Bad(fq == &*borrowing ? "borrowing-limit" : "lending-limit",
                   "flavor \"" + flavor + "\" has no --nominal-quota");
      }
    }
  }
  spec["resourceGroups"] = groups;
  return Json{{"apiVersion", absl::StrCat(kKueueGroup, "/", kKueueVersion)},
              {"kind", "ClusterQueue"},
              {"metadata", {{"name", f.name}}},
              {"spec", spec}};
}

absl::StatusOr<Json> BuildLocalQueue(const std::string& name, const std::string& ns,
                                     const std::string& cluster_queue) {
  if (name.empty()) return absl::InvalidArgumentError("a LocalQueue name is required");
  if (cluster_queue.empty()) return Bad("clusterqueue", "required (-c CLUSTERQUEUE)");
  return Json{{"apiVersion", absl::StrCat(kKueueGroup, "/", kKueueVersion)},
              {"kind", "LocalQueue"},
              {"metadata", {{"name", name}, {"namespace", ns}}},
              {"spec", {{"clusterQueue", cluster_queue}}}};
}

absl::StatusOr<Json> BuildResourceFlavor(const ResourceFlavorFlags& f) {
  if (f.name.empty()) return absl::InvalidArgumentError("a ResourceFlavor name is required");
  Json spec = Json::object();
  auto labels = ParseKeyValues(f.node_labels, "node-labels");
  if (!labels.ok()) return labels.status();
  if (!labels->empty()) spec["nodeLabels"] = *labels;
  auto taints = ParseTaints(f.node_taints, "node-taints", /*effect_required=*/true);
  if (!taints.ok()) return taints.status();
  if (!taints->empty()) {
    Json arr = Json::array();
    for (const auto& t : *taints) {
      Json j = {{"key", t.key}, {"effect", t.effect}};
      if (t.has_value) j["value"] = t.value;
      arr.push_back(std::move(j));
    }
    spec["nodeTaints"] = arr;
  }
  auto tols = ParseTaints(f.tolerations, "tolerations", /*effect_required=*/false);
  if (!tols.ok()) return tols.status();
  if (!tols->empty()) {
    Json arr = Json::array();
    for (const auto& t : *tols) {
      Json j = {{"key", t.key}, {"operator", t.has_value ? "Equal" : "Exists"}};
      if (t.has_value) j["value"] = t.value;
      if (!t.effect.empty()) j["effect"] = t.effect;
      arr.push_back(std::move(j));
    }
    spec["tolerations"] = arr;
  }
  return Json{{"apiVersion", absl::StrCat(kKueueGroup, "/", kKueueVersion)},
              {"kind", "ResourceFlavor"},
              {"metadata", {{"name", f.name}}},
              {"spec", spec}};
}

// --- list -------------------------------------------------------------------

std::string WorkloadState(const Json& wl) {
  if (api::meta::IsConditionTrue(wl, "Finished")) return "Finished";
  if (api::meta::IsConditionTrue(wl, "Admitted")) return "Admitted";
  if (api::meta::IsConditionTrue(wl, "QuotaReserved")) return "QuotaReserved";
  return "Pending";
}

absl::StatusOr<bool> WorkloadMatches(const Json& wl, const std::string& filter) {
  std::string f = absl::AsciiStrToLower(filter);
  if (f.empty() || f == "all") return true;
  if (f != "pending" && f != "quotareserved" && f != "admitted" && f != "finished") {
    return Bad("status", "\"" + filter + "\" (all, pending, quotareserved, admitted, finished)");
  }
  return absl::AsciiStrToLower(WorkloadState(wl)) == f;
}

std::string FormatClusterQueues(const std::vector<Json>& cqs, absl::Time now) {
  std::vector<std::vector<std::string>> rows;
  for (const Json& cq : cqs) {
    const Json* active = api::meta::FindCondition(cq, "Active");
    rows.push_back({api::meta::GetName(cq), Str(cq, {"spec", "cohortName"}),
                    Str(cq, {"status", "pendingWorkloads"}, "0"),
                    Str(cq, {"status", "admittedWorkloads"}, "0"),
                    active ? active->value("status", "Unknown") : "Unknown",
                    UsageSummary(cq, false), UsageSummary(cq, true), Age(cq, now)});
  }
  return Table({"NAME", "COHORT", "PENDING WORKLOADS", "ADMITTED WORKLOADS", "ACTIVE",
                "USAGE", "BORROWED", "AGE"},
               rows);
}

std::string FormatLocalQueues(const std::vector<Json>& lqs, bool with_namespace, absl::Time now) {
  std::vector<std::vector<std::string>> rows;
  for (const Json& lq : lqs) {
    std::vector<std::string> row;
    if (with_namespace) row.push_back(api::meta::GetNamespace(lq));
    row.insert(row.end(), {api::meta::GetName(lq), Str(lq, {"spec", "clusterQueue"}),
                           Str(lq, {"status", "pendingWorkloads"}, "0"),
                           Str(lq, {"status", "admittedWorkloads"}, "0"),
                           Str(lq, {"spec", "stopPolicy"}, "None"), Age(lq, now)});
    rows.push_back(std::move(row));
  }
  std::vector<std::string> header = {"NAME", "CLUSTERQUEUE", "PENDING WORKLOADS",
                                     "ADMITTED WORKLOADS", "STOP POLICY", "AGE"};
  if (with_namespace) header.insert(header.begin(), "NAMESPACE");
  return Table(header, rows);
}

namespace {

// The part of a label key after its prefix ("topology.batchd.io/rack" -> "rack").
std::string ShortLevel(const std::string& key) {
  size_t slash = key.rfind('/');
  return slash == std::string::npos ? key : key.substr(slash + 1);
}

// The pod sets' topology assignments of `wl`, decoded; empty when none.
std::vector<std::pair<std::string, api::kueue::TopologyAssignmentValue>> Placements(
    const Json& wl) {
  std::vector<std::pair<std::string, api::kueue::TopologyAssignmentValue>> out;
  const Json* sets = api::FindMemberAt(wl, {"status", "admission", "podSetAssignments"});
  if (sets == nullptr || !sets->is_array()) return out;
  for (const Json& psa : *sets) {
    const Json* ta = api::FindMember(psa, "topologyAssignment");
    if (ta == nullptr) continue;
    if (auto v = api::kueue::DecodeTopologyAssignment(*ta)) {
      out.emplace_back(std::string(api::StringMember(psa, "name")), std::move(*v));
    }
  }
  return out;
}

std::string Summary(const api::kueue::TopologyAssignmentValue& ta) {
  std::vector<std::string> parts;
  for (size_t l = 0; l < ta.levels.size(); ++l) {
    std::set<std::string> values;
    for (const auto& d : ta.domains) {
      if (l < d.values.size()) values.insert(d.values[l]);
    }
    if (values.size() == 1) {
      parts.push_back(absl::StrCat(ShortLevel(ta.levels[l]), "=", *values.begin()));
    } else {
      parts.push_back(absl::StrCat(ShortLevel(ta.levels[l]), " x", values.size()));
    }
  }
  return absl::StrJoin(parts, " ");
}

}  // namespace

std::string TopologySummary(const Json& topology_assignment) {
  auto v = api::kueue::DecodeTopologyAssignment(topology_assignment);
  return v ? Summary(*v) : "";
}

std::string FormatWorkloads(const std::vector<Json>& wls, bool with_namespace, absl::Time now,
                            const std::map<std::string, int64_t>* positions) {
  bool any_topology = false;
  for (const Json& wl : wls) any_topology = any_topology || !Placements(wl).empty();
  std::vector<std::vector<std::string>> rows;
  for (const Json& wl : wls) {
    std::string job_type = "-", job_name = "-";
    if (auto ref = api::meta::GetControllerRef(wl)) {
      job_type = ref->kind;
      job_name = ref->name;
    }
    std::string reason;
    if (WorkloadState(wl) == "Pending") {
      if (const Json* c = api::meta::FindCondition(wl, "QuotaReserved")) reason = c->value("message", "");
      if (api::FindMemberAt(wl, {"spec", "active"}) && !api::FindMemberAt(wl, {"spec", "active"})->get<bool>()) {
        reason = "deactivated";
      }
    }
    std::vector<std::string> row;
    if (with_namespace) row.push_back(api::meta::GetNamespace(wl));
    row.insert(row.end(), {api::meta::GetName(wl), job_type, job_name,
                           Str(wl, {"spec", "queueName"}),
                           Str(wl, {"status", "admission", "clusterQueue"}), WorkloadState(wl)});
    if (positions != nullptr) {
      auto it = positions->find(absl::StrCat(api::meta::GetNamespace(wl), "/", api::meta::GetName(wl)));
      row.push_back(it == positions->end() ? "-" : absl::StrCat(it->second));
    }
    row.insert(row.end(), {Str(wl, {"spec", "priority"}, "0"), reason.empty() ? "-" : reason});
    if (any_topology) {
      std::vector<std::string> per_set;
      for (const auto& [name, ta] : Placements(wl)) per_set.push_back(Summary(ta));
      row.push_back(per_set.empty() ? "-" : absl::StrJoin(per_set, "; "));
    }
    if (positions != nullptr) {
      std::string exec = "-";
      const Json* admitted = api::meta::FindCondition(wl, "Admitted");
      if (WorkloadState(wl) == "Admitted" && admitted != nullptr) {
        auto since = api::meta::ParseRfc3339(std::string(api::StringMember(*admitted, "lastTransitionTime")));
        if (since.ok()) exec = api::meta::ShortHumanDuration(now - *since);
      }
      row.push_back(exec);
    }
    row.push_back(Age(wl, now));
    rows.push_back(std::move(row));
  }
  std::vector<std::string> header = {"NAME", "JOB TYPE", "JOB NAME", "LOCALQUEUE", "CLUSTERQUEUE",
                                     "STATUS"};
  if (positions != nullptr) header.push_back("POSITION IN QUEUE");
  header.insert(header.end(), {"PRIORITY", "MESSAGE"});
  if (any_topology) header.push_back("TOPOLOGY");
  if (positions != nullptr) header.push_back("EXEC TIME");
  header.push_back("AGE");
  if (with_namespace) header.insert(header.begin(), "NAMESPACE");
  return Table(header, rows);
}

std::string DescribeWorkload(const Json& wl, absl::Time now) {
  std::string out;
  auto line = [&out](const std::string& k, const std::string& v) {
    absl::StrAppend(&out, k, ":", std::string(k.size() < 15 ? 15 - k.size() : 1, ' '), v, "\n");
  };
  line("Name", api::meta::GetName(wl));
  line("Namespace", api::meta::GetNamespace(wl));
  if (auto ref = api::meta::GetControllerRef(wl)) line("Owner", absl::StrCat(ref->kind, "/", ref->name));
  line("LocalQueue", Str(wl, {"spec", "queueName"}));
  line("ClusterQueue", Str(wl, {"status", "admission", "clusterQueue"}));
  line("Status", WorkloadState(wl));
  line("Priority", Str(wl, {"spec", "priority"}, "0"));
  line("Age", Age(wl, now));
  absl::StrAppend(&out, "Pod sets:\n");
  const Json* specs = api::FindMemberAt(wl, {"spec", "podSets"});
  const Json* sets = api::FindMemberAt(wl, {"status", "admission", "podSetAssignments"});
  for (const Json& ps : specs != nullptr && specs->is_array() ? *specs : api::EmptyArray()) {
    const std::string name(api::StringMember(ps, "name", "main"));
    absl::StrAppend(&out, "  ", name, ": ", api::IntMember(ps, "count", 1), " pod(s)");
    if (const Json* tr = api::FindMember(ps, "topologyRequest"); tr != nullptr && tr->is_object()) {
      for (const char* k : {"required", "preferred"}) {
        if (const Json* v = api::FindMember(*tr, k); v != nullptr && v->is_string()) {
          absl::StrAppend(&out, ", topology ", k, " ", v->get<std::string>());
        }
      }
      if (api::Member(*tr, "unconstrained") == Json(true)) absl::StrAppend(&out, ", topology unconstrained");
      if (const Json* v = api::FindMember(*tr, "podSetSliceRequiredTopology"); v && v->is_string()) {
        absl::StrAppend(&out, ", slices of ", api::IntMember(*tr, "podSetSliceSize", 1), " in one ",
                        v->get<std::string>());
      }
    }
    absl::StrAppend(&out, "\n");
    if (sets == nullptr || !sets->is_array()) continue;
    for (const Json& psa : *sets) {
      if (api::StringMember(psa, "name") != name) continue;
      std::vector<std::string> flavors;
      for (const auto& [res, f] : api::MemberObject(psa, "flavors").items()) {
        if (f.is_string()) flavors.push_back(absl::StrCat(res, "=", f.get<std::string>()));
      }
      absl::StrAppend(&out, "    Flavors:   ", flavors.empty() ? "-" : absl::StrJoin(flavors, ", "), "\n");
      const Json* ta = api::FindMember(psa, "topologyAssignment");
      auto v = ta == nullptr ? std::nullopt : api::kueue::DecodeTopologyAssignment(*ta);
      if (!v) continue;
      absl::StrAppend(&out, "    Placement: ", Summary(*v), "\n");
      std::vector<std::string> header;
      for (const std::string& l : v->levels) header.push_back(absl::AsciiStrToUpper(ShortLevel(l)));
      header.push_back("PODS");
      std::vector<std::vector<std::string>> rows;
      for (const auto& d : v->domains) {
        std::vector<std::string> row = d.values;
        row.resize(v->levels.size());
        row.push_back(absl::StrCat(d.count));
        rows.push_back(std::move(row));
      }
      for (absl::string_view l : absl::StrSplit(Table(header, rows), '\n')) {
        if (!l.empty()) absl::StrAppend(&out, "      ", l, "\n");
      }
    }
  }
  if (const Json* un = api::FindMemberAt(wl, {"status", "unhealthyNodes"}); un && un->is_array()) {
    std::vector<std::string> names;
    for (const Json& n : *un) names.emplace_back(api::StringMember(n, "name"));
    if (!names.empty()) line("Unhealthy nodes", absl::StrJoin(names, ", "));
  }
  absl::StrAppend(&out, "Conditions:\n");
  std::vector<std::vector<std::string>> rows;
  const Json* conds = api::FindMemberAt(wl, {"status", "conditions"});
  for (const Json& c : conds != nullptr && conds->is_array() ? *conds : api::EmptyArray()) {
    rows.push_back({std::string(api::StringMember(c, "type")), std::string(api::StringMember(c, "status")),
                    std::string(api::StringMember(c, "reason")), std::string(api::StringMember(c, "message"))});
  }
  if (rows.empty()) {
    absl::StrAppend(&out, "  <none>\n");
  } else {
    for (absl::string_view l : absl::StrSplit(Table({"TYPE", "STATUS", "REASON", "MESSAGE"}, rows), '\n')) {
      if (!l.empty()) absl::StrAppend(&out, "  ", l, "\n");
    }
  }
  return out;
}

std::string ResourceFor(const std::string& word) {
  std::string w = absl::AsciiStrToLower(word);
  if (w == "cq" || w == "clusterqueue" || w == "clusterqueues") return "clusterqueues";
  if (w == "lq" || w == "localqueue" || w == "localqueues" || w == "queue" || w == "queues") {
    return "localqueues";
  }
  if (w == "wl" || w == "workload" || w == "workloads") return "workloads";
  if (w == "rf" || w == "resourceflavor" || w == "resourceflavors") return "resourceflavors";
  return "";
}

}  // namespace batchd::cli
