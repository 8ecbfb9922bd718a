// Internal to api/scheduling/v1alpha2: the kinds' schemas.
#pragma once

#include "api/schema.h"
#include "api/scheduling/v1alpha2/scheduling_v1alpha2.h"

namespace batchd::api::scheduling_v1alpha2::internal {

SchemaPtr WorkloadSchema();
SchemaPtr WorkloadV1alpha1Schema();
SchemaPtr PodGroupSchema();

}  // namespace batchd::api::scheduling_v1alpha2::internal
