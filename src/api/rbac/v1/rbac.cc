#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/core/v1/core_v1.h"
#include "api/core/v1/kind_helpers.h"
#include "api/json_access.h"
#include "api/rbac/v1/rbac_v1.h"
#include "api/validation/object_meta.h"

namespace batchd::api::rbac_v1 {
namespace {

SchemaPtr PolicyRuleSchema() {
  static const SchemaPtr s =
      Object("io.k8s.api.rbac.v1.PolicyRule",
             "PolicyRule holds information that describes a policy rule, but does not contain "
             "information about who the rule applies to or which namespace the rule applies to.")
          .Field("verbs", StrList("Verbs is a list of Verbs that apply to ALL the ResourceKinds "
                                  "contained in this rule. '*' represents all verbs."))
          .Field("apiGroups", StrList("APIGroups is the name of the APIGroup that contains the "
                                      "resources. \"\" represents the core API group and \"*\" "
                                      "represents all API groups."))
          .Field("resources", StrList("Resources is a list of resources this rule applies to. "
                                      "'*' represents all resources; 'pods/log' a subresource."))
          .Field("resourceNames", StrList("ResourceNames is an optional white list of names that "
                                          "the rule applies to. An empty set means that "
                                          "everything is allowed."))
          .Field("nonResourceURLs",
                 StrList("NonResourceURLs is a set of partial urls that a user should have "
                         "access to. *s are allowed, but only as the full, final step in the "
                         "path. Rules can either apply to API resources or non-resource URL "
                         "paths, but not both."))
          .Require("verbs")
          .Build();
  return s;
}

SchemaPtr SubjectSchema() {
  static const SchemaPtr s =
      Object("io.k8s.api.rbac.v1.Subject",
             "Subject contains a reference to the object or user identities a role binding "
             "applies to.")
          .Field("kind", Str("Kind of object being referenced: \"User\", \"Group\", or "
                             "\"ServiceAccount\"."))
          .Field("apiGroup", Str("APIGroup holds the API group of the referenced subject; "
                                 "\"\" for ServiceAccount, \"rbac.authorization.k8s.io\" for "
                                 "User and Group."))
          .Field("name", Str("Name of the object being referenced."))
          .Field("namespace", Str("Namespace of the referenced object (ServiceAccount only; "
                                  "defaults to the binding's)."))
          .Require("kind")
          .Require("name")
          .Build();
  return s;
}

SchemaPtr RoleRefSchema() {
  static const SchemaPtr s =
      Object("io.k8s.api.rbac.v1.RoleRef", "RoleRef contains information that points to the role being used")
          .Field("apiGroup", Str("APIGroup is the group for the resource being referenced"))
          .Field("kind", Str("Kind is the type of resource being referenced"))
          .Field("name", Str("Name is the name of resource being referenced"))
          .Require("apiGroup")
          .Require("kind")
          .Require("name")
          .Build();
  return s;
}

SchemaPtr RoleSchema(bool cluster) {
  auto b = core_v1::TopLevel(
      cluster ? "io.k8s.api.rbac.v1.ClusterRole" : "io.k8s.api.rbac.v1.Role",
      cluster ? "ClusterRole is a cluster level, logical grouping of PolicyRules that can be "
                "referenced as a unit by a RoleBinding or ClusterRoleBinding."
              : "Role is a namespaced, logical grouping of PolicyRules that can be referenced as "
                "a unit by a RoleBinding.");
  b.Field("rules", ArrayOf(PolicyRuleSchema(), "Rules holds all the PolicyRules for this role"));
  if (cluster) {
    b.Field("aggregationRule",
            Object("io.k8s.api.rbac.v1.AggregationRule",
                   "AggregationRule describes how to locate ClusterRoles to aggregate into the "
                   "ClusterRole")
                .Field("clusterRoleSelectors",
                       ArrayOf(core_v1::LabelSelectorSchema(),
                               "ClusterRoleSelectors holds a list of selectors which will be used "
                               "to find ClusterRoles and create the rules. If any of the "
                               "selectors match, then the ClusterRole's permissions will be "
                               "added")));
  }
  return b.Build();
}

SchemaPtr BindingSchema(bool cluster) {
  return core_v1::TopLevel(cluster ? "io.k8s.api.rbac.v1.ClusterRoleBinding"
                                   : "io.k8s.api.rbac.v1.RoleBinding",
                           cluster ? "ClusterRoleBinding references a ClusterRole, but not "
                                     "contain it. It adds who information via Subjects."
                                   : "RoleBinding references a role, but does not contain it. "
                                     "It can reference a Role in the same namespace or a "
                                     "ClusterRole in the global namespace.")
      .Field("subjects", ArrayOf(SubjectSchema(), "Subjects holds references to the objects the "
                                                  "role applies to."))
      .Field("roleRef", RoleRefSchema())
      .Require("roleRef")
      .Build();
}

// Kubernetes' ValidateRBACName: a path segment.
validation::Messages RbacName(std::string_view name, bool /*prefix*/) {
  validation::Messages m;
  if (name == "." || name == "..") m.push_back(absl::StrCat("may not be '", std::string(name), "'"));
  for (const char* bad : {"/", "%"}) {
    if (name.find(bad) != std::string_view::npos) {
      m.push_back(absl::StrCat("may not contain '", bad, "'"));
    }
  }
  return m;
}

ErrorList ValidateMeta(const Json& obj, bool namespaced) {
  return validation::ValidateObjectMeta(MemberObject(obj, "metadata"), namespaced, RbacName,
                                        Path("metadata"));
}

ErrorList ValidateRole(const Json& obj, bool cluster) {
  ErrorList errs = ValidateMeta(obj, !cluster);
  AppendErrors(errs, ValidatePolicyRules(obj.value("rules", Json()), !cluster, Path("rules")));
  if (cluster) {
    auto agg = obj.find("aggregationRule");
    if (agg != obj.end() && agg->is_object()) {
      auto sels = agg->find("clusterRoleSelectors");
      if (sels == agg->end() || !sels->is_array() || sels->empty()) {
        errs.push_back(Required(Path("aggregationRule").Child("clusterRoleSelectors"),
                                "at least one clusterRoleSelector required if aggregationRule "
                                "is non-nil"));
      }
    }
  }
  return errs;
}

ErrorList ValidateBinding(const Json& obj, bool cluster) {
  ErrorList errs = ValidateMeta(obj, !cluster);
  const Json& ref = MemberObject(obj, "roleRef");
  Path rp = Path("roleRef");
  std::string group = CopyStringMember(ref, "apiGroup");
  std::string kind = CopyStringMember(ref, "kind");
  std::string name = CopyStringMember(ref, "name");
  if (group != kGroup) errs.push_back(NotSupported(rp.Child("apiGroup"), group, {kGroup}));
  if (cluster) {
    if (kind != "ClusterRole") errs.push_back(NotSupported(rp.Child("kind"), kind, {"ClusterRole"}));
  } else if (kind != "Role" && kind != "ClusterRole") {
    errs.push_back(NotSupported(rp.Child("kind"), kind, {"ClusterRole", "Role"}));
  }
  if (name.empty()) {
    errs.push_back(Required(rp.Child("name")));
  } else {
    for (const auto& m : RbacName(name, false)) errs.push_back(Invalid(rp.Child("name"), name, m));
  }
  const Json& subjects = obj.value("subjects", Json::array());
  if (subjects.is_array()) {
    for (size_t i = 0; i < subjects.size(); ++i) {
      const Json& s = subjects[i];
      Path p = Path("subjects").Index(i);
      std::string sk = CopyStringMember(s, "kind");
      std::string sname = CopyStringMember(s, "name");
      std::string sgroup = CopyStringMember(s, "apiGroup");
      if (sname.empty()) errs.push_back(Required(p.Child("name")));
      if (sk == "ServiceAccount") {
        if (!sgroup.empty()) errs.push_back(NotSupported(p.Child("apiGroup"), sgroup, {""}));
        for (const auto& m : validation::NameIsDNSSubdomain(sname, false)) {
          if (!sname.empty()) errs.push_back(Invalid(p.Child("name"), sname, m));
        }
        if (cluster && CopyStringMember(s, "namespace").empty()) {
          errs.push_back(Required(p.Child("namespace")));
        }
      } else if (sk == "User" || sk == "Group") {
        if (sgroup != kGroup) errs.push_back(NotSupported(p.Child("apiGroup"), sgroup, {kGroup}));
      } else {
        errs.push_back(NotSupported(p.Child("kind"), sk, {"ServiceAccount", "User", "Group"}));
      }
    }
  }
  return errs;
}

// Defaults as Kubernetes' SetDefaults_Subject / SetDefaults_RoleRef.
void SetBindingDefaults(Json& obj) {
  if (obj.contains("roleRef") && obj["roleRef"].is_object() &&
      CopyStringMember(obj["roleRef"], "apiGroup").empty()) {
    obj["roleRef"]["apiGroup"] = kGroup;
  }
  if (!obj.contains("subjects") || !obj["subjects"].is_array()) return;
  for (auto& s : obj["subjects"]) {
    if (!s.is_object() || s.contains("apiGroup")) continue;
    std::string k = CopyStringMember(s, "kind");
    if (k == "User" || k == "Group") s["apiGroup"] = kGroup;
    if (k == "ServiceAccount") s["apiGroup"] = "";
  }
}

Json CreatedAt(const Json& obj) {
  return MemberObject(obj, "metadata").value("creationTimestamp", Json());
}

std::string SubjectNames(const Json& obj, const std::string& kind) {
  std::vector<std::string> out;
  const Json& subjects = obj.value("subjects", Json::array());
  if (!subjects.is_array()) return "";
  for (const auto& s : subjects) {
    if (CopyStringMember(s, "kind") != kind) continue;
    std::string n = CopyStringMember(s, "name");
    if (kind == "ServiceAccount") n = CopyStringMember(s, "namespace") + "/" + n;
    out.push_back(n);
  }
  return absl::StrJoin(out, ", ");
}

KindDef RoleKind(bool cluster) {
  KindDef k;
  k.group = kGroup;
  k.version = "v1";
  k.kind = cluster ? "ClusterRole" : "Role";
  k.plural = cluster ? "clusterroles" : "roles";
  k.singular = cluster ? "clusterrole" : "role";
  k.namespaced = !cluster;
  k.schema = RoleSchema(cluster);
  k.validate_create = [cluster](const Json& o) { return ValidateRole(o, cluster); };
  k.validate_update = [cluster](const Json& o, const Json& old) {
    ErrorList errs = ValidateRole(o, cluster);
    AppendErrors(errs, validation::ValidateObjectMetaUpdate(MemberObject(o, "metadata"),
                                                            MemberObject(old, "metadata"),
                                                            Path("metadata")));
    return errs;
  };
  k.columns = {{"Created At", "date", "", "Time at which the role was created.", 0}};
  k.row_cells = [](const Json& o, absl::Time) { return std::vector<Json>{CreatedAt(o)}; };
  return k;
}

KindDef BindingKind(bool cluster) {
  KindDef k;
  k.group = kGroup;
  k.version = "v1";
  k.kind = cluster ? "ClusterRoleBinding" : "RoleBinding";
  k.plural = cluster ? "clusterrolebindings" : "rolebindings";
  k.singular = cluster ? "clusterrolebinding" : "rolebinding";
  k.namespaced = !cluster;
  k.schema = BindingSchema(cluster);
  k.set_defaults = SetBindingDefaults;
  k.validate_create = [cluster](const Json& o) { return ValidateBinding(o, cluster); };
  k.validate_update = [cluster](const Json& o, const Json& old) {
    ErrorList errs = ValidateBinding(o, cluster);
    AppendErrors(errs, validation::ValidateObjectMetaUpdate(MemberObject(o, "metadata"),
                                                            MemberObject(old, "metadata"),
                                                            Path("metadata")));
    if (o.value("roleRef", Json()) != old.value("roleRef", Json())) {
      errs.push_back(Invalid(Path("roleRef"), o.value("roleRef", Json()),
                             "cannot change roleRef"));
    }
    return errs;
  };
  k.columns = {{"Role", "string", "", "The role the binding grants.", 0},
               {"Age", "string", "", "CreationTimestamp of the binding.", 0},
               {"Users", "string", "", "Users in the binding.", 1},
               {"Groups", "string", "", "Groups in the binding.", 1},
               {"ServiceAccounts", "string", "", "ServiceAccounts in the binding.", 1}};
  k.row_cells = [](const Json& o, absl::Time now) {
    const Json& ref = MemberObject(o, "roleRef");
    return std::vector<Json>{
        CopyStringMember(ref, "kind") + "/" + CopyStringMember(ref, "name"),
        core_v1::HumanAge(CreatedAt(o), now), SubjectNames(o, "User"), SubjectNames(o, "Group"),
        SubjectNames(o, "ServiceAccount")};
  };
  return k;
}

}  // namespace

ErrorList ValidatePolicyRules(const Json& rules, bool namespaced, const Path& path) {
  ErrorList errs;
  if (!rules.is_array()) return errs;
  for (size_t i = 0; i < rules.size(); ++i) {
    const Json& r = rules[i];
    Path p = path.Index(i);
    auto count = [&](const char* f) {
      auto it = r.find(f);
      return it != r.end() && it->is_array() ? it->size() : size_t{0};
    };
    if (count("verbs") == 0) errs.push_back(Required(p.Child("verbs"), "verbs must contain at least one value"));
    if (count("nonResourceURLs") > 0) {
      if (namespaced) {
        errs.push_back(Invalid(p.Child("nonResourceURLs"), r["nonResourceURLs"],
                               "namespaced rules cannot apply to non-resource URLs"));
      }
      if (count("apiGroups") > 0 || count("resources") > 0 || count("resourceNames") > 0) {
        errs.push_back(Invalid(p.Child("nonResourceURLs"), r["nonResourceURLs"],
                               "rules cannot apply to both regular resources and non-resource "
                               "URLs"));
      }
      continue;
    }
    if (count("apiGroups") == 0) {
      errs.push_back(Required(p.Child("apiGroups"), "resource rules must supply at least one api group"));
    }
    if (count("resources") == 0) {
      errs.push_back(Required(p.Child("resources"), "resource rules must supply at least one resource"));
    }
  }
  return errs;
}

void RegisterKinds(Scheme& scheme) {
  scheme.Add(RoleKind(false));
  scheme.Add(RoleKind(true));
  scheme.Add(BindingKind(false));
  scheme.Add(BindingKind(true));
}

}  // namespace batchd::api::rbac_v1
