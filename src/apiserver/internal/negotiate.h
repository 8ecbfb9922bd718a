// Content negotiation and request-option parsing shared by the handlers.
#pragma once

#include <string>
#include <string_view>

#include "apiserver/http.h"
#include "api/field_error.h"
#include "absl/status/statusor.h"
#include "registry/registry.h"

namespace batchd::apiserver::internal {

inline constexpr char kJsonType[] = "application/json";

enum class Output { kJson, kYaml, kTable };
Output NegotiateOutput(const HttpRequest& req);

// Decodes a JSON or YAML request body; UnsupportedMediaType for other types.
absl::StatusOr<api::Json> DecodeBody(const HttpRequest& req, std::vector<std::string>* dups);

// kube-apiserver's decoders turn each byte that is not part of valid UTF-8
// into U+FFFD: these do the same for a string and for every string (and
// key) in a decoded body, so validation then judges the replaced text (a
// name becomes invalid: 422) and nothing invalid reaches the store.
bool IsValidUtf8(std::string_view s);
std::string ReplaceInvalidUtf8(std::string_view s);
void ReplaceInvalidUtf8(api::Json& j);

// dryRun, fieldValidation, fieldManager.
absl::StatusOr<registry::WriteOptions> ParseWriteOptions(const HttpRequest& req);
absl::StatusOr<registry::ListOptions> ParseListOptions(const HttpRequest& req);
absl::StatusOr<registry::DeleteOptions> ParseDeleteOptions(const HttpRequest& req);

}  // namespace batchd::apiserver::internal
