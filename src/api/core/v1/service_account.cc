// core/v1 ServiceAccount: an identity for processes, whose tokens the
// TokenRequest subresource (`kubectl create token NAME`) issues.
#include "api/core/v1/internal/schemas.h"
#include "api/core/v1/internal/service_account.h"
#include "api/json_access.h"
#include "api/validation/object_meta.h"

namespace batchd::api::core_v1::internal {
namespace {

SchemaPtr ServiceAccountSchema() {
  static const SchemaPtr s =
      TopLevel("io.k8s.api.core.v1.ServiceAccount",
               "ServiceAccount binds together: a name, understood by users, and perhaps by "
               "peripheral systems, for an identity; a principal that can be authenticated and "
               "authorized.")
          .Field("secrets", ArrayOf(ObjectReferenceSchema(),
                                    "Secrets is a list of the secrets in the same namespace that "
                                    "pods running using this ServiceAccount are allowed to use."))
          .Field("imagePullSecrets",
                 ArrayOf(LocalObjectReferenceSchema(), "ImagePullSecrets is a list of references to secrets in the same "
                              "namespace to use for pulling any images (batchd runs host "
                              "processes: kept, not used)."))
          .Field("automountServiceAccountToken",
                 Bool("AutomountServiceAccountToken indicates whether pods running as this "
                      "service account should have an API token automatically mounted."))
          .Build();
  return s;
}

ErrorList ValidateServiceAccount(const Json& sa) {
  return validation::ValidateObjectMeta(MemberObject(sa, "metadata"), true,
                                        validation::NameIsDNSSubdomain, Path("metadata"));
}

}  // namespace

KindDef ServiceAccountKind() {
  KindDef k;
  k.version = "v1";
  k.kind = "ServiceAccount";
  k.plural = "serviceaccounts";
  k.singular = "serviceaccount";
  k.namespaced = true;
  k.short_names = {"sa"};
  k.subresources = {"token"};
  k.schema = ServiceAccountSchema();
  k.validate_create = ValidateServiceAccount;
  k.validate_update = [](const Json& sa, const Json& old) {
    ErrorList errs = ValidateServiceAccount(sa);
    AppendErrors(errs, validation::ValidateObjectMetaUpdate(MemberObject(sa, "metadata"),
                                                            MemberObject(old, "metadata"),
                                                            Path("metadata")));
    return errs;
  };
  k.columns = {{"Secrets", "string", "", "The number of secrets of the service account.", 0},
               {"Age", "string", "", "CreationTimestamp of the object.", 0}};
  k.row_cells = [](const Json& sa, absl::Time now) {
    return std::vector<Json>{static_cast<int64_t>(MemberArray(sa, "secrets").size()),
                             HumanAge(MemberObject(sa, "metadata").value("creationTimestamp", Json()),
                                      now)};
  };
  return k;
}

}  // namespace batchd::api::core_v1::internal
