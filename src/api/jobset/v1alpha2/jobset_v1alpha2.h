// jobset.x-k8s.io/v1alpha2 JobSet served as upstream JobSet's CRD and
// webhooks serve it (shared/reference/batch-apis.md §3): the schema
// (field names exactly upstream's), the webhook and CRD defaults, create
// validation with field paths and upstream's messages (the replicated job
// templates are validated as batch/v1 JobTemplateSpecs too), update
// validation (the spec is immutable but for suspend, ttlSecondsAfterFinished
// and — while the JobSet is or becomes suspended — the pod templates'
// labels, annotations, nodeSelector, tolerations and schedulingGates), status
// validation and `kubectl get` columns.
//
// Accept only what is honoured: the fields batchd does not implement yet are
// refused with Forbidden and the field path, all in `ValidateUnsupported`
// (unsupported.cc), so each refusal is lifted in one place.
//
// Stateless and thread-safe; the schema is built once.
#pragma once

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "api/field_error.h"
#include "api/jobset/v1alpha2/constants.h"
#include "api/kind.h"
#include "api/schema.h"

namespace batchd::api::jobset_v1alpha2 {

// The whole object (OpenAPI component io.x-k8s.jobset.v1alpha2.JobSet).
SchemaPtr JobSetSchema();

// The webhook's Default plus the CRD defaults: successPolicy {operator: All},
// startupPolicy {startupPolicyOrder: AnyOrder}, network.enableDNSHostnames
// and publishNotReadyAddresses true, failure policy rule names
// failurePolicyRule<N> and restartStrategy Recreate, and per replicated job
// groupName "default", replicas 1, completionMode Indexed and pod
// restartPolicy OnFailure when unset. Pod templates are stored as written
// otherwise (the child Jobs get the Job defaults when they are created).
void SetDefaultsJobSet(Json& js);

// ValidateCreate of upstream's webhook, the CRD's structural and CEL rules,
// each template as a batch/v1 JobTemplateSpec, and `ValidateUnsupported`.
ErrorList ValidateJobSet(const Json& js);
// ValidateUpdate: immutability (with the suspended-template exception).
ErrorList ValidateJobSetUpdate(const Json& js, const Json& old);
// Updates of /status: counters non-negative, terminalState and conditions
// well-formed, replicatedJobsStatus names unique.
ErrorList ValidateJobSetStatusUpdate(const Json& js, const Json& old);
// Fields and values batchd does not implement yet: Forbidden with their
// field paths (part of ValidateJobSet; exposed to test it alone).
ErrorList ValidateUnsupported(const Json& js);

// `kubectl get jobsets`: TerminalState, Restarts, Completed, Suspended, Age
// (upstream's additionalPrinterColumns).
std::vector<TableColumn> JobSetColumns();
std::vector<Json> JobSetRowCells(const Json& js, absl::Time now);

// The KindDef RegisterKinds adds (exposed for tests and tools).
KindDef JobSetKind();
void RegisterKinds(Scheme& scheme);

}  // namespace batchd::api::jobset_v1alpha2
