// RBAC (rbac.authorization.k8s.io/v1) evaluation as kube-apiserver does it:
// rule matching (verbs incl. '*', apiGroups, resources incl. subresources and
// '*/sub', resourceNames, nonResourceURLs with a trailing '*'), ClusterRole
// aggregation (label selectors, computed on every policy build), the request
// attributes and Kubernetes' Forbidden messages, and the escalation check
// (the rules a role or binding grants must be held by its author).
//
// `RbacPolicy` is an immutable snapshot of the four kinds, indexed by subject
// (user name, group) and namespace, so one decision looks only at the
// bindings that name the requester. `RbacAuthorizer` keeps the snapshot
// current from the registry's watch cache: a write to any RBAC object is
// seen by the next decision (the cache is fed before a write returns).
//
// Thread-safety: RbacPolicy is immutable; RbacAuthorizer is thread-safe.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "api/field_error.h"
#include "auth/user.h"

namespace batchd::registry {
class Registry;
}

namespace batchd::auth {

inline constexpr char kRbacGroup[] = "rbac.authorization.k8s.io";

// One rule of a Role or ClusterRole.
struct PolicyRule {
  std::vector<std::string> verbs;
  std::vector<std::string> api_groups;
  std::vector<std::string> resources;
  std::vector<std::string> resource_names;
  std::vector<std::string> non_resource_urls;

  static PolicyRule FromJson(const api::Json& rule);
  api::Json ToJson() const;
  // Kubernetes' PolicyRule.CompactString: {APIGroups:["batch"], Resources:["jobs"], Verbs:["delete"]}.
  std::string CompactString() const;
  bool operator==(const PolicyRule& o) const;
};
std::vector<PolicyRule> RulesFromJson(const api::Json& rules);

// What a request asks for (Kubernetes' authorizer.Attributes without the user).
struct Attributes {
  bool resource_request = true;
  std::string verb;         // get, list, watch, create, update, patch, delete, deletecollection, ...
  std::string ns;           // "" for cluster scope
  std::string api_group;    // "" for core
  std::string api_version;
  std::string resource;     // "jobs"
  std::string subresource;  // "log"
  std::string name;
  std::string path;         // non-resource requests: the URL path
  std::string field_selector;  // a list/watch's fieldSelector (the node authorizer reads it)
};

bool RuleAllows(const Attributes& a, const PolicyRule& r);
// The rules of `servant` that `owner` does not cover (each broken down into
// single verb/group/resource/name or URL/verb atoms, then merged by verb), as
// Kubernetes' ConfirmNoEscalation computes them. Empty: fully covered.
std::vector<PolicyRule> UncoveredRules(const std::vector<PolicyRule>& owner,
                                       const std::vector<PolicyRule>& servant);

struct Decision {
  bool allowed = false;
  std::string reason;  // "RBAC: allowed by ..." or a denial reason (often "").
};

// `User "alice" cannot create resource "jobs" in API group "batch" in the
// namespace "team-b"` (+ ": reason").
std::string ForbiddenInnerMessage(const UserInfo& u, const Attributes& a, const std::string& reason);
// The full Status message (`jobs.batch is forbidden: ...`) and its details.
std::string ForbiddenMessage(const UserInfo& u, const Attributes& a, const std::string& reason);
// A Forbidden absl::Status (registry/errors.h shape) for the response.
absl::Status ForbiddenStatus(const UserInfo& u, const Attributes& a, const std::string& reason);

class RbacPolicy {
 public:
  struct Objects {
    std::vector<std::shared_ptr<const api::Json>> roles, cluster_roles, role_bindings,
        cluster_role_bindings;
  };
  static std::shared_ptr<const RbacPolicy> Build(const Objects& objs);

  Decision Authorize(const UserInfo& u, const Attributes& a) const;
  // Every rule that applies to `u` in `ns` (cluster-wide bindings, plus the
  // namespace's RoleBindings when `ns` is not empty).
  std::vector<PolicyRule> RulesFor(const UserInfo& u, const std::string& ns) const;
  // The rules of a role a binding refers to; nullopt when it does not exist.
  std::optional<std::vector<PolicyRule>> RoleRules(const std::string& kind, const std::string& ns,
                                                   const std::string& name) const;
  // Aggregated ClusterRoles whose stored `rules` differ from the aggregation:
  // name -> the rules to store.
  const std::vector<std::pair<std::string, api::Json>>& aggregation_updates() const {
    return aggregation_updates_;
  }

 private:
  struct Grant {
    std::shared_ptr<const std::vector<PolicyRule>> rules;
    std::string description;  // `RoleBinding "x/y" of Role "z" to User "alice"`
  };
  using BySubject = std::unordered_map<std::string, std::vector<Grant>>;
  struct Scope {
    BySubject users, groups;
  };
  template <typename F>
  bool ForEachGrant(const UserInfo& u, const std::string& ns, F&& f) const;

  Scope cluster_;
  std::unordered_map<std::string, Scope> namespaces_;
  std::unordered_map<std::string, std::shared_ptr<const std::vector<PolicyRule>>> cluster_roles_;
  std::unordered_map<std::string, std::shared_ptr<const std::vector<PolicyRule>>> roles_;  // "ns/name"
  std::vector<std::pair<std::string, api::Json>> aggregation_updates_;
};

// Decides a request. The superuser group system:masters is allowed first
// (as kube-apiserver's privileged-group authorizer), then RBAC.
class Authorizer {
 public:
  virtual ~Authorizer() = default;
  virtual Decision Authorize(const UserInfo& u, const Attributes& a) = 0;
  // The rules `u` holds in `ns` (SelfSubjectRulesReview).
  virtual std::vector<PolicyRule> RulesFor(const UserInfo& u, const std::string& ns) = 0;
  // Refuses (Forbidden, Kubernetes' message) a create or update of a Role,
  // ClusterRole, RoleBinding or ClusterRoleBinding `obj` that would grant
  // permissions `u` does not hold, unless `u` may escalate/bind.
  virtual absl::Status CheckEscalation(const UserInfo& u, const std::string& kind,
                                       const std::string& ns, const api::Json& obj) = 0;
  // An RBAC object was written: the next decision must see it.
  virtual void Invalidate() {}
};

// Allows everything (--authorization-mode=AlwaysAllow).
class AlwaysAllowAuthorizer : public Authorizer {
 public:
  Decision Authorize(const UserInfo&, const Attributes&) override { return {true, ""}; }
  std::vector<PolicyRule> RulesFor(const UserInfo& u, const std::string& ns) override;
  absl::Status CheckEscalation(const UserInfo&, const std::string&, const std::string&,
                               const api::Json&) override {
    return absl::OkStatus();
  }
};

// The request path takes no absl::Mutex (Debian's Abseil checks lock order
// on every acquisition under one global lock, which costs throughput at 16
// connections): the snapshot is an atomic shared_ptr tagged with the
// generation it was built at; a background thread bumps the generation for
// every RBAC change in the watch cache (in-process writes too, e.g. a
// namespace's RoleBindings deleted with it), and the API server bumps it
// synchronously after its own RBAC writes (Invalidate), so a client's next
// request sees its write.
class RbacAuthorizer : public Authorizer {
 public:
  // Reads the RBAC objects from `registry`'s watch cache (started) and
  // starts the watching thread.
  explicit RbacAuthorizer(registry::Registry& registry);
  ~RbacAuthorizer() override;
  void Invalidate() override { generation_.fetch_add(1, std::memory_order_acq_rel); }

  Decision Authorize(const UserInfo& u, const Attributes& a) override;
  std::vector<PolicyRule> RulesFor(const UserInfo& u, const std::string& ns) override;
  absl::Status CheckEscalation(const UserInfo& u, const std::string& kind, const std::string& ns,
                               const api::Json& obj) override;
  // The current snapshot (rebuilt first when an RBAC object changed).
  std::shared_ptr<const RbacPolicy> Policy();
  // Writes the aggregated rules of ClusterRoles with an aggregationRule
  // whose stored rules are out of date (the aggregation controller's job);
  // called after each policy rebuild that found any, and at start.
  void ReconcileAggregation();

 private:
  struct Snapshot {
    std::shared_ptr<const RbacPolicy> policy;
    uint64_t generation = 0;
  };
  std::shared_ptr<const RbacPolicy> Rebuild() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void WatchLoop();

  registry::Registry& registry_;
  absl::Mutex mu_;  // Serializes rebuilds.
  std::atomic<uint64_t> generation_{1};
  std::atomic<std::shared_ptr<const Snapshot>> snapshot_;
  absl::Mutex reconcile_mu_;  // One aggregation write-back at a time.
  std::atomic<bool> stop_{false};
  std::thread watcher_;
};

}  // namespace batchd::auth
