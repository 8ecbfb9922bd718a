// Internal to api/kueue: the schemas of both served versions, built by one
// parameterised code path so v1beta1 differs from v1beta2 only where Kueue's
// types differ (cohort vs cohortName, priorityClassSource/Name vs
// priorityClassRef, flavorUsage vs flavorsUsage, deprecated enum values...).
// Built once per version (function-local statics), immutable, thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "api/schema.h"

namespace batchd::api::kueue::internal {

struct KueueSchemas {
  SchemaPtr resource_flavor;
  SchemaPtr cluster_queue;
  SchemaPtr local_queue;
  SchemaPtr cohort;
  SchemaPtr workload;
  SchemaPtr workload_priority_class;
  SchemaPtr admission_check;
  SchemaPtr topology;
  SchemaPtr provisioning_request_config;
  SchemaPtr multikueue_cluster;
  SchemaPtr multikueue_config;
};

// "v1beta2" (storage) or "v1beta1"; any other value is treated as v1beta2.
const KueueSchemas& SchemasFor(std::string_view version);

// Pieces shared by the two schema files.
struct SchemaContext {
  std::string version;
  bool v1beta1 = false;
  // "io.x-k8s.kueue.<version>.<name>": the OpenAPI component name.
  std::string Ref(std::string_view name) const;
};
SchemaPtr ResourceGroupsSchema(const SchemaContext& c, const std::string& doc);
SchemaPtr FairSharingSchema(const SchemaContext& c);
SchemaPtr FairSharingStatusSchema(const SchemaContext& c);
SchemaPtr ResourceListSchema(const std::string& doc);
SchemaPtr TolerationsSchema(const std::string& doc);
SchemaPtr WorkloadSchema(const SchemaContext& c);
SchemaPtr ProvisioningRequestConfigSchema(const SchemaContext& c);  // provisioning_schema.cc
SchemaPtr MultiKueueClusterSchema(const SchemaContext& c);          // multikueue_schema.cc
SchemaPtr MultiKueueConfigSchema(const SchemaContext& c);           // multikueue_schema.cc

}  // namespace batchd::api::kueue::internal
