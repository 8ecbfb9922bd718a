// The one place where an absl::Status becomes an HTTP code and a Kubernetes
// `Status` body (STYLE.md practice 4). Errors built by registry/errors.h
// carry their Kubernetes reason; others are mapped by status code.
#pragma once

#include "absl/status/status.h"
#include "api/field_error.h"

namespace batchd::apiserver {

int HttpCodeFor(const absl::Status& s);
api::Json StatusBodyFor(const absl::Status& s);
// A `Status` with status Success, as DELETE returns.
api::Json SuccessStatus(api::Json details);

}  // namespace batchd::apiserver
