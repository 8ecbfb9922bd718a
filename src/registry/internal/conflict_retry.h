// The registry's one conflict-retry loop.
//
// Every read-modify-write verb (update, patch, delete, bind) reads the
// current object from the watch cache, computes the next state and writes it
// with a revision precondition. When another writer moved the object in
// between, the write fails and the verb starts over on the new version, as
// kube-apiserver's GuaranteedUpdate does. A verb whose caller named a
// resourceVersion never retries: that conflict is the caller's to see.
//
// Thread-safety: stateless.
#pragma once

#include <optional>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "registry/errors.h"

namespace batchd::registry::internal {

// How many times a verb starts over before it answers with a Conflict.
inline constexpr int kMaxConflictRetries = 16;

// The outcome of one attempt: a result for the client, or Retry() when the
// attempt lost a race with another writer.
template <typename T>
class Attempt {
 public:
  Attempt(absl::StatusOr<T> result) : result_(std::move(result)) {}  // NOLINT: implicit.
  Attempt(absl::Status status) : result_(std::move(status)) {}       // NOLINT: implicit.
  Attempt(T value) : result_(std::move(value)) {}                    // NOLINT: implicit.
  static Attempt Retry() { return Attempt(); }

  bool retry() const { return !result_.has_value(); }
  absl::StatusOr<T> Take() && { return *std::move(result_); }

 private:
  Attempt() = default;
  std::optional<absl::StatusOr<T>> result_;
};

// True when `s` is the Conflict of a conditional store write that lost a race
// (StoreWriteError's answer to the store's Aborted), which a retry may cure.
inline bool IsWriteConflict(const absl::Status& s) {
  return !s.ok() && GetPayload(s).reason == "Conflict";
}

// Runs `attempt(last_try)` until it returns a result, at most
// kMaxConflictRetries times; `last_try` tells the attempt no retry follows
// (it may then consume its inputs). After the last lost race: the
// stale-object Conflict of object `name` of kind `k`.
template <typename T, typename Fn>
absl::StatusOr<T> RetryOnConflict(const api::KindDef& k, std::string_view name, Fn&& attempt) {
  for (int i = 0; i < kMaxConflictRetries; ++i) {
    Attempt<T> outcome = attempt(/*last_try=*/i + 1 == kMaxConflictRetries);
    if (!outcome.retry()) return std::move(outcome).Take();
  }
  return StaleConflict(k, name);
}

}  // namespace batchd::registry::internal
