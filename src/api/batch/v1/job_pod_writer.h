// Writers of the pods the Job controller creates from a Job's pod template
// (spec.template, JobSpecView::pod_template): the copy of the template and
// what an Indexed Job adds to each pod (batch-apis.md §1.2).
//
// Thread-safety: free functions over JSON the caller owns.
#pragma once

#include <string_view>

#include "api/field_error.h"

namespace batchd::api::batch_v1 {

// A new v1 Pod in `ns` named by `generate_name`, with the template's labels,
// annotations, finalizers and spec copied (`pod_template` may be nullptr:
// an empty template).
Json NewPodFromTemplate(const Json* pod_template, std::string_view ns,
                        std::string_view generate_name);

// Pod `index` of an Indexed Job `job_name`: the completion index annotation
// and label, hostname "<job_name>-<index>", and JOB_COMPLETION_INDEX (read
// from the label through the downward API) in every container and init
// container that does not set it.
void SetPodCompletionIndex(Json& pod, std::string_view job_name, int index);

// backoffLimitPerIndex: the failures of the pod's index so far, and those a
// podFailurePolicy Ignore rule left uncounted (written only when positive),
// which the next pod of the index inherits.
void SetPodIndexFailureCounts(Json& pod, int failures, int ignored_failures);

}  // namespace batchd::api::batch_v1
