#include "store/compactor.h"

#include <utility>

#include "common/logging.h"

namespace batchd::store {

Compactor::Compactor(Store& store, Clock& clock, absl::Duration interval, CompactAgreement agree)
    : store_(store), agree_(std::move(agree)), worker_(clock, interval, [this] {
        absl::StatusOr<int64_t> r = Tick();
        if (!r.ok()) BATCHD_LOG_WARN("store compaction failed: {}", r.status().ToString());
      }) {}

absl::StatusOr<int64_t> Compactor::Tick() {
  if (agree_) {
    // Rounds are serialized: the schedule runs one tick at a time anyway.
    absl::MutexLock lock(&mu_);
    absl::StatusOr<CompactRound> round = agree_(time_, previous_);
    if (!round.ok()) return round.status();  // The next tick retries this round.
    time_ = round->time;
    previous_ = round->revision;
    return round->compacted;
  }
  int64_t target = 0;
  {
    absl::MutexLock lock(&mu_);
    target = previous_;
    previous_ = store_.Revision();
  }
  if (target <= store_.CompactedRevision()) return 0;
  if (absl::Status st = store_.Compact(target); !st.ok()) return st;
  return target;
}

}  // namespace batchd::store
