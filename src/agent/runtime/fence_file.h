// The pod's fence file, DIR/fence (api/core/v1/node_fence.h): the agent
// writes the pod's fence deadline there after every lease renewal; the shim
// kills the pod once it passes without having been moved on. The content is
// "<CLOCK_BOOTTIME nanoseconds>\n": a clock both processes share that no
// wall-clock step moves. Written to a temporary file and renamed, so a reader
// sees the old deadline or the new one; no file (or one that does not parse)
// means no deadline.
//
// Thread-safety: stateless functions.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace batchd::agent {

inline constexpr char kFenceFileName[] = "fence";

// Sets the deadline of the pod in `pod_dir` to `remaining` from now
// (InfiniteDuration: removes it). NotFound when the pod directory does not
// exist.
absl::Status WriteFenceDeadline(const std::string& pod_dir, absl::Duration remaining);

// The deadline in the frame of a clock that reads `now`: now + (file's
// boot-time deadline - boot time now). InfiniteFuture without one.
absl::Time ReadFenceDeadline(const std::string& pod_dir, absl::Time now);

}  // namespace batchd::agent
