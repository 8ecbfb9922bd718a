// Kubernetes' DefaultTolerationSeconds admission plugin: every pod created
// without a toleration for `node.kubernetes.io/not-ready:NoExecute` (or
// `unreachable`) gets one with `tolerationSeconds` (300 s by default,
// kube-apiserver's --default-not-ready-toleration-seconds /
// --default-unreachable-toleration-seconds), so its node may be unreachable
// that long before the node lifecycle controller evicts it. Create only;
// updates are not touched (tolerations are immutable but for additions).
//
// Thread-safety: the registered hook is stateless.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "api/field_error.h"

namespace batchd::registry {
class Registry;
}  // namespace batchd::registry

namespace batchd::controllers {

struct DefaultTolerationOptions {
  int64_t not_ready_seconds = 300;
  int64_t unreachable_seconds = 300;
};

// Adds the missing default tolerations to a pod's spec; true when it added any.
bool AddDefaultTolerations(api::Json& pod, const DefaultTolerationOptions& opts);

// Registers the hook for pods.
absl::Status AddDefaultTolerationSeconds(registry::Registry& registry,
                                         DefaultTolerationOptions opts = {});

}  // namespace batchd::controllers
