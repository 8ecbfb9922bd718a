#include "controllers/admissioncheck/controllers.h"

#include <memory>

#include "api/kueue/kueue.h"
#include "controllers/admissioncheck/internal/controllers_impl.h"

namespace batchd::controllers::admissioncheck {

void AddAdmissionCheckControllers(reconcile::ControllerContext& ctx,
                                  AdmissionCheckOptions options) {
  auto checks = std::make_shared<internal::WorkloadChecks>(ctx);
  checks->Register();
  std::shared_ptr<Provisioner> p =
      options.provisioner ? options.provisioner : MakeNodeCapacityProvisioner(ctx);
  auto prov = std::make_shared<internal::ProvisioningChecks>(ctx, std::move(p));
  prov->Register();
  auto fin = std::make_shared<internal::ResourceInUse>(ctx);
  fin->Register();
  // The informers own their handlers: this one keeps the reconcilers alive
  // as long as they (and the manager's controllers) are.
  ctx.informers
      .For(api::kueue::kGroup, api::kueue::kStorageVersion, api::kueue::kWorkloads)
      .AddHandlers({[checks, prov, fin](const client::ObjectRef&) {}, {}, {}});
}

}  // namespace batchd::controllers::admissioncheck
