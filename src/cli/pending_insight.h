// Why a pending workload waits and when it may start, for `batchctl list
// workloads` / `batchctl describe workload`: its position (Kueue's
// visibility API), the quota it is short of (parsed from the core's
// QuotaReserved=False message, which names the resource, the flavor and how
// much more is needed), and an estimated start from the running workloads'
// expected ends. Pure functions; the runner fetches the objects.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "api/field_error.h"  // api::Json

namespace batchd::cli {

// "insufficient unused quota for RES in flavor FLAVOR, AMOUNT more needed"
// (the admission core's message for a workload that waits for quota).
struct QuotaShortfall {
  std::string resource, flavor;
  int64_t more_needed_milli = 0;
};
std::optional<QuotaShortfall> ParseShortfall(const std::string& message);

// A pending workload's request of `resource` (milli-units): per pod the sum
// over containers (limits stand in for missing requests), times the count,
// over every pod set.
int64_t RequestOf(const api::Json& workload, const std::string& resource);

// The time the workloads running in the ClusterQueue (`admitted`: its
// admitted, unfinished Workloads) release `need_milli` of the shortfall's
// resource in its flavor, counting only those whose end is known:
// Admitted's lastTransitionTime + spec.maximumExecutionTimeSeconds -
// status.accumulatedPastExecutionTimeSeconds. nullopt when the known ends do
// not release enough. An estimate: borrowing from the cohort, preemption
// and workloads arriving later are not modelled.
std::optional<absl::Time> EstimateStart(const std::vector<api::Json>& admitted,
                                        const QuotaShortfall& shortfall, int64_t need_milli,
                                        absl::Time now);

}  // namespace batchd::cli
