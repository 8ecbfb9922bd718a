// batchd's controller-driven container restarts: the contract between a
// controller (JobSet's in-place restart) and the node agent, in pod
// annotations the controller writes and a pod condition the agent reports.
//
//  - `batchd.io/restart-generation: "<n>"` (n >= 0): the pod's containers run
//    as generation n. Present when the pod starts, it also means a failed
//    container is not restarted by the restart policy and does not end the
//    pod: the pod keeps running until the annotation names a newer
//    generation, for which the agent stops every container and runs them all
//    again (init containers first) on the same node, in the same sandbox.
//  - `batchd.io/restart-hold: "true"`: the containers of the generation do
//    not start (a barrier) until the annotation is removed.
//  - The agent's condition `batchd.io/RestartGeneration`, message
//    "generation <n>": status True with reason Running while generation n
//    runs; False with reason Restarting (the previous containers stop), Held
//    (stopped, waiting for the release) or ContainerFailed (a container
//    failed in generation n; the message names it).
//
// Header-only constants.
#pragma once

namespace batchd::api::core_v1 {

inline constexpr char kRestartGenerationAnnotation[] = "batchd.io/restart-generation";
inline constexpr char kRestartHoldAnnotation[] = "batchd.io/restart-hold";
inline constexpr char kRestartGenerationCondition[] = "batchd.io/RestartGeneration";
inline constexpr char kGenerationRunning[] = "Running";
inline constexpr char kGenerationRestarting[] = "Restarting";
inline constexpr char kGenerationHeld[] = "Held";
inline constexpr char kGenerationContainerFailed[] = "ContainerFailed";
inline constexpr char kGenerationMessagePrefix[] = "generation ";

}  // namespace batchd::api::core_v1
