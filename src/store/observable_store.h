// ObservableStore: a `Store` decorator that counts every operation by result
// and records its latency, and renders them in the Prometheus text format
// (no metrics library). Results are "ok" or the snake_case status code
// ("not_found", "already_exists", "aborted", ...).
//
// Thread-safety: thread-safe; counters are lock-free atomics. Ownership: it
// either owns the wrapped store or borrows it (which must then outlive it),
// and borrows the clock used to time operations.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "store/store.h"

namespace batchd::store {

class ObservableStore : public Store {
 public:
  enum class Operation { kGet, kRange, kCreate, kUpdate, kDelete, kWatch, kCompact };
  static constexpr int kNumOperations = 7;
  static constexpr int kNumCodes = 17;  // absl::StatusCode values 0..16.
  // Upper bounds (seconds) of the latency histogram buckets, plus +Inf.
  static constexpr std::array<double, 13> kBuckets = {
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0};

  ObservableStore(Store& inner, const Clock& clock);
  ObservableStore(std::unique_ptr<Store> inner, const Clock& clock);

  absl::StatusOr<KeyValue> Get(std::string_view key) override;
  absl::StatusOr<RangeResult> Range(std::string_view prefix, std::string_view start_after,
                                    int64_t limit) override;
  absl::StatusOr<RangeResult> RangeAtRevision(std::string_view prefix,
                                              std::string_view start_after, int64_t limit,
                                              int64_t revision) override;
  absl::StatusOr<KeyValue> Create(std::string_view key, std::string value) override;
  std::vector<absl::StatusOr<KeyValue>> CreateMany(
      std::vector<std::pair<std::string, std::string>> kvs) override;
  absl::StatusOr<KeyValue> Update(std::string_view key, std::string value,
                                  int64_t expected_mod_revision) override;
  std::vector<absl::StatusOr<KeyValue>> UpdateMany(std::vector<UpdateOp> ops) override;
  absl::StatusOr<KeyValue> Delete(std::string_view key, int64_t expected_mod_revision) override;
  absl::StatusOr<KeyValue> DeleteWithFinalValue(std::string_view key, int64_t expected_mod_revision,
                                                std::string final_value) override;
  absl::StatusOr<std::unique_ptr<WatchHandle>> Watch(std::string_view prefix,
                                                     int64_t after_revision,
                                                     WatchCallback cb) override;
  absl::Status Compact(int64_t revision) override;
  int64_t Revision() override { return inner_->Revision(); }
  int64_t OldestWatchableRevision() override { return inner_->OldestWatchableRevision(); }
  int64_t CompactedRevision() override { return inner_->CompactedRevision(); }
  int64_t Transactions() override { return inner_->Transactions(); }

  // Appends `batchd_store_operations_total`, the
  // `batchd_store_operation_duration_seconds` histogram and the
  // `batchd_store_revision` gauge, with HELP/TYPE lines.
  void AppendPrometheus(std::string* out) const;

  // How many `op`s finished with `code` so far.
  uint64_t Count(Operation op, absl::StatusCode code) const;

 private:
  struct OpStats {
    std::array<std::atomic<uint64_t>, kNumCodes> results{};
    std::array<std::atomic<uint64_t>, kBuckets.size() + 1> buckets{};  // Non-cumulative.
    std::atomic<int64_t> sum_nanos{0};
  };

  void Record(Operation op, const absl::Status& status, absl::Time start);

  std::unique_ptr<Store> owned_;
  Store* inner_;
  const Clock& clock_;
  std::array<OpStats, kNumOperations> stats_;
};

}  // namespace batchd::store
