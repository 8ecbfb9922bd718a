// UpdateLoop: the one conflict-retry loop of read-modify-write clients, as
// client-go's retry.RetryOnConflict around Get / mutate / Update. It starts
// from `start` (an informer's copy, say) or a fresh Get, calls `mutate` (which
// returns false when nothing needs to change), and PUTs the result with its
// resourceVersion and uid as preconditions; on a Conflict it re-reads and
// starts over, at most `attempts` times. An object that is gone, or replaced
// by a namesake (another uid than `uid`, when given), ends the loop: there is
// nothing left to change.
//
// Thread-safety: stateless; `client` is used from the calling thread.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "api/kind.h"
#include "client/client.h"

namespace batchd::client {

enum class UpdateOutcome {
  kUpdated,    // written
  kUnchanged,  // `mutate` found nothing to change
  kGone,       // not found, or replaced by an object with another uid
};

struct UpdateLoopOptions {
  int attempts = 5;
  bool status = false;  // PUT the /status subresource
};

absl::StatusOr<UpdateOutcome> UpdateLoop(Client& client, const api::KindDef& k,
                                         const std::string& ns, const std::string& name,
                                         const std::string& uid, std::optional<api::Json> start,
                                         const std::function<bool(api::Json&)>& mutate,
                                         UpdateLoopOptions opts = {});

}  // namespace batchd::client
