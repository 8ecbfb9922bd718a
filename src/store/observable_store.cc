#include "store/observable_store.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace batchd::store {
namespace {

constexpr std::array<const char*, ObservableStore::kNumOperations> kOperationNames = {
    "get", "range", "create", "update", "delete", "watch", "compact"};

std::string ResultLabel(int code) {
  if (code == 0) return "ok";
  std::string name = absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

}  // namespace

ObservableStore::ObservableStore(Store& inner, const Clock& clock)
    : inner_(&inner), clock_(clock) {}

ObservableStore::ObservableStore(std::unique_ptr<Store> inner, const Clock& clock)
    : owned_(std::move(inner)), inner_(owned_.get()), clock_(clock) {}

void ObservableStore::Record(Operation op, const absl::Status& status, absl::Time start) {
  OpStats& s = stats_[static_cast<int>(op)];
  int code = std::clamp(static_cast<int>(status.code()), 0, kNumCodes - 1);
  s.results[code].fetch_add(1, std::memory_order_relaxed);
  absl::Duration d = std::max(clock_.Now() - start, absl::ZeroDuration());
  double seconds = absl::ToDoubleSeconds(d);
  size_t bucket = std::lower_bound(kBuckets.begin(), kBuckets.end(), seconds) - kBuckets.begin();
  s.buckets[bucket].fetch_add(1, std::memory_order_relaxed);
  s.sum_nanos.fetch_add(absl::ToInt64Nanoseconds(d), std::memory_order_relaxed);
}

absl::StatusOr<KeyValue> ObservableStore::Get(std::string_view key) {
  absl::Time start = clock_.Now();
  absl::StatusOr<KeyValue> r = inner_->Get(key);
  Record(Operation::kGet, r.status(), start);
  return r;
}

absl::StatusOr<RangeResult> ObservableStore::Range(std::string_view prefix,
                                                   std::string_view start_after, int64_t limit) {
  absl::Time start = clock_.Now();
  absl::StatusOr<RangeResult> r = inner_->Range(prefix, start_after, limit);
  Record(Operation::kRange, r.status(), start);
  return r;
}

absl::StatusOr<RangeResult> ObservableStore::RangeAtRevision(std::string_view prefix,
                                                             std::string_view start_after,
                                                             int64_t limit, int64_t revision) {
  absl::Time start = clock_.Now();
  absl::StatusOr<RangeResult> r = inner_->RangeAtRevision(prefix, start_after, limit, revision);
  Record(Operation::kRange, r.status(), start);
  return r;
}

absl::StatusOr<KeyValue> ObservableStore::Create(std::string_view key, std::string value) {
  absl::Time start = clock_.Now();
  absl::StatusOr<KeyValue> r = inner_->Create(key, std::move(value));
  Record(Operation::kCreate, r.status(), start);
  return r;
}

std::vector<absl::StatusOr<KeyValue>> ObservableStore::CreateMany(
    std::vector<std::pair<std::string, std::string>> kvs) {
  absl::Time start = clock_.Now();
  std::vector<absl::StatusOr<KeyValue>> r = inner_->CreateMany(std::move(kvs));
  for (const auto& one : r) Record(Operation::kCreate, one.status(), start);
  return r;
}

std::vector<absl::StatusOr<KeyValue>> ObservableStore::UpdateMany(std::vector<UpdateOp> ops) {
  absl::Time start = clock_.Now();
  std::vector<bool> creates;
  creates.reserve(ops.size());
  for (const UpdateOp& op : ops) creates.push_back(op.create);
  std::vector<absl::StatusOr<KeyValue>> r = inner_->UpdateMany(std::move(ops));
  for (size_t i = 0; i < r.size(); ++i) {
    const bool create = i < creates.size() && creates[i];
    Record(create ? Operation::kCreate : Operation::kUpdate, r[i].status(), start);
  }
  return r;
}

absl::StatusOr<KeyValue> ObservableStore::Update(std::string_view key, std::string value,
                                                 int64_t expected_mod_revision) {
  absl::Time start = clock_.Now();
  absl::StatusOr<KeyValue> r = inner_->Update(key, std::move(value), expected_mod_revision);
  Record(Operation::kUpdate, r.status(), start);
  return r;
}

absl::StatusOr<KeyValue> ObservableStore::Delete(std::string_view key,
                                                 int64_t expected_mod_revision) {
  absl::Time start = clock_.Now();
  absl::StatusOr<KeyValue> r = inner_->Delete(key, expected_mod_revision);
  Record(Operation::kDelete, r.status(), start);
  return r;
}

absl::StatusOr<KeyValue> ObservableStore::DeleteWithFinalValue(std::string_view key,
                                                               int64_t expected_mod_revision,
                                                               std::string final_value) {
  absl::Time start = clock_.Now();
  absl::StatusOr<KeyValue> r =
      inner_->DeleteWithFinalValue(key, expected_mod_revision, std::move(final_value));
  Record(Operation::kDelete, r.status(), start);
  return r;
}

absl::StatusOr<std::unique_ptr<WatchHandle>> ObservableStore::Watch(std::string_view prefix,
                                                                    int64_t after_revision,
                                                                    WatchCallback cb) {
  absl::Time start = clock_.Now();
  auto r = inner_->Watch(prefix, after_revision, std::move(cb));
  Record(Operation::kWatch, r.status(), start);
  return r;
}

absl::Status ObservableStore::Compact(int64_t revision) {
  absl::Time start = clock_.Now();
  absl::Status st = inner_->Compact(revision);
  Record(Operation::kCompact, st, start);
  return st;
}

uint64_t ObservableStore::Count(Operation op, absl::StatusCode code) const {
  int c = static_cast<int>(code);
  if (c < 0 || c >= kNumCodes) return 0;
  return stats_[static_cast<int>(op)].results[c].load(std::memory_order_relaxed);
}

void ObservableStore::AppendPrometheus(std::string* out) const {
  absl::StrAppend(out,
                  "# HELP batchd_store_operations_total Store operations by operation and "
                  "result.\n# TYPE batchd_store_operations_total counter\n");
  for (int op = 0; op < kNumOperations; ++op) {
    for (int code = 0; code < kNumCodes; ++code) {
      uint64_t n = stats_[op].results[code].load(std::memory_order_relaxed);
      if (n == 0 && code != 0) continue;  // Always show "ok"; errors once seen.
      absl::StrAppend(out, "batchd_store_operations_total{operation=\"", kOperationNames[op],
                      "\",result=\"", ResultLabel(code), "\"} ", n, "\n");
    }
  }
  absl::StrAppend(out,
                  "# HELP batchd_store_operation_duration_seconds Store operation latency.\n"
                  "# TYPE batchd_store_operation_duration_seconds histogram\n");
  for (int op = 0; op < kNumOperations; ++op) {
    const OpStats& s = stats_[op];
    uint64_t cumulative = 0;
    for (size_t b = 0; b <= kBuckets.size(); ++b) {
      cumulative += s.buckets[b].load(std::memory_order_relaxed);
      std::string le = b < kBuckets.size() ? absl::StrFormat("%g", kBuckets[b]) : "+Inf";
      absl::StrAppend(out, "batchd_store_operation_duration_seconds_bucket{operation=\"",
                      kOperationNames[op], "\",le=\"", le, "\"} ", cumulative, "\n");
    }
    double sum = static_cast<double>(s.sum_nanos.load(std::memory_order_relaxed)) / 1e9;
    absl::StrAppend(out, "batchd_store_operation_duration_seconds_sum{operation=\"",
                    kOperationNames[op], "\"} ", absl::StrFormat("%.9g", sum), "\n");
    absl::StrAppend(out, "batchd_store_operation_duration_seconds_count{operation=\"",
                    kOperationNames[op], "\"} ", cumulative, "\n");
  }
  absl::StrAppend(out,
                  "# HELP batchd_store_revision The store's latest revision.\n"
                  "# TYPE batchd_store_revision gauge\n"
                  "batchd_store_revision ",
                  inner_->Revision(), "\n");
  if (const int64_t txns = inner_->Transactions(); txns >= 0) {
    absl::StrAppend(out,
                    "# HELP batchd_store_transactions_total Write transactions the store "
                    "committed (one may hold many writes).\n"
                    "# TYPE batchd_store_transactions_total counter\n"
                    "batchd_store_transactions_total ",
                    txns, "\n");
  }
}

}  // namespace batchd::store
