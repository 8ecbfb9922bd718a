#include "store/compactor.h"

#include "common/logging.h"

namespace batchd::store {

Compactor::Compactor(Store& store, Clock& clock, absl::Duration interval)
    : store_(store), worker_(clock, interval, [this] {
        absl::StatusOr<int64_t> r = Tick();
        if (!r.ok()) BATCHD_LOG_WARN("store compaction failed: {}", r.status().ToString());
      }) {}

absl::StatusOr<int64_t> Compactor::Tick() {
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
