// Writers of batch/v1 Jobs: the one place where the edits a controller makes
// to a Job's spec and status are spelled out (reads go through job_view.h).
// The Kueue integration suspends and unsuspends a queued Job, sets its pod
// count for partial admission, merges the admitted flavors' node selector
// and tolerations into its pod template, and puts them back when it stops
// the Job.
//
// Thread-safety: free functions over JSON the caller owns.
#pragma once

#include <cstdint>
#include <string_view>

#include "api/field_error.h"

namespace batchd::api::batch_v1 {

// spec.suspend = suspend.
void SetSuspend(Json& job, bool suspend);
// spec.parallelism = parallelism.
void SetParallelism(Json& job, int32_t parallelism);
// spec.completions = completions.
void SetCompletions(Json& job, int32_t completions);

// spec.template.spec.nodeSelector gains every entry of `labels` (an
// object), replacing the value of a key it already has. An empty `labels`
// changes nothing.
void MergeTemplateNodeSelector(Json& job, const Json& labels);
// spec.template.spec.tolerations gains each of `tolerations` (an array)
// that it does not hold yet. An empty `tolerations` changes nothing.
void MergeTemplateTolerations(Json& job, const Json& tolerations);

// spec.template.spec.nodeSelector becomes `selector`, and is removed when
// `selector` is null or empty. Returns whether the Job changed.
bool ReplaceTemplateNodeSelector(Json& job, const Json& selector);
// spec.template.spec.tolerations becomes `tolerations`, and is removed when
// `tolerations` is null or empty. Returns whether the Job changed.
bool ReplaceTemplateTolerations(Json& job, const Json& tolerations);

// Topology-aware admission marks the pod template: spec.template.metadata
// labels / annotations gain every entry of `entries` (an object), and
// spec.template.spec.schedulingGates gains `{name}` unless it has it.
void MergeTemplateLabels(Json& job, const Json& entries);
void MergeTemplateAnnotations(Json& job, const Json& entries);
void AddTemplateSchedulingGate(Json& job, std::string_view name);
// The reverse edits; each returns whether the Job changed (an emptied map
// or list is removed).
bool RemoveTemplateLabel(Json& job, std::string_view key);
bool RemoveTemplateAnnotation(Json& job, std::string_view key);
bool RemoveTemplateSchedulingGate(Json& job, std::string_view name);

}  // namespace batchd::api::batch_v1
