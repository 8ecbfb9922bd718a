// Schema operations on decoded JSON objects: type checking, pruning of
// undeclared fields and canonicalisation (quantities, times), as Kubernetes'
// decoder does for typed objects. Stateless and thread-safe; never throws and
// never crashes on malformed input (recursion is bounded by the schema depth).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/field_error.h"
#include "api/schema.h"

namespace batchd::api::schema_ops {

// Walks `obj` along `schema`:
//  - checks JSON types (integers integral and in range, strings, booleans,
//    int-or-string, quantities, RFC 3339 times); a mismatch returns
//    InvalidArgument shaped like Go's decode error, e.g.
//    `json: cannot unmarshal string into Go struct field JobSpec.spec.parallelism of type int32`;
//  - drops null-valued object fields (null means unset) and turns null
//    array/map elements into the element type's zero value;
//  - removes properties the schema does not declare (unless the object
//    preserves unknown fields or is kAny), appending their paths
//    (`spec.template.spec.containers[0].bogus`) to `unknown_fields` when non-null;
//  - rewrites quantities to canonical form ("1000m" -> "1"), except those
//    whose schema has format kQuantityAsSentFormat, and times to
//    UTC (`2024-01-02T03:04:05Z`; MicroTime keeps microseconds).
// `obj` may be partially rewritten when an error is returned.
absl::Status Normalize(const Schema& schema, Json& obj, std::vector<std::string>* unknown_fields);

// Normalize, but of the listed top-level members of `obj` only (an object
// schema): the others are neither checked nor pruned. Paths and errors are
// Normalize's. For a status-subresource write, which reads only the body's
// metadata and status.
absl::Status NormalizeMembers(const Schema& schema, Json& obj,
                              const std::vector<std::string_view>& members,
                              std::vector<std::string>* unknown_fields);

// The format of a kQuantity schema whose values are validated but stored as
// sent (a JSON number stays a number, "1000m" stays "1000m"), as a custom
// resource's int-or-string quantity is in Kubernetes: so `kubectl apply` of
// an unchanged Kueue manifest finds nothing to change.
inline constexpr char kQuantityAsSentFormat[] = "quantity-as-sent";

// The ref of metav1.MicroTime; a kTime schema with this ref keeps microseconds.
inline constexpr char kMicroTimeRef[] = "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime";

// Canonical string of a quantity given as a JSON string or number, or
// InvalidArgument with Kubernetes' message.
absl::StatusOr<std::string> CanonicalQuantity(const Json& v);

}  // namespace batchd::api::schema_ops
