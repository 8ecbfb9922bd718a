// Hand-written descriptor types for the Kubernetes protobuf wire format: one
// `MessageDesc` per Go API struct, one `FieldDesc` per field, with what the
// decoder needs to produce the object's JSON form (JSON name, wire kind,
// pointer-ness, omitempty, inline embedding). The tables themselves live in
// the generated `tables_*.cc` files.
//
// Thread-safety: immutable constants with static storage; safe from any
// thread. Ownership: nothing is owned; all pointers refer to other constants.
#pragma once

#include <cstddef>
#include <cstdint>

namespace batchd::api::protobuf::internal {

enum class FieldType : uint8_t {
  kString,        // wire 2 -> JSON string
  kBytes,         // wire 2 -> base64 JSON string
  kBool,          // wire 0
  kInt32,         // wire 0, sign-extended
  kInt64,         // wire 0
  kMessage,       // wire 2, nested MessageDesc
  kMap,           // repeated entry {1: key, 2: value}; `message` is the entry
  kTime,          // metav1.Time {1: seconds, 2: nanos} -> RFC 3339 (seconds)
  kMicroTime,     // metav1.MicroTime -> RFC 3339 with microseconds
  kQuantity,      // resource.Quantity {1: string} -> canonical string
  kIntOrString,   // intstr.IntOrString {1: type, 2: intVal, 3: strVal}
  kDuration,      // metav1.Duration {1: nanoseconds} -> Go duration string
  kRawExtension,  // runtime.RawExtension {1: raw JSON} -> embedded JSON
  kFieldsV1,      // metav1.FieldsV1 {1: raw JSON} -> embedded JSON
};

enum FieldFlag : uint8_t {
  kRepeated = 1,  // a list; emitted when it has at least one element
  kPointer = 2,   // a Go pointer: emitted whenever present, even if zero
  kKeepZero = 4,  // Go JSON tag without omitempty: zero values are emitted
  kInline = 8,    // `json:",inline"` embedded struct: fields merge into parent
};

struct MessageDesc;

struct FieldDesc {
  uint32_t number;
  const char* json_name;
  FieldType type;
  uint8_t flags;               // FieldFlag bits
  const MessageDesc* message;  // kMessage and kMap only
};

struct MessageDesc {
  const char* name;         // Go type name, for error messages
  const FieldDesc* fields;  // sorted by number
  size_t num_fields;
};

struct KindDesc {
  const char* api_version;
  const char* kind;
  const MessageDesc* message;
};

// The kinds a request body may carry (apiVersion/kind -> top-level message).
extern const KindDesc kKinds[];
extern const size_t kNumKinds;

}  // namespace batchd::api::protobuf::internal
