// Internal to controllers/jobset: volumeClaimPolicies with retentionPolicy
// Delete. Claims are node-local directories (`<claim>-<jobset>` on each node
// that runs a pod mounting one), so the JobSet controller (a) holds the
// JobSet with a finalizer, (b) records in an annotation every node its pods
// were bound to, and (c) once the JobSet is deleted and its pods are gone,
// runs on each recorded node a pod that mounts nothing but names the claims
// and carries `batchd.io/delete-claims`, whose success means the node agent
// removed the directories (api/core/v1/claim_deletion.h); then it removes the
// cleanup pods and the finalizer. Retain claims are never touched.
//
// Thread-safety: pure functions.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "api/field_error.h"
#include "api/jobset/v1alpha2/jobset_view.h"

namespace batchd::controllers::jobset::internal {

// The nodes recorded in the JobSet's annotation.
std::set<std::string> RecordedClaimNodes(const api::Json& jobset);
// The annotation's value for `nodes` (sorted, comma-separated).
std::string ClaimNodesValue(const std::set<std::string>& nodes);

// The claims of `js` deleted with it ("<claim>-<jobset>").
std::vector<std::string> ClaimsToDelete(const api::jobset_v1alpha2::JobSetView& js);

// The cleanup pod for `node` (the `index`-th recorded node), named
// "<jobset>-claims-<index>": bound to the node, tolerating every taint,
// restartPolicy Never, one persistentVolumeClaim volume per claim, labelled
// with the JobSet's uid.
api::Json NewClaimCleanupPod(const api::jobset_v1alpha2::JobSetView& js, const std::string& node,
                             size_t index, const std::vector<std::string>& claims);
std::string ClaimCleanupPodName(std::string_view jobset, size_t index);

}  // namespace batchd::controllers::jobset::internal
