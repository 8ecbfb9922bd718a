// Internal to api/batch/v1: the pieces of Job validation shared between the
// create, update, status and CronJob validators. Not a public API.
// Stateless and thread-safe.
#pragma once

#include "absl/strings/string_view.h"
#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/field_error.h"

namespace batchd::api::batch_v1::internal {

// validateJobSpec: every JobSpec rule except the selector ones.
ErrorList ValidateJobSpecBody(const Json& spec, const Path& p);
// ValidateJobSpec: the body plus selector required/valid/matching the template.
ErrorList ValidateJobSpecWithSelector(const Json& spec, const Path& p);
// validateGeneratedSelector for non-manual selectors.
ErrorList ValidateGeneratedSelector(const Json& job, bool require_prefixed_labels);
// ValidateJob with RequirePrefixedLabels = `require_prefixed_labels`.
ErrorList ValidateJobWithOptions(const Json& job, bool require_prefixed_labels);

// validateIndexesFormat: "1,3-5,7" with every index < `completions`, in
// increasing order; returns the number of indexes.
absl::StatusOr<int64_t> ValidateIndexesFormat(absl::string_view indexes, int64_t completions);
// validateFailedIndexesNotOverlapCompleted.
absl::Status ValidateIndexesDoNotOverlap(absl::string_view completed, absl::string_view failed,
                                         int64_t completions);

// True when `conditions` (a JSON array) holds `type` with status "True".
bool ConditionTrue(const Json& conditions, std::string_view type);

}  // namespace batchd::api::batch_v1::internal
