// RFC 7386 JSON merge patch.
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "api/patch/patch.h"
#include "common/status_macros.h"

namespace batchd::api {
namespace {

absl::Status MergeInto(Json& target, const Json& patch, int depth) {
  if (depth > kMaxPatchDepth) {
    return absl::InvalidArgumentError(
        absl::StrCat("merge patch nests deeper than ", kMaxPatchDepth, " levels"));
  }
  if (!patch.is_object()) {
    target = patch;
    return absl::OkStatus();
  }
  if (!target.is_object()) target = Json::object();
  for (const auto& [key, value] : patch.items()) {
    if (value.is_null()) {
      target.erase(key);
      continue;
    }
    BATCHD_RETURN_IF_ERROR(MergeInto(target[key], value, depth + 1));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Json> ApplyMergePatch(const Json& original, const Json& patch) {
  Json result = original;
  BATCHD_RETURN_IF_ERROR(MergeInto(result, patch, 0));
  return result;
}

}  // namespace batchd::api
