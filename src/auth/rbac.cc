#include "auth/rbac.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/json_access.h"
#include "api/labels/selector.h"
#include "common/logging.h"
#include "registry/errors.h"
#include "registry/registry.h"
#include "registry/watch_cache.h"

namespace batchd::auth {

using api::Json;

namespace {

std::vector<std::string> Strings(const Json& obj, const char* field) {
  std::vector<std::string> out;
  auto it = obj.find(field);
  if (it == obj.end() || !it->is_array()) return out;
  for (const auto& v : *it) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

bool Has(const std::vector<std::string>& set, const std::string& v) {
  return std::find(set.begin(), set.end(), v) != set.end();
}

// Go's %q of a []string: ["a" "b"].
std::string GoQuoteList(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ' ';
    out += Json(v[i]).dump();
  }
  return out + "]";
}
// The same with commas, as PolicyRule.CompactString prints its fields.
std::string CompactList(const std::vector<std::string>& v) {
  std::vector<std::string> q;
  for (const auto& s : v) q.push_back(Json(s).dump());
  return "[" + absl::StrJoin(q, " ") + "]";
}

bool VerbMatches(const PolicyRule& r, const std::string& verb) {
  return Has(r.verbs, "*") || Has(r.verbs, verb);
}
bool GroupMatches(const PolicyRule& r, const std::string& group) {
  return Has(r.api_groups, "*") || Has(r.api_groups, group);
}
bool ResourceMatches(const PolicyRule& r, const std::string& combined, const std::string& sub) {
  for (const auto& res : r.resources) {
    if (res == "*" || res == combined) return true;
    // "*/scale" matches the scale subresource of every resource; "pods/*" is no wildcard.
    if (!sub.empty() && res.size() == sub.size() + 2 && absl::StartsWith(res, "*/") &&
        absl::EndsWith(res, sub)) {
      return true;
    }
  }
  return false;
}
bool NameMatches(const PolicyRule& r, const std::string& name) {
  return r.resource_names.empty() || Has(r.resource_names, name);
}
bool UrlMatches(const std::string& rule_url, const std::string& path) {
  if (rule_url == "*" || rule_url == path) return true;
  return absl::EndsWith(rule_url, "*") &&
         path.compare(0, rule_url.size() - 1, rule_url, 0, rule_url.size() - 1) == 0;
}

// ---- Escalation coverage (Kubernetes' validation.Covers) ----

bool HasAllOrStar(const std::vector<std::string>& owner, const std::string& v) {
  return Has(owner, "*") || Has(owner, v);
}
bool ResourceCovers(const std::vector<std::string>& owner, const std::string& res) {
  if (Has(owner, "*") || Has(owner, res)) return true;
  size_t slash = res.find('/');
  if (slash == std::string::npos) return false;
  return Has(owner, "*/" + res.substr(slash + 1));
}
bool AtomCovered(const PolicyRule& owner, const PolicyRule& atom) {
  if (!HasAllOrStar(owner.verbs, atom.verbs[0])) return false;
  if (!atom.non_resource_urls.empty()) {
    for (const auto& u : owner.non_resource_urls) {
      if (UrlMatches(u, atom.non_resource_urls[0])) return true;
    }
    return false;
  }
  if (!owner.non_resource_urls.empty() && owner.resources.empty()) return false;
  if (!HasAllOrStar(owner.api_groups, atom.api_groups[0])) return false;
  if (!ResourceCovers(owner.resources, atom.resources[0])) return false;
  if (owner.resource_names.empty()) return true;
  // A rule limited to names covers only those names, never "all names".
  return !atom.resource_names.empty() && Has(owner.resource_names, atom.resource_names[0]);
}

std::vector<PolicyRule> Breakdown(const PolicyRule& r) {
  std::vector<PolicyRule> out;
  for (const auto& g : r.api_groups) {
    for (const auto& res : r.resources) {
      for (const auto& v : r.verbs) {
        if (r.resource_names.empty()) {
          out.push_back({{v}, {g}, {res}, {}, {}});
        } else {
          for (const auto& n : r.resource_names) out.push_back({{v}, {g}, {res}, {n}, {}});
        }
      }
    }
  }
  for (const auto& u : r.non_resource_urls) {
    for (const auto& v : r.verbs) out.push_back({{v}, {}, {}, {}, {u}});
  }
  return out;
}

std::string SubjectUserName(const Json& subject, const std::string& binding_ns) {
  std::string kind = api::CopyStringMember(subject, "kind");
  std::string name = api::CopyStringMember(subject, "name");
  if (kind == "ServiceAccount") {
    std::string ns = api::CopyStringMember(subject, "namespace");
    if (ns.empty()) ns = binding_ns;
    return absl::StrCat(kServiceAccountPrefix, ns, ":", name);
  }
  return name;
}

}  // namespace

// ---- PolicyRule ----

PolicyRule PolicyRule::FromJson(const Json& rule) {
  PolicyRule r;
  if (!rule.is_object()) return r;
  r.verbs = Strings(rule, "verbs");
  r.api_groups = Strings(rule, "apiGroups");
  r.resources = Strings(rule, "resources");
  r.resource_names = Strings(rule, "resourceNames");
  r.non_resource_urls = Strings(rule, "nonResourceURLs");
  return r;
}

std::vector<PolicyRule> RulesFromJson(const Json& rules) {
  std::vector<PolicyRule> out;
  if (!rules.is_array()) return out;
  for (const auto& r : rules) out.push_back(PolicyRule::FromJson(r));
  return out;
}

Json PolicyRule::ToJson() const {
  Json j = Json::object();
  j["verbs"] = verbs;
  if (!api_groups.empty()) j["apiGroups"] = api_groups;
  if (!resources.empty()) j["resources"] = resources;
  if (!resource_names.empty()) j["resourceNames"] = resource_names;
  if (!non_resource_urls.empty()) j["nonResourceURLs"] = non_resource_urls;
  return j;
}

std::string PolicyRule::CompactString() const {
  std::vector<std::string> parts;
  if (!api_groups.empty()) parts.push_back("APIGroups:" + CompactList(api_groups));
  if (!resources.empty()) parts.push_back("Resources:" + CompactList(resources));
  if (!non_resource_urls.empty()) parts.push_back("NonResourceURLs:" + CompactList(non_resource_urls));
  if (!resource_names.empty()) parts.push_back("ResourceNames:" + CompactList(resource_names));
  if (!verbs.empty()) parts.push_back("Verbs:" + CompactList(verbs));
  return "{" + absl::StrJoin(parts, ", ") + "}";
}

bool PolicyRule::operator==(const PolicyRule& o) const {
  return std::tie(verbs, api_groups, resources, resource_names, non_resource_urls) ==
         std::tie(o.verbs, o.api_groups, o.resources, o.resource_names, o.non_resource_urls);
}

bool RuleAllows(const Attributes& a, const PolicyRule& r) {
  if (!VerbMatches(r, a.verb)) return false;
  if (!a.resource_request) {
    for (const auto& u : r.non_resource_urls) {
      if (UrlMatches(u, a.path)) return true;
    }
    return false;
  }
  std::string combined = a.subresource.empty() ? a.resource : a.resource + "/" + a.subresource;
  return GroupMatches(r, a.api_group) && ResourceMatches(r, combined, a.subresource) &&
         NameMatches(r, a.name);
}

std::vector<PolicyRule> UncoveredRules(const std::vector<PolicyRule>& owner,
                                       const std::vector<PolicyRule>& servant) {
  // Missing atoms merged by everything but the verb, in first-seen order.
  std::vector<PolicyRule> out;
  std::map<std::tuple<std::vector<std::string>, std::vector<std::string>,
                      std::vector<std::string>, std::vector<std::string>>,
           size_t>
      index;
  for (const auto& rule : servant) {
    for (const auto& atom : Breakdown(rule)) {
      bool covered = false;
      for (const auto& o : owner) {
        if (AtomCovered(o, atom)) {
          covered = true;
          break;
        }
      }
      if (covered) continue;
      auto key = std::make_tuple(atom.api_groups, atom.resources, atom.resource_names,
                                 atom.non_resource_urls);
      auto it = index.find(key);
      if (it == index.end()) {
        index.emplace(key, out.size());
        out.push_back(atom);
      } else if (!Has(out[it->second].verbs, atom.verbs[0])) {
        out[it->second].verbs.push_back(atom.verbs[0]);
      }
    }
  }
  return out;
}

// ---- Messages ----

std::string ForbiddenInnerMessage(const UserInfo& u, const Attributes& a, const std::string& reason) {
  std::string msg;
  if (!a.resource_request) {
    msg = absl::StrCat("User \"", u.name, "\" cannot ", a.verb, " path \"", a.path, "\"");
  } else {
    std::string res = a.subresource.empty() ? a.resource : a.resource + "/" + a.subresource;
    msg = absl::StrCat("User \"", u.name, "\" cannot ", a.verb, " resource \"", res,
                       "\" in API group \"", a.api_group, "\"");
    if (!a.ns.empty()) {
      absl::StrAppend(&msg, " in the namespace \"", a.ns, "\"");
    } else {
      absl::StrAppend(&msg, " at the cluster scope");
    }
  }
  if (!reason.empty()) absl::StrAppend(&msg, ": ", reason);
  return msg;
}

std::string ForbiddenMessage(const UserInfo& u, const Attributes& a, const std::string& reason) {
  std::string inner = ForbiddenInnerMessage(u, a, reason);
  if (!a.resource_request || a.resource.empty()) return "forbidden: " + inner;
  std::string gr = a.api_group.empty() ? a.resource : a.resource + "." + a.api_group;
  if (a.name.empty()) return absl::StrCat(gr, " is forbidden: ", inner);
  return absl::StrCat(gr, " \"", a.name, "\" is forbidden: ", inner);
}

absl::Status ForbiddenStatus(const UserInfo& u, const Attributes& a, const std::string& reason) {
  Json details = Json::object();
  if (a.resource_request && !a.resource.empty()) {
    if (!a.name.empty()) details["name"] = a.name;
    if (!a.api_group.empty()) details["group"] = a.api_group;
    details["kind"] = a.resource;
  }
  return registry::ApiError(absl::StatusCode::kPermissionDenied, "Forbidden",
                            ForbiddenMessage(u, a, reason), std::move(details));
}

// ---- RbacPolicy ----

std::shared_ptr<const RbacPolicy> RbacPolicy::Build(const Objects& objs) {
  auto p = std::make_shared<RbacPolicy>();
  for (const auto& r : objs.roles) {
    const Json& m = api::MemberObject(*r, "metadata");
    p->roles_[api::CopyStringMember(m, "namespace") + "/" + api::CopyStringMember(m, "name")] =
        std::make_shared<const std::vector<PolicyRule>>(RulesFromJson(r->value("rules", Json())));
  }
  // ClusterRoles, with aggregation: an aggregated role's rules are the rules
  // of the roles its selectors match (sorted by name, itself excluded,
  // duplicates dropped), resolved recursively (admin selects edit, which
  // selects view) with a guard against cycles.
  std::map<std::string, const Json*> by_name;
  for (const auto& r : objs.cluster_roles) {
    by_name[api::CopyStringMember(api::MemberObject(*r, "metadata"), "name")] = r.get();
  }
  std::map<std::string, std::vector<PolicyRule>> resolved;
  std::set<std::string> visiting;
  std::function<const std::vector<PolicyRule>&(const std::string&)> resolve =
      [&](const std::string& name) -> const std::vector<PolicyRule>& {
    auto it = resolved.find(name);
    if (it != resolved.end()) return it->second;
    const Json& role = *by_name[name];
    auto agg = role.find("aggregationRule");
    if (agg == role.end() || !agg->is_object() || !visiting.insert(name).second) {
      return resolved[name] = RulesFromJson(role.value("rules", Json()));
    }
    std::vector<PolicyRule> rules;
    auto selectors = agg->find("clusterRoleSelectors");
    if (selectors != agg->end() && selectors->is_array()) {
      for (const auto& sel_json : *selectors) {
        auto sel = api::labels::LabelSelector::FromJson(sel_json);
        if (!sel.ok()) continue;
        for (const auto& [other, obj] : by_name) {
          if (other == name) continue;
          if (!sel->Matches(api::MemberObject(api::MemberObject(*obj, "metadata"), "labels"))) {
            continue;
          }
          for (const auto& r : resolve(other)) {
            if (std::find(rules.begin(), rules.end(), r) == rules.end()) rules.push_back(r);
          }
        }
      }
    }
    visiting.erase(name);
    std::vector<PolicyRule> stored = RulesFromJson(role.value("rules", Json()));
    if (stored != rules) {
      Json j = Json::array();
      for (const auto& r : rules) j.push_back(r.ToJson());
      p->aggregation_updates_.emplace_back(name, std::move(j));
    }
    return resolved[name] = std::move(rules);
  };
  for (const auto& [name, obj] : by_name) {
    p->cluster_roles_[name] = std::make_shared<const std::vector<PolicyRule>>(resolve(name));
  }

  auto add_binding = [&](const Json& b, bool cluster) {
    const Json& m = api::MemberObject(b, "metadata");
    std::string ns = api::CopyStringMember(m, "namespace");
    std::string bname = api::CopyStringMember(m, "name");
    const Json& ref = api::MemberObject(b, "roleRef");
    std::string rkind = api::CopyStringMember(ref, "kind");
    std::string rname = api::CopyStringMember(ref, "name");
    std::shared_ptr<const std::vector<PolicyRule>> rules;
    if (rkind == "ClusterRole") {
      auto it = p->cluster_roles_.find(rname);
      if (it != p->cluster_roles_.end()) rules = it->second;
    } else if (rkind == "Role" && !cluster) {
      auto it = p->roles_.find(ns + "/" + rname);
      if (it != p->roles_.end()) rules = it->second;
    }
    if (!rules) return;  // A binding to a missing role grants nothing.
    Scope& scope = cluster ? p->cluster_ : p->namespaces_[ns];
    auto subjects = b.find("subjects");
    if (subjects == b.end() || !subjects->is_array()) return;
    for (const auto& s : *subjects) {
      std::string skind = api::CopyStringMember(s, "kind");
      std::string who = SubjectUserName(s, ns);
      std::string desc = cluster ? absl::StrCat("ClusterRoleBinding \"", bname, "\"")
                                 : absl::StrCat("RoleBinding \"", bname, "/", ns, "\"");
      absl::StrAppend(&desc, " of ", rkind, " \"", rname, "\" to ", skind, " \"",
                      api::CopyStringMember(s, "name"), "\"");
      BySubject& by = skind == "Group" ? scope.groups : scope.users;
      by[who].push_back({rules, std::move(desc)});
    }
  };
  for (const auto& b : objs.cluster_role_bindings) add_binding(*b, true);
  for (const auto& b : objs.role_bindings) add_binding(*b, false);
  return p;
}

template <typename F>
bool RbacPolicy::ForEachGrant(const UserInfo& u, const std::string& ns, F&& f) const {
  auto visit = [&](const Scope& s) {
    if (auto it = s.users.find(u.name); it != s.users.end()) {
      for (const auto& g : it->second) {
        if (f(g)) return true;
      }
    }
    for (const auto& group : u.groups) {
      if (auto it = s.groups.find(group); it != s.groups.end()) {
        for (const auto& g : it->second) {
          if (f(g)) return true;
        }
      }
    }
    return false;
  };
  if (visit(cluster_)) return true;
  if (ns.empty()) return false;
  auto it = namespaces_.find(ns);
  return it != namespaces_.end() && visit(it->second);
}

Decision RbacPolicy::Authorize(const UserInfo& u, const Attributes& a) const {
  Decision d;
  ForEachGrant(u, a.resource_request ? a.ns : "", [&](const Grant& g) {
    for (const auto& r : *g.rules) {
      if (RuleAllows(a, r)) {
        d.allowed = true;
        d.reason = "RBAC: allowed by " + g.description;
        return true;
      }
    }
    return false;
  });
  return d;
}

std::vector<PolicyRule> RbacPolicy::RulesFor(const UserInfo& u, const std::string& ns) const {
  std::vector<PolicyRule> out;
  ForEachGrant(u, ns, [&](const Grant& g) {
    for (const auto& r : *g.rules) {
      if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
    }
    return false;
  });
  return out;
}

std::optional<std::vector<PolicyRule>> RbacPolicy::RoleRules(const std::string& kind,
                                                             const std::string& ns,
                                                             const std::string& name) const {
  if (kind == "ClusterRole") {
    auto it = cluster_roles_.find(name);
    if (it != cluster_roles_.end()) return *it->second;
  } else if (kind == "Role") {
    auto it = roles_.find(ns + "/" + name);
    if (it != roles_.end()) return *it->second;
  }
  return std::nullopt;
}

std::vector<PolicyRule> AlwaysAllowAuthorizer::RulesFor(const UserInfo&, const std::string&) {
  return {PolicyRule{{"*"}, {"*"}, {"*"}, {}, {}}, PolicyRule{{"*"}, {}, {}, {}, {"*"}}};
}

// ---- RbacAuthorizer ----

namespace {
constexpr char kRbacPrefix[] = "/registry/rbac.authorization.k8s.io/";
}  // namespace

RbacAuthorizer::RbacAuthorizer(registry::Registry& registry) : registry_(registry) {
  watcher_ = std::thread([this] { WatchLoop(); });
}

RbacAuthorizer::~RbacAuthorizer() {
  stop_ = true;
  watcher_.join();
}

void RbacAuthorizer::WatchLoop() {
  registry::WatchCache& cache = registry_.cache();
  std::unique_ptr<registry::WatchCache::Subscription> sub;
  while (!stop_) {
    if (!sub || sub->closed()) {
      auto s = cache.Watch(kRbacPrefix, cache.Revision());
      Invalidate();  // Whatever happened before the (re)subscription.
      if (!s.ok()) {
        BATCHD_LOG_WARN("rbac: cannot watch RBAC objects: {}", s.status().ToString());
        absl::SleepFor(absl::Milliseconds(200));
        continue;
      }
      sub = std::move(*s);
    }
    registry::CacheEvent ev;
    if (!sub->Next(&ev, absl::Milliseconds(200))) continue;
    while (sub->Next(&ev, absl::ZeroDuration())) {
    }
    Invalidate();
  }
}

std::shared_ptr<const RbacPolicy> RbacAuthorizer::Rebuild() {
  registry::WatchCache& cache = registry_.cache();
  RbacPolicy::Objects objs;
  int64_t rev = 0;
  bool more = false;
  const std::pair<const char*, std::vector<std::shared_ptr<const Json>>*> kinds[] = {
      {"roles", &objs.roles},
      {"clusterroles", &objs.cluster_roles},
      {"rolebindings", &objs.role_bindings},
      {"clusterrolebindings", &objs.cluster_role_bindings}};
  for (const auto& [plural, out] : kinds) {
    for (const auto& o : cache.List(absl::StrCat(kRbacPrefix, plural, "/"), "", 0, &more, &rev)) {
      out->push_back(o->Shared());
    }
  }
  return RbacPolicy::Build(objs);
}

std::shared_ptr<const RbacPolicy> RbacAuthorizer::Policy() {
  std::shared_ptr<const Snapshot> snap = snapshot_.load(std::memory_order_acquire);
  uint64_t gen = generation_.load(std::memory_order_acquire);
  if (snap && snap->generation == gen) return snap->policy;
  std::shared_ptr<const RbacPolicy> p;
  {
    absl::MutexLock lock(&mu_);
    snap = snapshot_.load(std::memory_order_acquire);
    gen = generation_.load(std::memory_order_acquire);
    if (snap && snap->generation == gen) return snap->policy;
    // Read the generation before the objects: a change while listing
    // leaves the snapshot one generation behind, so the next call rebuilds.
    p = Rebuild();
    snapshot_.store(std::make_shared<const Snapshot>(Snapshot{p, gen}), std::memory_order_release);
  }
  if (!p->aggregation_updates().empty()) ReconcileAggregation();
  return p;
}

void RbacAuthorizer::ReconcileAggregation() {
  if (!reconcile_mu_.TryLock()) return;  // Another thread is at it.
  std::shared_ptr<const RbacPolicy> p;
  {
    absl::MutexLock lock(&mu_);
    p = Rebuild();
  }
  const api::KindDef* k = registry_.scheme().ByResource(kRbacGroup, "v1", "clusterroles");
  bool changed = false;
  for (const auto& [name, rules] : p->aggregation_updates()) {
    Json patch = {{"rules", rules}};
    registry::WriteOptions wo;
    wo.field_manager = "clusterrole-aggregation-controller";
    auto res = registry_.Patch(*k, "", name, registry::PatchType::kMerge, patch, false, wo);
    if (!res.ok()) {
      BATCHD_LOG_WARN("clusterrole aggregation of {}: {}", name, res.status().ToString());
    } else {
      changed = true;
    }
  }
  // Only a write changes what the next build sees (a failing write must not
  // make every request rebuild).
  if (changed) Invalidate();
  reconcile_mu_.Unlock();
}

Decision RbacAuthorizer::Authorize(const UserInfo& u, const Attributes& a) {
  if (u.InGroup(kMastersGroup)) return {true, ""};
  return Policy()->Authorize(u, a);
}

std::vector<PolicyRule> RbacAuthorizer::RulesFor(const UserInfo& u, const std::string& ns) {
  return Policy()->RulesFor(u, ns);
}

absl::Status RbacAuthorizer::CheckEscalation(const UserInfo& u, const std::string& kind,
                                             const std::string& ns, const Json& obj) {
  if (u.InGroup(kMastersGroup)) return absl::OkStatus();
  auto p = Policy();
  const bool binding = kind == "RoleBinding" || kind == "ClusterRoleBinding";
  const bool cluster = kind == "ClusterRole" || kind == "ClusterRoleBinding";
  std::string name = api::CopyStringMember(api::MemberObject(obj, "metadata"), "name");
  std::vector<PolicyRule> granted;
  if (binding) {
    const Json& ref = api::MemberObject(obj, "roleRef");
    std::string rkind = api::CopyStringMember(ref, "kind");
    std::string rname = api::CopyStringMember(ref, "name");
    Attributes bind{true, "bind", cluster ? "" : ns, kRbacGroup, "v1",
                    rkind == "ClusterRole" ? "clusterroles" : "roles", "", rname, ""};
    if (p->Authorize(u, bind).allowed) return absl::OkStatus();
    auto rules = p->RoleRules(rkind, ns, rname);
    if (!rules) {
      return registry::ApiError(
          absl::StatusCode::kNotFound, "NotFound",
          absl::StrCat(rkind == "ClusterRole" ? "clusterroles" : "roles", ".", kRbacGroup, " \"",
                       rname, "\" not found"),
          {{"name", rname}, {"group", kRbacGroup},
           {"kind", rkind == "ClusterRole" ? "clusterroles" : "roles"}});
    }
    granted = std::move(*rules);
  } else {
    Attributes esc{true, "escalate", cluster ? "" : ns, kRbacGroup, "v1",
                   cluster ? "clusterroles" : "roles", "", name, ""};
    if (p->Authorize(u, esc).allowed) return absl::OkStatus();
    granted = RulesFromJson(obj.value("rules", Json()));
  }
  std::vector<PolicyRule> missing = UncoveredRules(p->RulesFor(u, cluster ? "" : ns), granted);
  if (missing.empty()) return absl::OkStatus();
  std::vector<std::string> lines;
  for (const auto& r : missing) lines.push_back(r.CompactString());
  std::sort(lines.begin(), lines.end());
  std::string plural = kind == "Role"          ? "roles"
                       : kind == "ClusterRole" ? "clusterroles"
                       : kind == "RoleBinding" ? "rolebindings"
                                               : "clusterrolebindings";
  std::string msg = absl::StrCat(plural, ".", kRbacGroup, " \"", name, "\" is forbidden: user \"",
                                 u.name, "\" (groups=", GoQuoteList(u.groups),
                                 ") is attempting to grant RBAC permissions not currently held:\n",
                                 absl::StrJoin(lines, "\n"));
  return registry::ApiError(absl::StatusCode::kPermissionDenied, "Forbidden", std::move(msg),
                            {{"name", name}, {"group", kRbacGroup}, {"kind", plural}});
}

}  // namespace batchd::auth
