// coordination.k8s.io/v1 Lease: schema, validation and table (Name, Holder, Age).
#include "api/core/v1/core_v1.h"
#include "api/core/v1/kind_helpers.h"
#include "api/json_access.h"
#include "api/schema_ops/schema_ops.h"
#include "api/validation/object_meta.h"

namespace batchd::api::coordination_v1 {
namespace {


SchemaPtr LeaseSchema() {
  static const SchemaPtr spec =
      Object("io.k8s.api.coordination.v1.LeaseSpec", "LeaseSpec is a specification of a Lease.")
          .Field("acquireTime", core_v1::MicroTimeSchema("Time at which the current lease was acquired."))
          .Field("holderIdentity", Str("The identity of the holder of a current lease."))
          .Field("leaseDurationSeconds", Int32("Duration that candidates for a lease need to "
                                               "wait to force acquire it."))
          .Field("leaseTransitions", Int32("The number of transitions of a lease between "
                                           "holders."))
          .Field("preferredHolder", Str("Signals to a lease holder that the lease has a more "
                                        "optimal holder."))
          .Field("renewTime", core_v1::MicroTimeSchema("Time at which the current holder last updated the "
                                        "lease."))
          .Field("strategy", Str("The strategy for picking the leader for coordinated leader "
                                 "election."))
          .Build();
  static const SchemaPtr s =
      core_v1::TopLevel("io.k8s.api.coordination.v1.Lease",
                                  "Lease defines a lease concept.")
          .Field("spec", spec)
          .Build();
  return s;
}

ErrorList ValidateLease(const Json& obj) {
  ErrorList errs = validation::ValidateObjectMeta(MemberObject(obj, "metadata"), true,
                                                  validation::NameIsDNSSubdomain,
                                                  Path("metadata"));
  const Json& spec = MemberObject(obj, "spec");
  for (const char* f : {"leaseDurationSeconds", "leaseTransitions"}) {
    int64_t v = IntMember(spec, f, 1);
    if (std::string(f) == "leaseDurationSeconds" && v <= 0) {
      errs.push_back(Invalid(Path("spec").Child(f), v, "must be greater than 0"));
    } else if (v < 0) {
      errs.push_back(Invalid(Path("spec").Child(f), v, "must be greater than or equal to 0"));
    }
  }
  return errs;
}

}  // namespace

void RegisterKinds(Scheme& scheme) {
  KindDef k;
  k.group = "coordination.k8s.io";
  k.version = "v1";
  k.kind = "Lease";
  k.plural = "leases";
  k.singular = "lease";
  k.namespaced = true;
  k.schema = LeaseSchema();
  k.validate_create = ValidateLease;
  k.validate_update = [](const Json& obj, const Json& old) {
    ErrorList errs = ValidateLease(obj);
    ErrorList u = validation::ValidateObjectMetaUpdate(MemberObject(obj, "metadata"),
                                                       MemberObject(old, "metadata"),
                                                       Path("metadata"));
    errs.insert(errs.end(), u.begin(), u.end());
    return errs;
  };
  k.columns = {{"Holder", "string", "", "The identity of the holder of the lease.", 0},
               {"Age", "string", "", "CreationTimestamp of the lease.", 0}};
  k.row_cells = [](const Json& obj, absl::Time now) {
    return std::vector<Json>{
        std::string(StringMember(MemberObject(obj, "spec"), "holderIdentity")),
        core_v1::HumanAge(MemberObject(obj, "metadata").value("creationTimestamp", Json()),
                                    now)};
  };
  scheme.Add(std::move(k));
}

}  // namespace batchd::api::coordination_v1
