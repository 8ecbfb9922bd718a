// Codec: request bodies (JSON and YAML) to `api::Json`, and `api::Json` back to
// JSON or Kubernetes-style YAML text.
//
// Every function here is a pure function of its arguments: thread-safe, no
// global state, and it never throws or crashes on any input (the decoders are
// fuzzed). Hostile input is bounded: nesting deeper than `kMaxNestingDepth`
// and YAML alias expansion beyond `kMaxYamlAliasNodes` are rejected with
// `InvalidArgument`.
//
// YAML follows sigs.k8s.io/yaml (go-yaml v2) as the Kubernetes API server uses
// it when it has no Go type to guide it: YAML 1.1 plain scalars, so `yes`,
// `on`, `y` become `true` and `no`, `off`, `n` become `false`; quoted scalars
// always stay strings; timestamps stay strings; keys are strings (a bool/int
// key becomes "true"/"123"); `<<` merge keys and anchors/aliases are resolved.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/field_error.h"

namespace batchd::api {

// Deepest object/array nesting any decoder accepts (Kubernetes objects need
// fewer than 30 levels). Below yaml-cpp's own limit (~498 levels), so every
// value `ParseJson` accepts also survives `ParseYaml(ToYaml(v))`.
inline constexpr int kMaxNestingDepth = 400;
// Most values one YAML document may gain through alias expansion
// ("billion laughs" guard); anchored values count towards it too.
inline constexpr size_t kMaxYamlAliasNodes = 1'000'000;

// Decodes one JSON value. Duplicate object keys keep the last value (as Go's
// decoder does) and, when `duplicate_fields` is non-null, each is appended
// as a field path such as `metadata.name` or `spec.containers[0].image`.
// Errors: `InvalidArgument` with the byte position for malformed input,
// non-finite numbers, or nesting deeper than `kMaxNestingDepth`.
absl::StatusOr<Json> ParseJson(std::string_view body,
                               std::vector<std::string>* duplicate_fields = nullptr);

// Decodes exactly one YAML document (an empty body decodes to `null`).
// Several documents are an `InvalidArgument` error; see `ParseYamlDocuments`.
// Duplicate keys are reported as in `ParseJson` (the last one wins).
absl::StatusOr<Json> ParseYaml(std::string_view body,
                               std::vector<std::string>* duplicate_fields = nullptr);

// Decodes a `---`-separated stream. Empty documents (only comments, or a
// bare `null`) are skipped, as kubectl does.
absl::StatusOr<std::vector<Json>> ParseYamlDocuments(std::string_view body);

// Decodes a request body by its Content-Type (parameters such as
// `; charset=utf-8` are ignored, matching is case-insensitive):
//   application/json, any `*+json` (merge-patch+json, json-patch+json,
//   strategic-merge-patch+json), or an empty type  -> JSON;
//   application/yaml, text/yaml, any `*+yaml` (apply-patch+yaml) -> YAML.
// Any other media type (e.g. application/vnd.kubernetes.protobuf) returns
// `absl::StatusCode::kUnimplemented`: the server answers it with
// 415 Unsupported Media Type.
absl::StatusOr<Json> ParseBody(std::string_view body, std::string_view content_type,
                               std::vector<std::string>* duplicate_fields = nullptr);

// JSON text. Compact (no spaces) unless `pretty`, which indents by 2 spaces.
// Invalid UTF-8 in strings is replaced by U+FFFD rather than failing.
std::string ToJson(const Json& value, bool pretty = false);

// Exactly `value.dump()` (compact; UTF-8 kept; like dump(), it throws on
// invalid UTF-8, which no decoder here lets through), a third less CPU:
// the registry serialises every write with it.
std::string DumpCompact(const Json& value);

// Kubernetes-style YAML (as `kubectl get -o yaml` prints it): block style,
// 2-space indent, sequences not indented under their key, keys in the
// Json's order, strings quoted whenever they would otherwise read back as
// something else ("true", "123", "", "null", ": ", leading spaces, ...),
// multi-line strings as literal blocks. `ParseYaml(ToYaml(v)) == v`.
// REQUIRES: `value` nests no deeper than `kMaxNestingDepth` (true of every
// value the decoders above produce).
std::string ToYaml(const Json& value);

}  // namespace batchd::api
