// Internal to api/jobset/v1alpha2: the pieces of JobSet validation shared by
// validation.cc, failure_policy_validation.cc and update_validation.cc.
// Stateless; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "api/field_error.h"

namespace batchd::api::jobset_v1alpha2::internal {

// The CRD's `minimum` error: "<path> in body should be greater than or equal to <min>".
FieldError InBodyMinimum(const Path& p, const Json& v, int64_t min);
// Required value when obj[key] is absent or "".
void RequireString(const Json& obj, std::string_view key, const Path& p, ErrorList& errs);
// obj[key] is one of `allowed` (Unsupported value otherwise); Required when
// absent and `required`.
void CheckEnum(const Json& obj, std::string_view key, const std::vector<std::string>& allowed,
               bool required, const Path& p, ErrorList& errs);
// The CRD's uniqueItems on a list of strings: Duplicate value at the repeat.
void CheckUniqueStrings(const Json& list, const Path& p, ErrorList& errs);

// spec.failurePolicy (failure_policy_validation.cc): rule names, actions,
// failure reasons, message patterns (RE2), target replicated jobs.
void ValidateFailurePolicy(const Json& spec, const std::vector<std::string>& rjob_names,
                           ErrorList& errs);
// spec.coordinator: the replicated job exists, the job and pod indexes are in
// range, and the endpoint is a valid label value.
void ValidateCoordinator(const Json& js, ErrorList& errs);

// spec.volumeClaimPolicies (volume_claims_validation.cc).
void ValidateVolumeClaimPolicies(const Json& js, ErrorList& errs);

}  // namespace batchd::api::jobset_v1alpha2::internal
