// OpenAPI v3 documents generated from the served kinds' schemas, as kubectl
// 1.32 reads them: `/openapi/v3` (the index) and `/openapi/v3/<gv path>` (one
// document per group-version) for `kubectl explain`, and the `fieldValidation`
// query-parameter check that decides whether kubectl asks the server to
// validate unknown fields. Pure functions of the Scheme; thread-safe. Output
// is deterministic, so callers may cache it per Scheme (recommended: the
// documents are large).
#pragma once

#include <string>
#include <string_view>

#include "api/field_error.h"
#include "api/kind.h"

namespace batchd::api::schema_ops {

// {"paths": {"api/v1": {"serverRelativeURL": "/openapi/v3/api/v1?hash=<HEX>"},
//            "apis/batch/v1": {...}, ...}}; the hash is a digest of the document.
Json OpenApiV3Index(const Scheme& scheme);

// The OpenAPI 3.0 document for one group-version ("" for core), with
// components.schemas built from the kinds' schemas and paths for every
// resource and subresource; an empty document (no paths) when the scheme
// serves nothing in that group-version.
Json OpenApiV3Document(const Scheme& scheme, std::string_view group, std::string_view version);

// "api/v1" or "apis/<group>/<version>": the key of a group-version in the index.
std::string GroupVersionPath(std::string_view group, std::string_view version);

// Stable hex digest of a document, as used in the index's `hash`.
std::string DocumentHash(const Json& doc);

}  // namespace batchd::api::schema_ops
