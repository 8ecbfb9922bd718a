// FaultStore: a test-only `Store` decorator that injects write failures, for
// registry and controller tests. `FailNthWrite(n, st)` makes the n-th write
// (Create/Update/Delete, counted from the call, 1-based) fail with `st`,
// either before it reaches the wrapped store (nothing changes) or after
// (the write lands but the caller sees the error, like a lost ack). A hook
// runs before every operation, e.g. to advance a FakeClock as latency.
//
// Thread-safety: thread-safe. Ownership: borrows the wrapped store, which
// must outlive it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "store/store.h"

namespace batchd::store::testing {

class FaultStore : public Store {
 public:
  enum class Timing { kBeforeWrite, kAfterWrite };

  explicit FaultStore(Store& inner) : inner_(inner) {}

  // The `n`th write from now (1-based) fails with `status`.
  void FailNthWrite(int n, absl::Status status, Timing timing = Timing::kBeforeWrite) {
    absl::MutexLock lock(&mu_);
    faults_[writes_ + n] = Fault{std::move(status), timing};
  }
  // Every write from now on fails with `status` (nothing is written).
  void FailAllWrites(absl::Status status) {
    absl::MutexLock lock(&mu_);
    fail_all_ = std::move(status);
  }
  // Removes every pending fault.
  void Clear() {
    absl::MutexLock lock(&mu_);
    faults_.clear();
    fail_all_ = absl::OkStatus();
  }
  // Runs before every operation (not under any FaultStore lock).
  void SetHook(std::function<void()> hook) {
    absl::MutexLock lock(&mu_);
    hook_ = std::make_shared<std::function<void()>>(std::move(hook));
  }
  // Writes attempted so far.
  int64_t writes() const {
    absl::MutexLock lock(&mu_);
    return writes_;
  }

  absl::StatusOr<KeyValue> Get(std::string_view key) override {
    RunHook();
    return inner_.Get(key);
  }
  absl::StatusOr<RangeResult> Range(std::string_view prefix, std::string_view start_after,
                                    int64_t limit) override {
    RunHook();
    return inner_.Range(prefix, start_after, limit);
  }
  absl::StatusOr<RangeResult> RangeAtRevision(std::string_view prefix,
                                              std::string_view start_after, int64_t limit,
                                              int64_t revision) override {
    RunHook();
    return inner_.RangeAtRevision(prefix, start_after, limit, revision);
  }
  absl::StatusOr<KeyValue> Create(std::string_view key, std::string value) override {
    return Write([&] { return inner_.Create(key, std::move(value)); });
  }
  absl::StatusOr<KeyValue> Update(std::string_view key, std::string value,
                                  int64_t expected_mod_revision) override {
    return Write([&] { return inner_.Update(key, std::move(value), expected_mod_revision); });
  }
  absl::StatusOr<KeyValue> Delete(std::string_view key, int64_t expected_mod_revision) override {
    return Write([&] { return inner_.Delete(key, expected_mod_revision); });
  }
  absl::StatusOr<KeyValue> DeleteWithFinalValue(std::string_view key, int64_t expected_mod_revision,
                                                std::string final_value) override {
    return Write([&] {
      return inner_.DeleteWithFinalValue(key, expected_mod_revision, std::move(final_value));
    });
  }
  absl::StatusOr<std::unique_ptr<WatchHandle>> Watch(std::string_view prefix,
                                                     int64_t after_revision,
                                                     WatchCallback cb) override {
    RunHook();
    return inner_.Watch(prefix, after_revision, std::move(cb));
  }
  absl::Status Compact(int64_t revision) override {
    RunHook();
    return inner_.Compact(revision);
  }
  int64_t Revision() override { return inner_.Revision(); }
  int64_t OldestWatchableRevision() override { return inner_.OldestWatchableRevision(); }
  int64_t CompactedRevision() override { return inner_.CompactedRevision(); }

 private:
  struct Fault {
    absl::Status status;
    Timing timing = Timing::kBeforeWrite;
  };

  void RunHook() {
    std::shared_ptr<std::function<void()>> hook;
    {
      absl::MutexLock lock(&mu_);
      hook = hook_;
    }
    if (hook && *hook) (*hook)();
  }

  template <typename Fn>
  absl::StatusOr<KeyValue> Write(Fn fn) {
    RunHook();
    Fault fault;
    bool faulty = false;
    {
      absl::MutexLock lock(&mu_);
      int64_t n = ++writes_;
      if (!fail_all_.ok()) return fail_all_;
      auto it = faults_.find(n);
      if (it != faults_.end()) {
        fault = std::move(it->second);
        faults_.erase(it);
        faulty = true;
      }
    }
    if (!faulty) return fn();
    if (fault.timing == Timing::kAfterWrite) fn().IgnoreError();
    return fault.status;
  }

  Store& inner_;
  mutable absl::Mutex mu_;
  int64_t writes_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<int64_t, Fault> faults_ ABSL_GUARDED_BY(mu_);
  absl::Status fail_all_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<std::function<void()>> hook_ ABSL_GUARDED_BY(mu_);
};

}  // namespace batchd::store::testing
