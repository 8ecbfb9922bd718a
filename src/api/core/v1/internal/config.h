// Internal to api/core/v1: the Secret and ConfigMap kinds (schema, defaults,
// validation with Kubernetes' field paths and messages, `kubectl get`
// tables), split out for unit tests. Stateless and thread-safe.
//
// Secret values never appear in a message: where Kubernetes would echo a
// value, batchd (as Kubernetes does for secrets) writes
// "<secret contents redacted>".
#pragma once

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "api/field_error.h"
#include "api/kind.h"

namespace batchd::api::core_v1::internal {

// The largest data (+ binaryData) of a Secret or ConfigMap: 1 MiB.
inline constexpr size_t kMaxConfigDataBytes = 1024 * 1024;

// Secret: type defaults to Opaque; stringData is merged into data (base64,
// stringData wins) and dropped, on every write, as Kubernetes does.
void SetDefaultsSecret(Json& secret);
ErrorList ValidateSecret(const Json& secret);
ErrorList ValidateSecretUpdate(const Json& secret, const Json& old);
ErrorList ValidateConfigMap(const Json& cm);
ErrorList ValidateConfigMapUpdate(const Json& cm, const Json& old);
// IsConfigMapKey: the messages for an invalid data key ("" when valid).
std::vector<std::string> IsConfigMapKey(const std::string& key);

KindDef SecretKind();
KindDef ConfigMapKind();

}  // namespace batchd::api::core_v1::internal
