// Internal to agent/sim: builders of the pod and node status a simulated
// kubelet reports. Pure functions over JSON; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "api/field_error.h"

namespace batchd::agent::sim::internal {

// A deterministic node address derived from its name (also its pods' IP:
// pods share their node's network).
std::string NodeIp(const std::string& node_name);

// Sets condition `type` in `conds` (an array), keeping lastTransitionTime when
// the status does not change.
void SetCondition(api::Json& conds, const std::string& type, const std::string& status,
                  const std::string& reason, const std::string& message, absl::Time now);

// Kubelet-style backoff before restart number `restarts` (1-based): 10s, 20s, ... 5m.
absl::Duration CrashLoopBackOff(int restarts);

// The pod builders below read `pod`'s spec and metadata and turn `status`
// (a copy of the pod's status, or null) into the status to write, so that a
// writer copies the status only, not the whole pod.
//
// Status of a pod whose containers (re)started at `started`.
void SetRunning(const api::Json& pod, api::Json& status, absl::Time started, int restarts,
                absl::Time now);
// Status of a pod whose containers exited with `exit_code` and will restart
// after `backoff`.
void SetBackOff(const api::Json& pod, api::Json& status, int exit_code, absl::Time started,
                int restarts, absl::Duration backoff, absl::Time now);
// Terminal status: Succeeded when `exit_code` is 0, else Failed.
void SetTerminated(const api::Json& pod, api::Json& status, int exit_code, absl::Time started,
                   absl::Time now);

// The status a simulated node reports; returns true when `node` changed.
bool SetNodeReady(api::Json& node, absl::Time now);

}  // namespace batchd::agent::sim::internal
