// Registry::UpdateStatusMany: status writes of many objects computed on each
// one's latest version, stored with one store UpdateMany (one commit on
// SQLite). What the queue manager uses to write one cycle's admissions.
#include "absl/strings/str_cat.h"
#include "registry/errors.h"
#include "registry/internal/conflict_retry.h"
#include "registry/registry.h"

namespace batchd::registry {

using api::Json;

std::vector<absl::StatusOr<Json>> Registry::UpdateStatusMany(const api::KindDef& k,
                                                             std::vector<StatusEdit> edits,
                                                             const WriteOptions& opts) {
  std::vector<absl::StatusOr<Json>> out(edits.size(), absl::UnknownError("not written"));
  if (k.storage != nullptr || !k.has_status_subresource) {
    for (auto& r : out) {
      r = absl::InvalidArgumentError(
          absl::StrCat("UpdateStatusMany: ", k.kind, " ", k.version,
                       " is not a storage version with a status subresource"));
    }
    return out;
  }
  // One attempt of edit i on the current version; with `deferred` the store
  // write is queued there instead of made.
  auto attempt = [&](size_t i, std::vector<DeferredWrite>* deferred) -> absl::StatusOr<Json> {
    const StatusEdit& e = edits[i];
    ObjectPtr current = cache_->Get(StoreKey(k, e.ns, e.name));
    if (!current) return NotFound(k, e.name);
    Json obj = current->Decode();
    if (absl::Status st = e.edit(obj); !st.ok()) return st;
    // Only obj's status is read (the status subresource).
    return WriteUpdate(k, current, std::move(obj), /*status=*/true, /*conditional=*/false, opts,
                       deferred);
  };
  auto alone = [&](size_t i) {
    return internal::RetryOnConflict<Json>(k, edits[i].name, [&](bool) -> internal::Attempt<Json> {
      absl::StatusOr<Json> r = attempt(i, nullptr);
      if (internal::IsWriteConflict(r.status())) return internal::Attempt<Json>::Retry();
      return r;
    });
  };
  if (opts.dry_run) {
    for (size_t i = 0; i < edits.size(); ++i) out[i] = alone(i);
    return out;
  }
  std::vector<size_t> batched;
  std::vector<Json> written;
  std::vector<DeferredWrite> deferred;
  for (size_t i = 0; i < edits.size(); ++i) {
    const size_t queued = deferred.size();
    absl::StatusOr<Json> r = attempt(i, &deferred);
    if (!r.ok() || deferred.size() == queued) {  // refused, a no-op, or written at once
      out[i] = std::move(r);
      continue;
    }
    batched.push_back(i);
    written.push_back(*std::move(r));
  }
  if (batched.empty()) return out;
  std::vector<store::Store::UpdateOp> ops;
  ops.reserve(deferred.size());
  for (DeferredWrite& d : deferred) ops.push_back(std::move(d.op));
  std::vector<absl::StatusOr<store::KeyValue>> results = store_.UpdateMany(std::move(ops));
  deferred.clear();  // The offers go once the store has answered (the cache took them or not).
  for (size_t j = 0; j < batched.size(); ++j) {
    const size_t i = batched[j];
    if (j < results.size() && results[j].ok()) {
      written[j]["metadata"]["resourceVersion"] = std::to_string(results[j]->mod_revision);
      out[i] = std::move(written[j]);
    } else if (j < results.size() && results[j].status().code() == absl::StatusCode::kAborted) {
      out[i] = alone(i);  // Written meanwhile: the edit again, on the newer version.
    } else {
      out[i] = StoreWriteError(k, edits[i].name,
                               j < results.size() ? results[j].status()
                                                  : absl::InternalError("no store result"));
    }
  }
  return out;
}

}  // namespace batchd::registry
