// authorization.k8s.io/v1 and authentication.k8s.io/v1 review kinds:
// create-only, answered from the requester's identity, never stored.
#include "api/core/v1/kind_helpers.h"
#include "api/rbac/v1/rbac_v1.h"

namespace batchd::api::rbac_v1 {
namespace {

SchemaPtr ResourceAttributesSchema() {
  static const SchemaPtr s =
      Object("io.k8s.api.authorization.v1.ResourceAttributes",
             "ResourceAttributes includes the authorization attributes available for resource "
             "requests to the Authorizer interface")
          .Field("namespace", Str("Namespace is the namespace of the action being requested. "
                                  "\"\" (empty) means all namespaces for namespaced resources."))
          .Field("verb", Str("Verb is a kubernetes resource API verb, like: get, list, watch, "
                             "create, update, delete, proxy. \"*\" means all."))
          .Field("group", Str("Group is the API Group of the Resource. \"*\" means all."))
          .Field("version", Str("Version is the API Version of the Resource. \"*\" means all."))
          .Field("resource", Str("Resource is one of the existing resource types. \"*\" means all."))
          .Field("subresource", Str("Subresource is one of the existing resource types. \"\" means none."))
          .Field("name", Str("Name is the name of the resource being requested for a \"get\" or "
                             "deleted for a \"delete\". \"\" (empty) means all."))
          .Field("fieldSelector", AnyValue("Field selector of a list/watch (not evaluated by RBAC)."))
          .Field("labelSelector", AnyValue("Label selector of a list/watch (not evaluated by RBAC)."))
          .Build();
  return s;
}

SchemaPtr NonResourceAttributesSchema() {
  static const SchemaPtr s =
      Object("io.k8s.api.authorization.v1.NonResourceAttributes",
             "NonResourceAttributes includes the authorization attributes available for "
             "non-resource requests to the Authorizer interface")
          .Field("path", Str("Path is the URL path of the request"))
          .Field("verb", Str("Verb is the standard HTTP verb"))
          .Build();
  return s;
}

SchemaPtr AccessStatusSchema() {
  static const SchemaPtr s =
      Object("io.k8s.api.authorization.v1.SubjectAccessReviewStatus",
             "SubjectAccessReviewStatus")
          .Field("allowed", Bool("Allowed is required. True if the action would be allowed, false otherwise."))
          .Field("denied", Bool("Denied is optional. True if the action would be denied, otherwise false."))
          .Field("reason", Str("Reason is optional. It indicates why a request was allowed or denied."))
          .Field("evaluationError", Str("EvaluationError is an indication that some error occurred "
                                        "during the authorization check."))
          .Build();
  return s;
}

SchemaPtr ExtraSchema() { return MapOf(ArrayOf(Str()), "Extra of the user."); }

SchemaPtr AccessReviewSchema(const std::string& kind, bool self) {
  auto spec = Object(self ? "io.k8s.api.authorization.v1.SelfSubjectAccessReviewSpec"
                          : "io.k8s.api.authorization.v1.SubjectAccessReviewSpec",
                     "Exactly one of ResourceAttributes and NonResourceAttributes must be set.");
  spec.Field("resourceAttributes", ResourceAttributesSchema())
      .Field("nonResourceAttributes", NonResourceAttributesSchema());
  if (!self) {
    spec.Field("user", Str("User is the user you're testing for."))
        .Field("groups", StrList("Groups is the groups you're testing for."))
        .Field("extra", ExtraSchema())
        .Field("uid", Str("UID information about the requesting user."));
  }
  return core_v1::TopLevel("io.k8s.api.authorization.v1." + kind,
                           kind + " checks whether or not a user or group can perform an action.")
      .Field("spec", spec.Build())
      .Field("status", AccessStatusSchema())
      .Require("spec")
      .Build();
}

SchemaPtr RulesReviewSchema() {
  auto rule = Object("io.k8s.api.authorization.v1.ResourceRule",
                     "ResourceRule is the list of actions the subject is allowed to perform on "
                     "resources.")
                  .Field("verbs", StrList("Verbs"))
                  .Field("apiGroups", StrList("APIGroups"))
                  .Field("resources", StrList("Resources"))
                  .Field("resourceNames", StrList("ResourceNames"))
                  .Build();
  auto nrule = Object("io.k8s.api.authorization.v1.NonResourceRule",
                      "NonResourceRule holds information that describes a rule for the "
                      "non-resource")
                   .Field("verbs", StrList("Verbs"))
                   .Field("nonResourceURLs", StrList("NonResourceURLs"))
                   .Build();
  return core_v1::TopLevel("io.k8s.api.authorization.v1.SelfSubjectRulesReview",
                           "SelfSubjectRulesReview enumerates the set of actions the current "
                           "user can perform within a namespace.")
      .Field("spec", Object("io.k8s.api.authorization.v1.SelfSubjectRulesReviewSpec",
                            "SelfSubjectRulesReviewSpec defines the specification for "
                            "SelfSubjectRulesReview.")
                         .Field("namespace", Str("Namespace to evaluate rules for. Required.")))
      .Field("status", Object("io.k8s.api.authorization.v1.SubjectRulesReviewStatus",
                              "SubjectRulesReviewStatus")
                           .Field("resourceRules", ArrayOf(rule, "ResourceRules"))
                           .Field("nonResourceRules", ArrayOf(nrule, "NonResourceRules"))
                           .Field("incomplete", Bool("Incomplete"))
                           .Field("evaluationError", Str("EvaluationError")))
      .Require("spec")
      .Build();
}

SchemaPtr SelfSubjectReviewSchema() {
  return core_v1::TopLevel("io.k8s.api.authentication.v1.SelfSubjectReview",
                           "SelfSubjectReview contains the user information that the "
                           "kube-apiserver has about the user making this request.")
      .Field("status",
             Object("io.k8s.api.authentication.v1.SelfSubjectReviewStatus",
                    "SelfSubjectReviewStatus is filled by the kube-apiserver and sent back to a "
                    "user.")
                 .Field("userInfo", Object("io.k8s.api.authentication.v1.UserInfo",
                                           "UserInfo holds the information about the user.")
                                        .Field("username", Str("The name that uniquely "
                                                               "identifies this user."))
                                        .Field("uid", Str("A unique value that identifies this user."))
                                        .Field("groups", StrList("The names of groups this user is a part of."))
                                        .Field("extra", ExtraSchema())))
      .Build();
}

KindDef Review(const std::string& group, const std::string& kind, const std::string& plural,
               bool namespaced, SchemaPtr schema) {
  KindDef k;
  k.group = group;
  k.version = "v1";
  k.kind = kind;
  k.plural = plural;
  k.singular = "";
  for (char c : kind) k.singular += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  k.namespaced = namespaced;
  k.verbs = {"create"};
  k.schema = std::move(schema);
  return k;
}

}  // namespace

void RegisterReviewKinds(Scheme& scheme) {
  scheme.Add(Review(kAuthenticationGroup, "SelfSubjectReview", "selfsubjectreviews", false,
                    SelfSubjectReviewSchema()));
  scheme.Add(Review(kAuthorizationGroup, "LocalSubjectAccessReview", "localsubjectaccessreviews",
                    true, AccessReviewSchema("LocalSubjectAccessReview", false)));
  scheme.Add(Review(kAuthorizationGroup, "SelfSubjectAccessReview", "selfsubjectaccessreviews",
                    false, AccessReviewSchema("SelfSubjectAccessReview", true)));
  scheme.Add(Review(kAuthorizationGroup, "SelfSubjectRulesReview", "selfsubjectrulesreviews",
                    false, RulesReviewSchema()));
  scheme.Add(Review(kAuthorizationGroup, "SubjectAccessReview", "subjectaccessreviews", false,
                    AccessReviewSchema("SubjectAccessReview", false)));
}

bool IsReviewKind(const KindDef& k) {
  return (k.group == kAuthorizationGroup || k.group == kAuthenticationGroup) &&
         k.verbs.size() == 1 && k.verbs[0] == "create";
}

}  // namespace batchd::api::rbac_v1
