#include "apiserver/internal/negotiate.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "api/codec/codec.h"
#include "api/protobuf/decode.h"
#include "registry/errors.h"

namespace batchd::apiserver::internal {

using api::Json;

Output NegotiateOutput(const HttpRequest& req) {
  std::string accept = req.Header("accept");
  for (absl::string_view part : absl::StrSplit(accept, ',')) {
    std::string p = absl::AsciiStrToLower(absl::StripAsciiWhitespace(part));
    if (absl::StartsWith(p, "application/json") && absl::StrContains(p, "as=table") &&
        absl::StrContains(p, "g=meta.k8s.io")) {
      return Output::kTable;
    }
    if (absl::StartsWith(p, "application/json") || absl::StartsWith(p, "*/*")) return Output::kJson;
    if (absl::StartsWith(p, "application/yaml")) return Output::kYaml;
  }
  return Output::kJson;
}

bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    int len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // Allowed range of the second byte.
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;  // No overlong forms,
      if (c == 0xED) hi = 0x9F;  // no surrogates.
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;  // Nothing past U+10FFFF.
    } else {
      return false;
    }
    if (i + len > n) return false;
    const unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
    if (c1 < lo || c1 > hi) return false;
    for (int k = 2; k < len; ++k) {
      const unsigned char ck = static_cast<unsigned char>(s[i + k]);
      if (ck < 0x80 || ck > 0xBF) return false;
    }
    i += len;
  }
  return true;
}

std::string ReplaceInvalidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  size_t i = 0;
  while (i < s.size()) {
    // The longest valid sequence starting here (1 to 4 bytes), if any.
    size_t len = 0;
    for (size_t l = 1; l <= 4 && i + l <= s.size(); ++l) {
      if (IsValidUtf8(s.substr(i, l))) {
        len = l;
        break;
      }
    }
    if (len == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD for this one byte (as Go's decoder).
      ++i;
    } else {
      out.append(s.substr(i, len));
      i += len;
    }
  }
  return out;
}

void ReplaceInvalidUtf8(Json& j) {
  if (j.is_string()) {
    auto& str = j.get_ref<std::string&>();
    if (!IsValidUtf8(str)) str = ReplaceInvalidUtf8(str);
  } else if (j.is_array()) {
    for (auto& e : j) ReplaceInvalidUtf8(e);
  } else if (j.is_object()) {
    bool bad_key = false;
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (!IsValidUtf8(it.key())) bad_key = true;
      ReplaceInvalidUtf8(it.value());
    }
    if (bad_key) {
      Json fixed = Json::object();
      for (auto it = j.begin(); it != j.end(); ++it) {
        fixed[ReplaceInvalidUtf8(it.key())] = std::move(it.value());
      }
      j = std::move(fixed);
    }
  }
}

absl::StatusOr<Json> DecodeBody(const HttpRequest& req, std::vector<std::string>* dups) {
  std::string ct = req.Header("content-type");
  if (ct.empty()) ct = "application/json";
  if (req.body.empty()) return registry::BadRequest("the request body is empty");
  // kubectl's typed commands (create namespace/job/cronjob) send protobuf.
  const bool protobuf = api::protobuf::IsProtobufContentType(ct);
  std::string fixed;
  if (!protobuf && !IsValidUtf8(req.body)) fixed = ReplaceInvalidUtf8(req.body);
  auto j = protobuf ? api::protobuf::DecodeKubernetesProtobuf(req.body)
                    : api::ParseBody(fixed.empty() ? req.body : fixed, ct, dups);
  if (!j.ok()) {
    if (j.status().code() == absl::StatusCode::kUnimplemented) {
      return registry::UnsupportedMediaType("the body of the request was in an unknown format - "
                                            "accepted media types include: application/json, "
                                            "application/yaml");
    }
    return registry::BadRequest(std::string(j.status().message()));
  }
  ReplaceInvalidUtf8(*j);
  return j;
}

absl::StatusOr<registry::WriteOptions> ParseWriteOptions(const HttpRequest& req) {
  registry::WriteOptions o;
  if (req.HasParam("dryRun")) {
    auto range = req.query.equal_range("dryRun");
    for (auto it = range.first; it != range.second; ++it) {
      if (it->second != "All") {
        return registry::BadRequest("Invalid dry run value: " + it->second +
                                    " (supported values: All)");
      }
      o.dry_run = true;
    }
  }
  std::string fv = req.Param("fieldValidation");
  if (fv.empty() || fv == "Warn") {
    o.field_validation = registry::FieldValidation::kWarn;
  } else if (fv == "Strict") {
    o.field_validation = registry::FieldValidation::kStrict;
  } else if (fv == "Ignore") {
    o.field_validation = registry::FieldValidation::kIgnore;
  } else {
    return registry::BadRequest("fieldValidation: Unsupported value: \"" + fv +
                                "\": supported values: \"Ignore\", \"Strict\", \"Warn\"");
  }
  o.field_manager = req.Param("fieldManager");
  // A write that names no manager records none (kube-apiserver would take
  // the User-Agent's product): see docs/api.md, "Field ownership".
  if (o.field_manager.size() > 128) {
    return registry::BadRequest("fieldManager: Too long: may not be more than 128 bytes");
  }
  return o;
}

absl::StatusOr<registry::ListOptions> ParseListOptions(const HttpRequest& req) {
  registry::ListOptions o;
  o.label_selector = req.Param("labelSelector");
  o.field_selector = req.Param("fieldSelector");
  o.continue_token = req.Param("continue");
  o.resource_version = req.Param("resourceVersion");
  o.resource_version_match = req.Param("resourceVersionMatch");
  std::string limit = req.Param("limit");
  if (!limit.empty() && !absl::SimpleAtoi(limit, &o.limit)) {
    return registry::BadRequest("limit: invalid value \"" + limit + "\"");
  }
  if (o.limit < 0) o.limit = 0;
  return o;
}

absl::StatusOr<registry::DeleteOptions> ParseDeleteOptions(const HttpRequest& req) {
  registry::DeleteOptions o;
  Json body = Json::object();
  if (!req.body.empty()) {
    auto j = DecodeBody(req, nullptr);
    if (!j.ok()) return j.status();
    if (!j->is_object()) return registry::BadRequest("DeleteOptions must be a JSON object");
    body = std::move(*j);
  }
  auto grace = req.Param("gracePeriodSeconds");
  int64_t g = 0;
  if (!grace.empty()) {
    if (!absl::SimpleAtoi(grace, &g)) return registry::BadRequest("invalid gracePeriodSeconds");
    o.grace_period_seconds = g;
  } else if (body.contains("gracePeriodSeconds") && body["gracePeriodSeconds"].is_number_integer()) {
    o.grace_period_seconds = body["gracePeriodSeconds"].get<int64_t>();
  }
  o.propagation_policy = req.Param("propagationPolicy");
  if (o.propagation_policy.empty() && body.contains("propagationPolicy") &&
      body["propagationPolicy"].is_string()) {
    o.propagation_policy = body["propagationPolicy"];
  }
  std::string orphan = req.Param("orphanDependents");
  bool has_orphan = !orphan.empty() || (body.contains("orphanDependents") &&
                                        body["orphanDependents"].is_boolean());
  if (has_orphan) {
    bool od = !orphan.empty() ? orphan == "true" : body["orphanDependents"].get<bool>();
    if (!o.propagation_policy.empty()) {
      return registry::BadRequest(
          "orphanDependents and propagationPolicy may not both be set");
    }
    o.propagation_policy = od ? "Orphan" : "Background";
  }
  if (body.contains("preconditions") && body["preconditions"].is_object()) {
    const Json& p = body["preconditions"];
    if (p.contains("uid") && p["uid"].is_string()) o.precondition_uid = p["uid"];
    if (p.contains("resourceVersion") && p["resourceVersion"].is_string()) {
      o.precondition_resource_version = p["resourceVersion"];
    }
  }
  bool dry = req.Param("dryRun") == "All";
  if (body.contains("dryRun") && body["dryRun"].is_array()) {
    for (const auto& d : body["dryRun"]) {
      if (d != "All") return registry::BadRequest("Invalid dry run value");
      dry = true;
    }
  }
  o.dry_run = dry;
  return o;
}

}  // namespace batchd::apiserver::internal
