// `batchd server --feature-gates`: Kubernetes' component flag syntax,
// "Name=true,Other=false", for the Kubernetes feature gates batchd
// implements. Unknown names and values that are not booleans are refused,
// as kube-apiserver refuses them.
//
//   WorkloadWithJob  default true (Kubernetes 1.36: alpha, default false).
//     An Indexed Job with parallelism == completions > 1 gets a gang
//     Workload and PodGroup and its pods bind all at once or not at all;
//     such Jobs' parallelism cannot change. batchd turns it on because gang
//     placement of distributed jobs is what it is for; `WorkloadWithJob=false`
//     gives Kubernetes' default, pod-by-pod scheduling.
//
// Thread-safety: pure functions.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"

namespace batchd::cmd {

struct FeatureGates {
  bool workload_with_job = true;
};

// Parses the flag's value ("" keeps every default). Errors read like
// kube-apiserver's: "unrecognized feature gate: Foo", "invalid value of
// WorkloadWithJob=maybe, err: ...".
absl::StatusOr<FeatureGates> ParseFeatureGates(std::string_view flag);

}  // namespace batchd::cmd
