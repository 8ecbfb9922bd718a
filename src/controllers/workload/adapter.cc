// AddIntegration: wires one adapter's generic reconciler into a Manager.
#include "controllers/workload/adapter.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/str_cat.h"
#include "api/kueue/kueue.h"
#include "controllers/workload/internal/reconciler.h"

namespace batchd::controllers::workload {

using reconcile::Controller;
using reconcile::ControllerContext;

absl::Status AddIntegration(ControllerContext& ctx, std::shared_ptr<const JobAdapter> adapter,
                            const IntegrationOptions& options) {
  const api::Scheme& scheme = ctx.client.scheme();
  const GroupVersionKind gvk = adapter->Gvk();
  const api::KindDef* job_kind = scheme.ByResource(gvk.group, gvk.version, gvk.plural);
  const api::KindDef* wl_kind =
      scheme.ByResource(api::kueue::kGroup, api::kueue::kStorageVersion, api::kueue::kWorkloads);
  const api::KindDef* rf_kind = scheme.ByResource(api::kueue::kGroup, api::kueue::kStorageVersion,
                                                  api::kueue::kResourceFlavors);
  if (!job_kind || !wl_kind || !rf_kind) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot queue ", gvk.kind, ": the scheme lacks it or Kueue's v1beta2 kinds"));
  }
  std::string kind = gvk.kind;
  std::transform(kind.begin(), kind.end(), kind.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  // The informer handlers own the reconciler (shared_ptr captures), so it
  // lives as long as the manager's informers, which outlive its controllers.
  auto reconciler = std::make_shared<internal::IntegrationReconciler>(
      ctx, std::move(adapter), options, *job_kind, *wl_kind, *rf_kind);
  Controller& c = ctx.manager.AddController(std::make_unique<Controller>(
      kind + "-workload-integration", *reconciler, ctx.clock));
  reconciler->Wire(c);
  ctx.informers.For(*wl_kind).AddHandlers(
      {.on_add = [reconciler](const client::ObjectRef&) { (void)reconciler; }});
  return absl::OkStatus();
}

}  // namespace batchd::controllers::workload
