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

// The Swagger 2.0 document served at /openapi/v2: `definitions` for every
// served kind (the v3 components of all group-versions, references rewritten
// to #/definitions, each kind tagged x-kubernetes-group-version-kind) and no
// paths (kubectl reads operations from /openapi/v3). kubectl validates
// manifests against it when v3 cannot answer, e.g. for a `kind: List`.
Json OpenApiV2Document(const Scheme& scheme);

// `doc` (as OpenApiV2Document returns it) encoded as gnostic's protobuf
// openapi_v2.Document, the form kubectl requests
// (application/com.github.proto-openapi.spec.v2@v1.0+protobuf).
std::string OpenApiV2Protobuf(const Json& doc);

// Stable hex digest of a document, as used in the index's `hash`.
std::string DocumentHash(const Json& doc);

}  // namespace batchd::api::schema_ops
