// JobPod: one pod of a Job as a sync reads it, the informer's object with its
// typed view and completion index, parsed once per sync. The view points into
// the object, which the sync keeps alive (SyncCtx::pod_refs).
//
// Thread-safety: immutable after Parse.
#pragma once

#include "api/core/v1/pod_view.h"
#include "controllers/job/indexes.h"

namespace batchd::controllers::job {

struct JobPod {
  const api::Json* object = nullptr;
  api::core_v1::PodView view;
  int index = kUnknownIndex;  // CompletionIndex(view.meta).

  // REQUIRES: `pod` outlives the JobPod.
  static JobPod Parse(const api::Json& pod) {
    JobPod p{&pod, api::core_v1::PodView::Parse(pod)};
    p.index = CompletionIndex(p.view.meta);
    return p;
  }
};

}  // namespace batchd::controllers::job
