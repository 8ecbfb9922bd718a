// Kubernetes API errors as absl::Status. Each error carries, as a payload, the
// `reason` and `details` of the Kubernetes `Status` object it becomes; the
// HTTP code is chosen in exactly one place (apiserver/status_mapping.cc) from
// the status code and that reason. Messages follow Kubernetes' wording, e.g.
//   jobs.batch "x" not found
//   Operation cannot be fulfilled on jobs.batch "x": the object has been modified; ...
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "api/field_error.h"
#include "api/kind.h"

namespace batchd::registry {

inline constexpr char kStatusPayloadUrl[] = "batchd.io/k8s-status";

// An error with an explicit Kubernetes reason and details object.
absl::Status ApiError(absl::StatusCode code, std::string_view reason, std::string message,
                      api::Json details = api::Json::object());

// The reason and details attached by ApiError, if any.
struct ErrorPayload {
  std::string reason;
  api::Json details;
};
ErrorPayload GetPayload(const absl::Status& s);
// Whether `s` carries the Kubernetes reason `reason` ("AlreadyExists", "Conflict", ...).
bool IsReason(const absl::Status& s, std::string_view reason);
// Whether `s` says the object is not there: an absl NotFound, or the reason NotFound.
bool IsGone(const absl::Status& s);

absl::Status NotFound(const api::KindDef& k, std::string_view name);
absl::Status AlreadyExists(const api::KindDef& k, std::string_view name);
absl::Status Conflict(const api::KindDef& k, std::string_view name, std::string_view why);
absl::Status StaleConflict(const api::KindDef& k, std::string_view name);
absl::Status Invalid(const api::KindDef& k, std::string_view name, const api::ErrorList& errs);
absl::Status BadRequest(std::string message);
absl::Status Forbidden(const api::KindDef& k, std::string_view name, std::string message);
absl::Status MethodNotAllowed(std::string message);
absl::Status Expired(std::string message);
absl::Status UnsupportedMediaType(std::string message);
absl::Status Internal(std::string message);

// A store failure that is not the request's fault: 503 ServiceUnavailable
// (storage out of reach, store::IsUnreachable, or this replica fenced off:
// FailedPrecondition), 504 Timeout (deadline), else 500 InternalError.
absl::Status StoreUnavailable(const absl::Status& store_status);

// The API error for a failed conditional store write (Put or Delete at a
// revision) of object `name`: the store's Aborted (the revision moved) is a
// stale-object Conflict, NotFound is NotFound, anything else as
// StoreUnavailable.
absl::Status StoreWriteError(const api::KindDef& k, std::string_view name,
                             const absl::Status& store_status);

}  // namespace batchd::registry
