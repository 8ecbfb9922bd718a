// Helpers for writing KindDefs in other API groups (coordination/v1,
// batch/v1, ...): top-level object schemas, MicroTime and the age printer
// (JSON access is api/json_access.h). Thread-safe; schemas are immutable.
#pragma once

#include "api/core/v1/internal/schemas.h"

namespace batchd::api::core_v1 {

using internal::HumanAge;
using internal::MicroTimeSchema;
using internal::NodeSelectorSchema;
using internal::ObjectReferenceSchema;
using internal::TaintSchema;
using internal::TolerationSchema;
using internal::TopLevel;

}  // namespace batchd::api::core_v1
