// batchd's stand-in for a PersistentVolume's reclaim policy Delete: claims
// are node-local directories (docs/api.md "Volumes"), so a controller that
// owns claims (JobSet's volumeClaimPolicies) deletes them through a pod on
// each node. A pod with the annotation `batchd.io/delete-claims: "true"`
// whose containers all succeed gets the directories of its
// persistentVolumeClaim volumes removed by the node agent before the agent
// reports it Succeeded.
//
// Header-only constants.
#pragma once

namespace batchd::api::core_v1 {

inline constexpr char kDeleteClaimsAnnotation[] = "batchd.io/delete-claims";

}  // namespace batchd::api::core_v1
