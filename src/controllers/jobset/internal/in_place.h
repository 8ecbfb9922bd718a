// Internal to controllers/jobset: in-place restart (failurePolicy
// restartStrategy InPlaceRestart) as a pure decision over the pods of the
// JobSet's current attempt, in the spirit of upstream's protocol
// (in_place_restart.go and its agent) with batchd's node agent in the
// agent's role (api/core/v1/restart_generation.h):
//
//  - every pod carries the generation its containers must run
//    (batchd.io/restart-generation, mirrored in
//    jobset.sigs.k8s.io/in-place-restart-attempt) and reports the one they
//    run in its batchd.io/RestartGeneration condition;
//  - a container failing in the current generation G starts generation G+1:
//    every pod is asked for it with a hold (its containers stop and wait),
//    status.previousInPlaceRestartAttempt = G; when G+1 plus the restarts
//    that count towards maxRestarts would pass maxRestarts the JobSet fails
//    (ReachedMaxRestarts) instead;
//  - the barrier: once every pod of the JobSet (all replicas × parallelism;
//    succeeded pods count) has stopped for G+1, the holds are removed and
//    all start; once all run it, status.currentInPlaceRestartAttempt = G+1;
//  - a pod that is behind (a replacement the Job created from an older
//    template) is brought to G, held, and released with the others.
// Everything is derived from the pods, so a controller restarted at any
// point finishes the step it was in without a second count.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/field_error.h"

namespace batchd::controllers::jobset::internal {

struct InPlacePod {
  std::string ns, name;
  bool succeeded = false;  // Ended successfully: counts as present, never restarted.
  int64_t desired = -1;    // batchd.io/restart-generation (-1: none).
  bool hold = false;       // batchd.io/restart-hold.
  int64_t reported = -1;   // The generation of its batchd.io/RestartGeneration condition.
  std::string state;       // That condition's reason ("" when there is none).
  std::string message;     // And its message.
};

// Reads a live pod of the JobSet.
InPlacePod ParseInPlacePod(const api::Json& pod);

struct InPlacePatch {
  std::string ns, name;
  int64_t generation = 0;
  bool hold = false;
};

struct InPlaceDecision {
  bool fail = false;  // ReachedMaxRestarts.
  std::vector<InPlacePatch> patches;
  std::optional<int32_t> current, previous;  // Status to write (nullopt: as it is).
  // When a new generation starts: why (the failed pod's condition message).
  std::string restart_message;
  int64_t started_generation = -1;
};

// REQUIRES: `pods` are the pods of the JobSet's current attempt that are not
// being deleted and did not fail.
InPlaceDecision DecideInPlace(const std::vector<InPlacePod>& pods, int64_t total_pods,
                              int32_t restarts_count_towards_max, int32_t max_restarts,
                              std::optional<int32_t> current);

// The merge patch of a pod's annotations for `p`.
api::Json InPlacePatchBody(const InPlacePatch& p);

}  // namespace batchd::controllers::jobset::internal
