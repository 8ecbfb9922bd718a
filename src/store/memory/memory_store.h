// MemoryStore: the in-process `Store` backend for tests and `batchd simulate`.
// A sorted map plus a revision counter; nothing survives the process.
//
// Thread-safety: all methods are thread-safe. Writes are serialised by one
// mutex; reads take a shared lock and never wait for watch callbacks. Watch
// callbacks for a write run on the writing thread while that write holds the
// store's write lock (in revision order, before the write returns), so they
// must not call back into the store. Replayed history runs on a hub thread
// (see store/internal/watch_hub.h).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "store/internal/watch_hub.h"
#include "store/store.h"

namespace batchd::store {

struct MemoryStoreOptions {
  internal::WatchHubOptions history;
};

class MemoryStore : public Store {
 public:
  explicit MemoryStore(MemoryStoreOptions options = {});
  ~MemoryStore() override;

  absl::StatusOr<KeyValue> Get(std::string_view key) override;
  absl::StatusOr<RangeResult> Range(std::string_view prefix, std::string_view start_after,
                                    int64_t limit) override;
  // Reads a past revision by undoing the ring's later events on the current
  // state: any revision the ring still covers (OldestWatchableRevision on).
  absl::StatusOr<RangeResult> RangeAtRevision(std::string_view prefix,
                                              std::string_view start_after, int64_t limit,
                                              int64_t revision) override;
  absl::StatusOr<KeyValue> Create(std::string_view key, std::string value) override;
  absl::StatusOr<KeyValue> Update(std::string_view key, std::string value,
                                  int64_t expected_mod_revision) override;
  absl::StatusOr<KeyValue> Delete(std::string_view key, int64_t expected_mod_revision) override;
  absl::StatusOr<KeyValue> DeleteWithFinalValue(std::string_view key, int64_t expected_mod_revision,
                                                std::string final_value) override;
  absl::StatusOr<std::unique_ptr<WatchHandle>> Watch(std::string_view prefix,
                                                     int64_t after_revision,
                                                     WatchCallback cb) override;
  absl::Status Compact(int64_t revision) override;
  int64_t Revision() override;
  int64_t OldestWatchableRevision() override;

 private:
  absl::StatusOr<KeyValue> DeleteImpl(std::string_view key, int64_t expected_mod_revision,
                                      std::optional<std::string> final_value);
  absl::Mutex write_mu_;  // Serialises writes and their event delivery.
  absl::Mutex data_mu_ ABSL_ACQUIRED_AFTER(write_mu_);
  std::map<std::string, KeyValue, std::less<>> data_ ABSL_GUARDED_BY(data_mu_);
  int64_t revision_ ABSL_GUARDED_BY(data_mu_) = 0;
  internal::WatchHub hub_;
};

}  // namespace batchd::store
