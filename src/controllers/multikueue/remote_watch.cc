// The manager's watches on a worker (internal/remote_watch.h).
#include "controllers/multikueue/internal/remote_watch.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/json_access.h"
#include "api/kueue/kueue.h"
#include "api/meta/object_meta.h"
#include "common/logging.h"
#include "common/thread_name.h"
#include "controllers/multikueue/multikueue.h"

namespace batchd::controllers::multikueue::internal {

using api::Json;

RemoteWatch::RemoteWatch(std::shared_ptr<client::Client> client, const api::KindDef& kind,
                         std::string origin_label, std::string origin, Clock& clock,
                         RemoteWatchOptions opts, std::function<void(const ObjectRef&)> on_change,
                         std::string cluster)
    : client_(std::move(client)),
      kind_(kind),
      origin_label_(std::move(origin_label)),
      origin_(std::move(origin)),
      cluster_(std::move(cluster)),
      clock_(clock),
      opts_(opts),
      on_change_(std::move(on_change)) {
  absl::MutexLock lock(&mu_);
  unsynced_since_ = clock_.Now();
}

RemoteWatch::~RemoteWatch() = default;

bool RemoteWatch::Valid(const Json& obj, std::string* why) const {
  if (!obj.is_object()) {
    *why = "an object that is not a JSON object";
    return false;
  }
  const Json* meta = api::FindMember(obj, "metadata");
  if (meta == nullptr || !meta->is_object()) {
    *why = "an object without metadata";
    return false;
  }
  const Json* name = api::FindMember(*meta, "name");
  const Json* rv = api::FindMember(*meta, "resourceVersion");
  if (name == nullptr || !name->is_string() || name->get_ref<const std::string&>().empty() ||
      rv == nullptr || !rv->is_string()) {
    *why = "an object without metadata.name or metadata.resourceVersion";
    return false;
  }
  if (const Json* ns = api::FindMember(*meta, "namespace"); ns != nullptr && !ns->is_string()) {
    *why = "an object whose metadata.namespace is not a string";
    return false;
  }
  if (api::meta::GetLabel(obj, origin_label_).value_or("") != origin_) {
    *why = absl::StrCat("an object without the label ", origin_label_, "=", origin_);
    return false;
  }
  return true;
}

void RemoteWatch::Notify(const ObjectRef& obj) const {
  if (on_change_) on_change_(obj);
}

void RemoteWatch::Fail(absl::Time now, const std::string& why, bool garbage) {
  watch_.reset();
  next_ = Next::kList;
  const absl::Duration backoff = Backoff();
  const bool first = failures_in_a_row_ == 0;
  ++failures_in_a_row_;
  next_attempt_ = now + backoff;
  absl::MutexLock lock(&mu_);
  if (!unsynced_since_) unsynced_since_ = now;
  synced_ = false;
  ++stats_.failures;
  if (garbage) ++stats_.garbage;
  last_error_ = why;
  // The first failure of a streak is worth a line; its retries are not.
  if (first) {
    BATCHD_LOG_INFO("multikueue: watch of {} on {}: {} (retrying in {})", kind_.plural,
                    cluster_, why, absl::FormatDuration(backoff));
  } else {
    BATCHD_LOG_DEBUG("multikueue: watch of {} on {}: {} (retrying in {})", kind_.plural,
                     cluster_, why, absl::FormatDuration(backoff));
  }
}

absl::Duration RemoteWatch::Backoff() const {
  const int shift = std::min(failures_in_a_row_, 16);
  return std::min(opts_.initial_backoff * (int64_t{1} << shift), opts_.max_backoff);
}

void RemoteWatch::Expire(absl::Time now, const std::string& why) {
  watch_.reset();
  next_ = Next::kList;
  // Relist at once — unless 410s come back to back (a worker that answers
  // nothing else must not be listed in a loop).
  next_attempt_ = failures_in_a_row_ == 0 ? now : now + Backoff();
  ++failures_in_a_row_;
  absl::MutexLock lock(&mu_);
  ++stats_.expired;
  last_error_ = why;
}

void RemoteWatch::Close() {
  if (!watch_) return;
  watch_.reset();
  next_ = Next::kResume;
}

void RemoteWatch::Connect(absl::Time now) {
  client::Selector sel;
  sel.labels = absl::StrCat(origin_label_, "=", origin_);
  if (next_ == Next::kResume) {
    std::string rv;
    {
      absl::MutexLock lock(&mu_);
      rv = resource_version_;
      ++stats_.resumes;
    }
    auto w = client_->Watch(kind_, "", sel, rv);
    if (w.ok()) {
      watch_ = std::move(*w);
      watch_opened_ = now;
      return;
    }
    if (!absl::IsOutOfRange(w.status())) {
      Fail(now, absl::StrCat("resuming the watch: ", w.status().message()), false);
      return;
    }
    Expire(now, std::string(w.status().message()));
    if (next_attempt_ > now) return;
  }
  // A full LIST, then a watch from its resourceVersion.
  {
    absl::MutexLock lock(&mu_);
    ++stats_.lists;
  }
  auto list = client_->List(kind_, "", sel);
  if (!list.ok()) {
    Fail(now, absl::StrCat("listing: ", list.status().message()), false);
    return;
  }
  std::map<std::string, ObjectRef> fresh;
  for (Json& item : list->items) {
    std::string why;
    if (!Valid(item, &why)) {
      Fail(now, absl::StrCat("the list holds ", why), true);
      return;
    }
    auto ref = std::make_shared<const Json>(std::move(item));
    fresh[client::Informer::KeyOf(*ref)] = std::move(ref);
  }
  {
    absl::MutexLock lock(&mu_);
    ++stats_.watches;
  }
  auto w = client_->Watch(kind_, "", sel, list->resource_version);
  if (!w.ok()) {
    if (absl::IsOutOfRange(w.status())) {
      Expire(now, std::string(w.status().message()));
    } else {
      Fail(now, absl::StrCat("watching: ", w.status().message()), false);
    }
    return;
  }
  watch_ = std::move(*w);
  watch_opened_ = now;
  // What changed since the cache was last current (a relist replaces it).
  std::vector<ObjectRef> changed;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [key, obj] : fresh) {
      auto it = objects_.find(key);
      if (it == objects_.end() || *it->second != *obj) changed.push_back(obj);
    }
    for (const auto& [key, obj] : objects_) {
      if (fresh.count(key) == 0) changed.push_back(obj);
    }
    objects_ = std::move(fresh);
    resource_version_ = list->resource_version;
    synced_ = true;
    // unsynced_since_ ends once the watch proves healthy (Pump).
  }
  for (const ObjectRef& o : changed) Notify(o);
}

void RemoteWatch::RetryNow() { retry_now_ = true; }

int RemoteWatch::Pump(absl::Duration wait) {
  const absl::Time now = clock_.Now();
  if (retry_now_.exchange(false)) next_attempt_ = std::min(next_attempt_, now);
  if (watch_ && now - watch_opened_ >= opts_.max_watch_age) {
    // Bounded lifetime: reopen from the last resourceVersion.
    watch_.reset();
    next_ = Next::kResume;
  }
  if (!watch_) {
    if (now < next_attempt_) return 0;
    Connect(now);
    if (!watch_) return 0;
  }
  int n = 0;
  client::WatchEvent ev;
  while (watch_->Next(&ev, n == 0 ? wait : absl::ZeroDuration())) {
    const Json& obj = ev.Object();
    if (ev.type == "ERROR") {
      const int64_t code = obj.is_object() ? api::IntMember(obj, "code", 0) : 0;
      const std::string reason(obj.is_object() ? api::StringMember(obj, "reason") : "");
      if (code == 410 || reason == "Expired" || reason == "Gone") {
        Expire(now, "watch expired: " + (obj.is_object() ? api::CopyStringMember(obj, "message")
                                                          : std::string()));
      } else {
        Fail(now, absl::StrCat("watch error: ", obj.dump().substr(0, 200)), !obj.is_object());
      }
      return n;
    }
    if (ev.type == "BOOKMARK") {
      const Json* meta = obj.is_object() ? api::FindMember(obj, "metadata") : nullptr;
      const Json* rv = meta != nullptr && meta->is_object() ? api::FindMember(*meta, "resourceVersion")
                                                            : nullptr;
      if (rv == nullptr || !rv->is_string()) {
        Fail(now, "a BOOKMARK without metadata.resourceVersion", true);
        return n;
      }
      absl::MutexLock lock(&mu_);
      resource_version_ = rv->get<std::string>();
      continue;
    }
    if (ev.type != "ADDED" && ev.type != "MODIFIED" && ev.type != "DELETED") {
      Fail(now, absl::StrCat("a watch event of type \"", ev.type.substr(0, 40), "\""), true);
      return n;
    }
    std::string why;
    if (!Valid(obj, &why)) {
      Fail(now, absl::StrCat("the watch sent ", why), true);
      return n;
    }
    ObjectRef ref = ev.shared ? ev.shared : std::make_shared<const Json>(std::move(ev.object));
    const std::string key = client::Informer::KeyOf(*ref);
    {
      absl::MutexLock lock(&mu_);
      if (ev.type == "DELETED") {
        objects_.erase(key);
      } else {
        objects_[key] = ref;
      }
      resource_version_ = api::MemberObject(*ref, "metadata").value("resourceVersion", "");
      ++stats_.events;
    }
    Notify(ref);
    ++n;
  }
  if (watch_ && watch_->done()) {
    // Ended without an error (the connection closed): resume.
    watch_.reset();
    next_ = Next::kResume;
    return n;
  }
  if (watch_ && (n > 0 || now - watch_opened_ >= opts_.healthy_after)) {
    // A valid event, or a watch that stayed open: the trouble is over.
    failures_in_a_row_ = 0;
    absl::MutexLock lock(&mu_);
    if (synced_) unsynced_since_.reset();
  }
  return n;
}

bool RemoteWatch::Synced() const {
  absl::MutexLock lock(&mu_);
  return synced_;
}

std::optional<absl::Time> RemoteWatch::UnsyncedSince() const {
  absl::MutexLock lock(&mu_);
  return unsynced_since_;
}

ObjectRef RemoteWatch::Get(const std::string& ns, const std::string& name) const {
  absl::MutexLock lock(&mu_);
  auto it = objects_.find(ns.empty() ? name : ns + "/" + name);
  return it == objects_.end() ? nullptr : it->second;
}

std::vector<ObjectRef> RemoteWatch::List() const {
  absl::MutexLock lock(&mu_);
  std::vector<ObjectRef> out;
  out.reserve(objects_.size());
  for (const auto& [key, obj] : objects_) out.push_back(obj);
  return out;
}

RemoteWatchStats RemoteWatch::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

std::string RemoteWatch::last_error() const {
  absl::MutexLock lock(&mu_);
  return last_error_;
}

// --- WorkerWatches -----------------------------------------------------------

WorkerWatches::WorkerWatches(std::shared_ptr<client::Client> client, const std::string& origin,
                             Clock& clock, const std::string& cluster, RemoteWatchOptions opts) {
  auto make = [&](std::string_view group, std::string_view version, std::string_view plural) {
    return std::make_unique<RemoteWatch>(client, client->Kind(group, version, plural),
                                         kOriginLabel, origin, clock, opts,
                                         [this](const ObjectRef& o) { Changed(o); }, cluster);
  };
  workloads_ = make(api::kueue::kGroup, api::kueue::kStorageVersion, api::kueue::kWorkloads);
  jobs_ = make("batch", "v1", "jobs");
  jobsets_ = make("jobset.x-k8s.io", "v1alpha2", "jobsets");
}

void WorkerWatches::Changed(const ObjectRef& obj) {
  std::string name = api::meta::GetLabel(*obj, kPrebuiltWorkloadLabel).value_or("");
  if (name.empty()) name = api::meta::GetName(*obj);
  std::string key = api::meta::GetNamespace(*obj) + "/" + name;
  absl::MutexLock lock(&mu_);
  changed_.insert(std::move(key));
}

std::vector<std::string> WorkerWatches::TakeChanged() {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> out(changed_.begin(), changed_.end());
  changed_.clear();
  return out;
}

WorkerWatches::~WorkerWatches() { Stop(); }

RemoteWatch* WorkerWatches::For(const std::string& plural) {
  if (plural == "workloads") return workloads_.get();
  if (plural == "jobs") return jobs_.get();
  if (plural == "jobsets") return jobsets_.get();
  return nullptr;
}

void WorkerWatches::RetryNow() {
  workloads_->RetryNow();
  jobs_->RetryNow();
  jobsets_->RetryNow();
}

int WorkerWatches::PumpAll() {
  return workloads_->Pump(absl::ZeroDuration()) + jobs_->Pump(absl::ZeroDuration()) +
         jobsets_->Pump(absl::ZeroDuration());
}

void WorkerWatches::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] {
    SetThreadName("mk-watch");
    while (!stop_) {
      // Each open watch waits a little for its first event; a worker that
      // is down costs one bounded attempt per backoff period, on this
      // thread only.
      workloads_->Pump(absl::Milliseconds(100));
      jobs_->Pump(absl::Milliseconds(50));
      jobsets_->Pump(absl::Milliseconds(50));
      if (!workloads_->open() && !jobs_->open() && !jobsets_->open()) {
        // All waiting out their backoff: do not spin (as the informers do).
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
  });
}

void WorkerWatches::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

}  // namespace batchd::controllers::multikueue::internal
