#include "controllers/job/expectations.h"

#include "absl/synchronization/mutex.h"
#include "api/meta/object_meta.h"

namespace batchd::controllers::job {

void Expectations::ExpectCreations(const std::string& key, int n, absl::Time now) {
  absl::MutexLock lock(&mu_);
  Entry& e = entries_[key];
  e.creates += n;
  e.set_at = now;
}

void Expectations::CreationObserved(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(key);
  if (it != entries_.end() && it->second.creates > 0) --it->second.creates;
}

void Expectations::ExpectDeletions(const std::string& key, const std::vector<std::string>& uids,
                                   absl::Time now) {
  absl::MutexLock lock(&mu_);
  Entry& e = entries_[key];
  e.deletes.insert(uids.begin(), uids.end());
  e.set_at = now;
}

void Expectations::DeletionObserved(const std::string& key, const std::string& uid) {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(key);
  if (it != entries_.end()) it->second.deletes.erase(uid);
}

void Expectations::ExpectFinalizerRemovals(const std::string& key,
                                           const std::vector<std::string>& uids) {
  absl::MutexLock lock(&mu_);
  entries_[key].finalizers.insert(uids.begin(), uids.end());
}

void Expectations::FinalizerRemovalObserved(const std::string& key, const std::string& uid) {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(key);
  if (it != entries_.end()) it->second.finalizers.erase(uid);
}

bool Expectations::Satisfied(const std::string& key, absl::Time now) const {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return true;
  const Entry& e = it->second;
  if (e.creates <= 0 && e.deletes.empty()) return true;
  return now - e.set_at > kExpectationsTimeout;
}

std::set<std::string> Expectations::PendingFinalizerRemovals(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(key);
  return it == entries_.end() ? std::set<std::string>{} : it->second.finalizers;
}

void Expectations::Forget(const std::string& key) {
  absl::MutexLock lock(&mu_);
  entries_.erase(key);
}

std::string ControllingJobKey(const api::Json& pod) {
  return api::meta::ControllerKey(pod, "batch/v1", "Job");
}

void PodIndex::Upsert(const client::ObjectRef& pod) {
  std::string key = ControllingJobKey(*pod);
  if (key.empty()) return;
  absl::MutexLock lock(&mu_);
  pods_[key].insert(api::meta::GetName(*pod));
}

void PodIndex::Remove(const api::Json& pod) {
  std::string key = ControllingJobKey(pod);
  if (key.empty()) return;
  absl::MutexLock lock(&mu_);
  auto it = pods_.find(key);
  if (it == pods_.end()) return;
  it->second.erase(api::meta::GetName(pod));
  if (it->second.empty()) pods_.erase(it);
}

std::vector<client::ObjectRef> PodIndex::For(const std::string& key,
                                             const client::Informer& pods,
                                             bool skip_settled) const {
  std::vector<std::string> names;
  {
    absl::MutexLock lock(&mu_);
    auto it = pods_.find(key);
    if (it == pods_.end()) return {};
    names.assign(it->second.begin(), it->second.end());
  }
  const std::string ns = key.substr(0, key.find('/'));
  std::vector<client::ObjectRef> out;
  out.reserve(names.size());
  for (const std::string& name : names) {
    // Skipped: gone from the informer, or controlled by another Job now
    // (the handler that moves it in this index has not run yet).
    client::ObjectRef p = skip_settled ? pods.GetUnlessCompact(ns, name) : pods.Get(ns, name);
    if (p && ControllingJobKey(*p) == key) out.push_back(std::move(p));
  }
  return out;
}

}  // namespace batchd::controllers::job
