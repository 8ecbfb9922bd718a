// Decoding of Kubernetes protobuf request bodies
// (`Content-Type: application/vnd.kubernetes.protobuf`), as kubectl's typed
// commands send them (`kubectl create namespace|job|cronjob|service`, ...), into the
// JSON form of the same object: the JSON that `encoding/json` would produce
// from the Go struct the body decodes to (omitempty applied, pointer fields
// emitted when set even if zero, metav1.Time as RFC 3339, Quantity canonical,
// IntOrString as number or string, ...).
//
// Pure functions: thread-safe, no global mutable state. They never crash or
// throw on any input (fuzzed): every length is bounds-checked, nesting is
// capped at `kMaxProtobufDepth`, and output size at `kMaxProtobufNodes`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/field_error.h"

namespace batchd::api::protobuf {

inline constexpr std::string_view kProtobufMediaType = "application/vnd.kubernetes.protobuf";
// Deepest message nesting accepted (Kubernetes objects need under 20).
inline constexpr int kMaxProtobufDepth = 100;
// Most JSON values one body may decode to (amplification guard: a 2-byte
// empty message can stand for an object with several default fields).
inline constexpr size_t kMaxProtobufNodes = 2'000'000;
// Largest body accepted.
inline constexpr size_t kMaxProtobufBodyBytes = 64u << 20;

// Decodes `k8s\0` + runtime.Unknown{typeMeta, raw, contentEncoding,
// contentType} whose `raw` is the protobuf encoding of the object named by
// typeMeta (apiVersion/kind), e.g. v1 Namespace/Pod/Node/Event/Binding/Service/Secret/ConfigMap,
// batch/v1 Job/CronJob, coordination.k8s.io/v1 Lease, policy/v1 Eviction,
// DeleteOptions. The result carries `apiVersion` and `kind`.
//
// Field numbers the tables do not know are skipped (protobuf semantics);
// when `unknown_fields` is non-null each is appended as a path such as
// `spec.template.spec.containers[0].#99`.
//
// Errors: Unimplemented for a kind without tables, a content encoding, or a
// non-protobuf content type (the server answers 415 as before);
// InvalidArgument for malformed bytes (bad magic, truncated varint or length,
// wrong wire type for a known field, invalid Quantity/IntOrString, too deep,
// too large).
absl::StatusOr<Json> DecodeKubernetesProtobuf(std::string_view body,
                                              std::vector<std::string>* unknown_fields = nullptr);

// True for `application/vnd.kubernetes.protobuf` with or without parameters
// (case-insensitive).
bool IsProtobufContentType(std::string_view content_type);

}  // namespace batchd::api::protobuf
