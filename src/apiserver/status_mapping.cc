#include "apiserver/status_mapping.h"

#include <map>
#include <string>

#include "registry/errors.h"

namespace batchd::apiserver {

using api::Json;

namespace {

int CodeForReason(const std::string& reason) {
  static const std::map<std::string, int> kByReason = {
      {"NotFound", 404},        {"AlreadyExists", 409},        {"Conflict", 409},
      {"Invalid", 422},         {"BadRequest", 400},           {"Forbidden", 403},
      {"Unauthorized", 401},    {"MethodNotAllowed", 405},     {"Expired", 410},
      {"Gone", 410},            {"UnsupportedMediaType", 415}, {"RequestEntityTooLarge", 413},
      {"NotAcceptable", 406},   {"TooManyRequests", 429},      {"InternalError", 500},
      {"ServiceUnavailable", 503}, {"Timeout", 504},
  };
  auto it = kByReason.find(reason);
  return it == kByReason.end() ? 0 : it->second;
}

struct Default {
  int code;
  const char* reason;
};

Default ForCode(absl::StatusCode c) {
  switch (c) {
    case absl::StatusCode::kOk: return {200, ""};
    case absl::StatusCode::kInvalidArgument: return {422, "Invalid"};
    case absl::StatusCode::kNotFound: return {404, "NotFound"};
    case absl::StatusCode::kAlreadyExists: return {409, "AlreadyExists"};
    case absl::StatusCode::kAborted: return {409, "Conflict"};
    case absl::StatusCode::kOutOfRange: return {410, "Expired"};
    case absl::StatusCode::kResourceExhausted: return {429, "TooManyRequests"};
    case absl::StatusCode::kUnavailable: return {503, "ServiceUnavailable"};
    case absl::StatusCode::kPermissionDenied: return {403, "Forbidden"};
    case absl::StatusCode::kUnauthenticated: return {401, "Unauthorized"};
    case absl::StatusCode::kUnimplemented: return {405, "MethodNotAllowed"};
    case absl::StatusCode::kDeadlineExceeded: return {504, "Timeout"};
    case absl::StatusCode::kFailedPrecondition: return {400, "BadRequest"};
    default: return {500, "InternalError"};
  }
}

}  // namespace

int HttpCodeFor(const absl::Status& s) {
  auto p = registry::GetPayload(s);
  if (int c = CodeForReason(p.reason); c != 0) return c;
  return ForCode(s.code()).code;
}

Json StatusBodyFor(const absl::Status& s) {
  auto p = registry::GetPayload(s);
  Default d = ForCode(s.code());
  std::string reason = p.reason.empty() ? d.reason : p.reason;
  Json body = {{"kind", "Status"},
               {"apiVersion", "v1"},
               {"metadata", Json::object()},
               {"status", "Failure"},
               {"message", std::string(s.message())},
               {"reason", reason},
               {"code", HttpCodeFor(s)}};
  if (p.details.is_object() && !p.details.empty()) body["details"] = p.details;
  return body;
}

Json SuccessStatus(Json details) {
  Json body = {{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", Json::object()},
               {"status", "Success"}};
  if (!details.empty()) body["details"] = std::move(details);
  return body;
}

}  // namespace batchd::apiserver
