// Content negotiation and request-option parsing shared by the handlers.
#pragma once

#include <string>

#include "apiserver/http.h"
#include "api/field_error.h"
#include "absl/status/statusor.h"
#include "registry/registry.h"

namespace batchd::apiserver::internal {

enum class Output { kJson, kYaml, kTable };
Output NegotiateOutput(const HttpRequest& req);

// Decodes a JSON or YAML request body; UnsupportedMediaType for other types.
absl::StatusOr<api::Json> DecodeBody(const HttpRequest& req, std::vector<std::string>* dups);

// dryRun, fieldValidation, fieldManager.
absl::StatusOr<registry::WriteOptions> ParseWriteOptions(const HttpRequest& req);
absl::StatusOr<registry::ListOptions> ParseListOptions(const HttpRequest& req);
absl::StatusOr<registry::DeleteOptions> ParseDeleteOptions(const HttpRequest& req);

}  // namespace batchd::apiserver::internal
