#include <algorithm>
#include <memory>

#include "api/kueue/kueue.h"
#include "controllers/multikueue/internal/multikueue_impl.h"
#include "controllers/multikueue/multikueue.h"

namespace batchd::controllers::multikueue {

void AddMultiKueueControllers(reconcile::ControllerContext& ctx, MultiKueueOptions options) {
  // A lost worker is noticed within a third of workerLostTimeout.
  if (options.worker_lost_timeout > absl::ZeroDuration() &&
      options.worker_lost_timeout / 3 < options.probe_interval) {
    options.probe_interval = std::max(absl::Seconds(1), options.worker_lost_timeout / 3);
  }
  auto workers = std::make_shared<internal::Workers>();
  auto dispatch = std::make_shared<internal::DispatchReconciler>(ctx, options, workers);
  // The cluster reconciler enqueues workloads into the dispatch controller.
  auto slot = std::make_shared<reconcile::Controller*>(nullptr);
  auto clusters =
      std::make_shared<internal::ClusterReconciler>(ctx, options, workers, slot.get());
  clusters->Register();
  *slot = &dispatch->Register();
  // The informers own their handlers: this one keeps the reconcilers alive
  // as long as they (and the manager's controllers) are.
  ctx.informers
      .For(api::kueue::kGroup, api::kueue::kStorageVersion, api::kueue::kMultiKueueClusters)
      .AddHandlers({[dispatch, clusters, slot](const client::ObjectRef&) {}, {}, {}});
}

}  // namespace batchd::controllers::multikueue
