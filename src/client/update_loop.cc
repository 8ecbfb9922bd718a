#include "client/update_loop.h"

#include <utility>

#include "api/json_access.h"
#include "registry/errors.h"

namespace batchd::client {

namespace {

bool HasReason(const absl::Status& st, const char* reason) {
  return !st.ok() && registry::GetPayload(st).reason == reason;
}

}  // namespace

absl::StatusOr<UpdateOutcome> UpdateLoop(Client& client, const api::KindDef& k,
                                         const std::string& ns, const std::string& name,
                                         const std::string& uid, std::optional<api::Json> start,
                                         const std::function<bool(api::Json&)>& mutate,
                                         UpdateLoopOptions opts) {
  absl::Status last = absl::OkStatus();
  std::optional<api::Json> obj = std::move(start);
  for (int attempt = 0; attempt < opts.attempts; ++attempt) {
    if (!obj) {
      absl::StatusOr<api::Json> live = client.Get(k, ns, name);
      if (HasReason(live.status(), "NotFound")) return UpdateOutcome::kGone;
      if (!live.ok()) return live.status();
      obj = std::move(*live);
    }
    const api::Json& meta = api::MemberObject(*obj, "metadata");
    const std::string obj_uid = api::CopyStringMember(meta, "uid");
    if (!uid.empty() && obj_uid != uid) return UpdateOutcome::kGone;
    if (!mutate(*obj)) return UpdateOutcome::kUnchanged;
    if (!obj->contains("apiVersion")) (*obj)["apiVersion"] = k.ApiVersion();
    if (!obj->contains("kind")) (*obj)["kind"] = k.kind;
    absl::StatusOr<api::Json> r =
        opts.status ? client.UpdateStatus(k, *std::move(obj)) : client.Update(k, *std::move(obj));
    obj.reset();
    if (r.ok()) return UpdateOutcome::kUpdated;
    last = r.status();
    if (HasReason(last, "NotFound")) return UpdateOutcome::kGone;
    if (!HasReason(last, "Conflict")) return last;
    // Stale (or replaced: the uid precondition): re-read and start over.
  }
  return last;
}

}  // namespace batchd::client
