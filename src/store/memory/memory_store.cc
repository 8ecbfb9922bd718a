#include "store/memory/memory_store.h"

#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/string_view.h"

namespace batchd::store {
namespace {

absl::Status StaleRevision(std::string_view key, int64_t expected, int64_t actual) {
  return absl::AbortedError(absl::StrCat("revision mismatch for key \"", Sv(key), "\": expected ",
                                         expected, ", current ", actual));
}

absl::Status KeyNotFound(std::string_view key) {
  return absl::NotFoundError(absl::StrCat("key \"", Sv(key), "\" not found"));
}

}  // namespace

MemoryStore::MemoryStore(MemoryStoreOptions options) : hub_(0, options.history) {}

MemoryStore::~MemoryStore() = default;

absl::StatusOr<KeyValue> MemoryStore::Get(std::string_view key) {
  absl::ReaderMutexLock lock(&data_mu_);
  auto it = data_.find(key);
  if (it == data_.end()) return KeyNotFound(key);
  return it->second;
}

absl::StatusOr<RangeResult> MemoryStore::Range(std::string_view prefix,
                                               std::string_view start_after, int64_t limit) {
  if (limit < 0) return absl::InvalidArgumentError("range limit must be >= 0");
  RangeResult result;
  absl::ReaderMutexLock lock(&data_mu_);
  result.revision = revision_;
  auto it = start_after.empty() || start_after < prefix ? data_.lower_bound(prefix)
                                                        : data_.upper_bound(start_after);
  for (; it != data_.end() && absl::StartsWith(it->first, Sv(prefix)); ++it) {
    if (limit > 0 && static_cast<int64_t>(result.kvs.size()) == limit) {
      result.more = true;
      break;
    }
    result.kvs.push_back(it->second);
  }
  return result;
}

absl::StatusOr<RangeResult> MemoryStore::RangeAtRevision(std::string_view prefix,
                                                         std::string_view start_after,
                                                         int64_t limit, int64_t revision) {
  if (limit < 0) return absl::InvalidArgumentError("range limit must be >= 0");
  absl::MutexLock write_lock(&write_mu_);  // the data and the ring agree
  const int64_t current = Revision();
  if (revision == 0 || revision == current) return Range(prefix, start_after, limit);
  if (revision > current) {
    return absl::OutOfRangeError(absl::StrCat("required revision ", revision,
                                              " is a future revision (current ", current, ")"));
  }
  auto later = hub_.EventsAfter(revision);
  if (!later.ok()) return later.status();
  std::map<std::string, KeyValue, std::less<>> at;
  {
    absl::ReaderMutexLock lock(&data_mu_);
    for (auto it = data_.lower_bound(prefix);
         it != data_.end() && absl::StartsWith(it->first, Sv(prefix)); ++it) {
      at.insert(*it);
    }
  }
  for (auto e = later->rbegin(); e != later->rend(); ++e) {
    const Event& ev = **e;
    if (!absl::StartsWith(ev.kv.key, Sv(prefix))) continue;
    if (ev.prev.key.empty()) {
      at.erase(ev.kv.key);
    } else {
      at[ev.kv.key] = ev.prev;
    }
  }
  RangeResult result;
  result.revision = revision;
  auto it = start_after.empty() ? at.begin() : at.upper_bound(start_after);
  for (; it != at.end(); ++it) {
    if (limit > 0 && static_cast<int64_t>(result.kvs.size()) == limit) {
      result.more = true;
      break;
    }
    result.kvs.push_back(it->second);
  }
  return result;
}

absl::StatusOr<KeyValue> MemoryStore::Create(std::string_view key, std::string value) {
  if (key.empty()) return absl::InvalidArgumentError("key must not be empty");
  absl::MutexLock write_lock(&write_mu_);
  Event event;
  {
    absl::MutexLock lock(&data_mu_);
    auto [it, inserted] = data_.try_emplace(std::string(key));
    if (!inserted) {
      return absl::AlreadyExistsError(absl::StrCat("key \"", Sv(key), "\" already exists"));
    }
    ++revision_;
    it->second = KeyValue{it->first, std::move(value), revision_, revision_};
    event.kv = it->second;
  }
  KeyValue result = event.kv;
  std::vector<Event> events;
  events.push_back(std::move(event));
  hub_.Publish(std::move(events));
  return result;
}

absl::StatusOr<KeyValue> MemoryStore::Update(std::string_view key, std::string value,
                                             int64_t expected_mod_revision) {
  absl::MutexLock write_lock(&write_mu_);
  Event event;
  {
    absl::MutexLock lock(&data_mu_);
    auto it = data_.find(key);
    if (it == data_.end()) return KeyNotFound(key);
    KeyValue& kv = it->second;
    if (expected_mod_revision != 0 && kv.mod_revision != expected_mod_revision) {
      return StaleRevision(key, expected_mod_revision, kv.mod_revision);
    }
    event.prev = kv;
    ++revision_;
    kv.value = std::move(value);
    kv.mod_revision = revision_;
    event.kv = kv;
  }
  KeyValue result = event.kv;
  std::vector<Event> events;
  events.push_back(std::move(event));
  hub_.Publish(std::move(events));
  return result;
}

absl::StatusOr<KeyValue> MemoryStore::Delete(std::string_view key,
                                             int64_t expected_mod_revision) {
  return DeleteImpl(key, expected_mod_revision, std::nullopt);
}

absl::StatusOr<KeyValue> MemoryStore::DeleteWithFinalValue(std::string_view key,
                                                           int64_t expected_mod_revision,
                                                           std::string final_value) {
  return DeleteImpl(key, expected_mod_revision, std::move(final_value));
}

absl::StatusOr<KeyValue> MemoryStore::DeleteImpl(std::string_view key,
                                                 int64_t expected_mod_revision,
                                                 std::optional<std::string> final_value) {
  absl::MutexLock write_lock(&write_mu_);
  Event event;
  event.type = Event::Type::kDelete;
  {
    absl::MutexLock lock(&data_mu_);
    auto it = data_.find(key);
    if (it == data_.end()) return KeyNotFound(key);
    if (expected_mod_revision != 0 && it->second.mod_revision != expected_mod_revision) {
      return StaleRevision(key, expected_mod_revision, it->second.mod_revision);
    }
    ++revision_;
    event.prev = std::move(it->second);
    data_.erase(it);
    event.kv = event.prev;
    if (final_value) event.kv.value = std::move(*final_value);
    event.kv.mod_revision = revision_;
  }
  KeyValue result = event.kv;
  std::vector<Event> events;
  events.push_back(std::move(event));
  hub_.Publish(std::move(events));
  return result;
}

absl::StatusOr<std::unique_ptr<WatchHandle>> MemoryStore::Watch(std::string_view prefix,
                                                                int64_t after_revision,
                                                                WatchCallback cb) {
  return hub_.Watch(prefix, after_revision, std::move(cb));
}

absl::Status MemoryStore::Compact(int64_t revision) { return hub_.Compact(revision); }

int64_t MemoryStore::Revision() {
  absl::ReaderMutexLock lock(&data_mu_);
  return revision_;
}

int64_t MemoryStore::OldestWatchableRevision() { return hub_.OldestWatchableRevision(); }

}  // namespace batchd::store
