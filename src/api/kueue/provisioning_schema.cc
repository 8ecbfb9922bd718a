// ProvisioningRequestConfig (kueue.x-k8s.io, cluster-scoped, short name
// `prc`): the parameters of the built-in `kueue.x-k8s.io/provisioning-request`
// AdmissionCheck. Field names as in Kueue's Go types (the same in v1beta1 and
// v1beta2); descriptions and limits checked here are batchd's, following the
// CRD's markers.
#include <set>

#include "api/core/v1/core_v1.h"
#include "api/core/v1/kind_helpers.h"
#include "api/json_access.h"
#include "api/kueue/internal/schemas.h"
#include "api/kueue/internal/util.h"
#include "api/kueue/kueue.h"
#include "api/validation/object_meta.h"

namespace batchd::api::kueue {
namespace internal {

SchemaPtr ProvisioningRequestConfigSchema(const SchemaContext& c) {
  SchemaPtr retry =
      Object(c.Ref("ProvisioningRequestRetryStrategy"), "How a failed provisioning is retried.")
          .Field("backoffLimitCount", Int32("Retries before the check is Rejected; default 3."))
          .Field("backoffBaseSeconds", Int32("First retry delay in seconds, doubled per retry; "
                                             "default 60."))
          .Field("backoffMaxSeconds", Int32("Largest retry delay in seconds; default 1800."))
          .Build();
  SchemaPtr selector =
      Object(c.Ref("ProvisioningRequestPodSetUpdatesNodeSelector"),
             "A node selector entry taken from the provisioning class details.")
          .Field("key", Str("The node selector key."))
          .Field("valueFromProvisioningClassDetail", Str("The provisioning class detail that "
                                                         "holds the value."))
          .Require("key").Require("valueFromProvisioningClassDetail").Build();
  SchemaPtr updates =
      Object(c.Ref("ProvisioningRequestPodSetUpdates"), "Updates for the pods once provisioned.")
          .Field("nodeSelector", ArrayOf(selector, "Node selector entries; at most 8.")
                                     .ListType("map").ListMapKeys({"key"}))
          .Build();
  SchemaPtr spec =
      Object(c.Ref("ProvisioningRequestConfigSpec"),
             "The desired state of a ProvisioningRequestConfig.")
          .Field("provisioningClassName", Str("The provisioning class; at most 253 characters."))
          .Field("parameters", MapOf(Str(), "Parameters for the provisioner; at most 100."))
          .Field("managedResources", ArrayOf(Str(), "Resources the provisioner manages; empty "
                                                    "= all; at most 100.").ListType("set"))
          .Field("retryStrategy", retry)
          .Field("podSetUpdates", updates)
          .Field("podSetMergePolicy", Str("How pod sets are merged into one request.")
                                          .Enum({"IdenticalPodTemplates",
                                                 "IdenticalWorkloadSchedulingRequirements"}))
          .Require("provisioningClassName").Build();
  return core_v1::TopLevel(c.Ref("ProvisioningRequestConfig"),
                           "ProvisioningRequestConfig holds the parameters of the "
                           "provisioning-request AdmissionCheck.")
      .Field("spec", spec)
      .Build();
}

}  // namespace internal

ErrorList ValidateProvisioningRequestConfig(const Json& prc) {
  ErrorList errs = internal::ValidateMeta(prc, false);
  const Json& spec = MemberObject(prc, "spec");
  const Path p = Path("spec");
  const internal::KueueSchemas& s = internal::SchemasFor(kStorageVersion);
  if (const Schema* ss = s.provisioning_request_config->Property("spec");
      ss != nullptr && prc.contains("spec")) {
    AppendErrors(errs, internal::ValidateSchemaConstraints(*ss, prc["spec"], p));
  }
  if (!HasMember(prc, "spec")) errs.push_back(Required(p));
  std::string cls(StringMember(spec, "provisioningClassName"));
  if (HasMember(spec, "provisioningClassName") && cls.empty()) {
    errs.push_back(Required(p.Child("provisioningClassName")));
  }
  if (cls.size() > 253) errs.push_back(TooLong(p.Child("provisioningClassName"), cls, 253));
  const Json& params = MemberObject(spec, "parameters");
  if (params.size() > 100) errs.push_back(TooMany(p.Child("parameters"), params.size(), 100));
  for (auto it = params.begin(); it != params.end(); ++it) {
    if (it.key().empty() || it.key().size() > 317) {
      errs.push_back(Invalid(p.Child("parameters").Key(it.key()), it.key(),
                             "must be 1 to 317 characters"));
    }
    if (it->is_string() && it->get<std::string>().size() > 255) {
      errs.push_back(TooLong(p.Child("parameters").Key(it.key()), *it, 255));
    }
  }
  internal::ValidateMaxItems(MemberArray(spec, "managedResources"), 100,
                             p.Child("managedResources"), errs);
  std::set<std::string> seen;
  const Json& managed = MemberArray(spec, "managedResources");
  for (size_t i = 0; i < managed.size(); ++i) {
    if (!seen.insert(std::string(AsString(managed[i]))).second) {
      errs.push_back(Duplicate(p.Child("managedResources").Index(i), managed[i]));
    }
  }
  const Json& retry = MemberObject(spec, "retryStrategy");
  for (const char* f : {"backoffLimitCount", "backoffBaseSeconds", "backoffMaxSeconds"}) {
    if (HasMember(retry, f) && IntMember(retry, f) < 0) {
      errs.push_back(Invalid(p.Child("retryStrategy").Child(f), Member(retry, f),
                             "must be greater than or equal to 0"));
    }
  }
  internal::ValidateMaxItems(MemberArray(MemberObject(spec, "podSetUpdates"), "nodeSelector"), 8,
                             p.Child("podSetUpdates").Child("nodeSelector"), errs);
  return errs;
}

ErrorList ValidateProvisioningRequestConfigUpdate(const Json& prc, const Json& old) {
  ErrorList errs = ValidateProvisioningRequestConfig(prc);
  AppendErrors(errs, internal::ValidateMetaUpdate(prc, old, false));
  return errs;
}

}  // namespace batchd::api::kueue
