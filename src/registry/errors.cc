#include "registry/errors.h"

#include <set>
#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "store/errors.h"

namespace batchd::registry {

using api::Json;

absl::Status ApiError(absl::StatusCode code, std::string_view reason, std::string message,
                      Json details) {
  absl::Status s(code, absl::string_view(message));
  Json payload = {{"reason", reason}, {"details", std::move(details)}};
  s.SetPayload(kStatusPayloadUrl, absl::Cord(payload.dump()));
  return s;
}

ErrorPayload GetPayload(const absl::Status& s) {
  ErrorPayload out;
  auto p = s.GetPayload(kStatusPayloadUrl);
  if (!p) return out;
  Json j = Json::parse(std::string(*p), nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return out;
  if (j.contains("reason") && j["reason"].is_string()) out.reason = j["reason"];
  if (j.contains("details")) out.details = j["details"];
  return out;
}

bool IsReason(const absl::Status& s, std::string_view reason) {
  return GetPayload(s).reason == reason;
}

bool IsGone(const absl::Status& s) { return absl::IsNotFound(s) || IsReason(s, "NotFound"); }

namespace {
Json Details(const api::KindDef& k, std::string_view name) {
  Json d = {{"name", name}, {"kind", k.plural}};
  if (!k.group.empty()) d["group"] = k.group;
  return d;
}
}  // namespace

absl::Status NotFound(const api::KindDef& k, std::string_view name) {
  return ApiError(absl::StatusCode::kNotFound, "NotFound",
                  absl::StrCat(k.GroupResource(), " \"", std::string(name), "\" not found"), Details(k, name));
}

absl::Status AlreadyExists(const api::KindDef& k, std::string_view name) {
  return ApiError(absl::StatusCode::kAlreadyExists, "AlreadyExists",
                  absl::StrCat(k.GroupResource(), " \"", std::string(name), "\" already exists"),
                  Details(k, name));
}

absl::Status Conflict(const api::KindDef& k, std::string_view name, std::string_view why) {
  return ApiError(absl::StatusCode::kAborted, "Conflict",
                  absl::StrCat("Operation cannot be fulfilled on ", k.GroupResource(), " \"",
                               std::string(name), "\": ", std::string(why)),
                  Details(k, name));
}

absl::Status StaleConflict(const api::KindDef& k, std::string_view name) {
  return Conflict(k, name,
                  "the object has been modified; please apply your changes to the latest "
                  "version and try again");
}

absl::Status Invalid(const api::KindDef& k, std::string_view name,
                     const api::ErrorList& all_errs) {
  // One error reported twice (the registry and a kind both check metadata)
  // is shown once, as apimachinery's aggregate does.
  api::ErrorList errs;
  std::set<std::string> seen;
  for (const auto& e : all_errs) {
    if (seen.insert(e.Message()).second) errs.push_back(e);
  }
  Json details = {{"name", name}, {"kind", k.kind}, {"causes", Json::array()}};
  if (!k.group.empty()) details["group"] = k.group;
  for (const auto& e : errs) {
    details["causes"].push_back(
        {{"reason", e.Reason()}, {"message", e.CauseMessage()}, {"field", e.field}});
  }
  return ApiError(absl::StatusCode::kInvalidArgument, "Invalid",
                  absl::StrCat(k.GroupKind(), " \"", std::string(name), "\" is invalid: ",
                               api::JoinMessages(errs)),
                  std::move(details));
}

absl::Status BadRequest(std::string message) {
  return ApiError(absl::StatusCode::kInvalidArgument, "BadRequest", std::move(message));
}

absl::Status Forbidden(const api::KindDef& k, std::string_view name, std::string message) {
  return ApiError(absl::StatusCode::kPermissionDenied, "Forbidden",
                  absl::StrCat(k.GroupResource(), " \"", std::string(name), "\" is forbidden: ", message),
                  Details(k, name));
}

absl::Status MethodNotAllowed(std::string message) {
  return ApiError(absl::StatusCode::kUnimplemented, "MethodNotAllowed", std::move(message));
}

absl::Status Expired(std::string message) {
  return ApiError(absl::StatusCode::kOutOfRange, "Expired", std::move(message));
}

absl::Status UnsupportedMediaType(std::string message) {
  return ApiError(absl::StatusCode::kUnimplemented, "UnsupportedMediaType", std::move(message));
}

absl::Status Internal(std::string message) {
  return ApiError(absl::StatusCode::kInternal, "InternalError", std::move(message));
}

absl::Status StoreUnavailable(const absl::Status& store_status) {
  switch (store_status.code()) {
    // etcd unreachable, without a leader, or this replica fenced off
    // (docs/ha.md): retry, here later or on another replica.
    case absl::StatusCode::kUnavailable:
      if (!store::IsUnreachable(store_status)) break;  // e.g. SQLite's full disk: 500
      [[fallthrough]];
    case absl::StatusCode::kFailedPrecondition:
      return ApiError(absl::StatusCode::kUnavailable, "ServiceUnavailable",
                      absl::StrCat("storage is unavailable: ", store_status.message()),
                      Json{{"retryAfterSeconds", 1}});
    case absl::StatusCode::kDeadlineExceeded:
      return ApiError(absl::StatusCode::kDeadlineExceeded, "Timeout",
                      absl::StrCat("Timeout: request did not complete within requested timeout - ",
                                   store_status.message()),
                      Json{{"retryAfterSeconds", 1}});
    default:
      break;
  }
  return Internal(std::string(store_status.message()));
}

absl::Status StoreWriteError(const api::KindDef& k, std::string_view name,
                             const absl::Status& store_status) {
  switch (store_status.code()) {
    case absl::StatusCode::kAborted:
      return StaleConflict(k, name);
    case absl::StatusCode::kNotFound:
      return NotFound(k, name);
    default:
      return StoreUnavailable(store_status);
  }
}

}  // namespace batchd::registry
