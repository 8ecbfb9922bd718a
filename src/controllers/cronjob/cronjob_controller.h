// The CronJob controller (batch/v1, Kubernetes' cronjob_controllerv2
// semantics; see shared/reference/batch-apis.md §2): creates a Job named
// `<cronjob>-<minutes since epoch>` for the most recent due schedule time,
// honours suspend, startingDeadlineSeconds and concurrencyPolicy
// (Allow/Forbid/Replace), keeps status.active / lastScheduleTime /
// lastSuccessfulTime, prunes finished Jobs beyond the history limits, and
// requeues itself at the next schedule time + 100ms through the injected
// Clock.
//
// A CronJob without `spec.timeZone` is evaluated in UTC (Kubernetes uses the
// controller manager's local zone, which is UTC in its usual container
// images; batchd fixes it so runs do not depend on the host's TZ).
//
// Ownership: the controller and its reconciler are owned by ctx.manager; the
// function may be called once per manager, before the manager starts.
#pragma once

#include "reconcile/context.h"

namespace batchd::controllers {

void AddCronJobController(reconcile::ControllerContext& ctx);

}  // namespace batchd::controllers
