// Internal to controllers/multikueue: the manager's watches on a worker
// cluster (instead of polling each dispatched workload's copies).
//
// A RemoteWatch keeps a local copy of one kind's objects on one worker that
// carry our origin label (client-go's reflector, on a client::Client):
//
//  - connect: LIST (label selector), then WATCH from the list's
//    resourceVersion;
//  - a watch that ends (the connection closed, the worker restarted) is
//    resumed from the last resourceVersion seen, without a LIST; a resume
//    refused, or an ERROR event with code 410 / reason Expired or Gone,
//    lists again;
//  - a watch open longer than `max_watch_age` is closed and resumed, so a
//    connection that went silent without closing cannot hold forever (the
//    cluster probe, with its request timeout, notices a worker that hangs);
//  - anything that is not what a Kubernetes server sends — an object that
//    is not an object, without metadata.name / resourceVersion, without our
//    origin label, an ERROR event other than 410 — drops the watch and
//    counts as a failure: the cache is unsynced and the next attempt waits
//    a backoff (doubling from `initial_backoff` up to `max_backoff`, reset
//    once a watch delivers a valid event or stays open `healthy_after`).
//
// Every call to the worker is bounded by the Dialer's client timeouts;
// `Pump` is driven either by this watch set's own thread (`Start`, server
// mode) or by the caller (tests, with a FakeClock): never by the admission
// cycle. Bounds: the objects are those of our origin on one worker, which
// the manager created (bounded by the dispatched workloads).
//
// Thread-safety: Pump/Close from one thread at a time; the readers (Get,
// List, Synced, ...) from any thread.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "client/client.h"
#include "client/informer.h"
#include "common/clock.h"

namespace batchd::controllers::multikueue::internal {

using client::ObjectRef;

struct RemoteWatchOptions {
  absl::Duration initial_backoff = absl::Seconds(1);
  absl::Duration max_backoff = absl::Seconds(30);
  absl::Duration max_watch_age = absl::Minutes(5);
  // A watch that delivered a valid event, or stayed open this long, ends a
  // streak of failures (UnsyncedSince).
  absl::Duration healthy_after = absl::Seconds(10);
};

// What a watch did, for tests, metrics and the GET-count comparison.
struct RemoteWatchStats {
  int64_t lists = 0;        // LIST calls
  int64_t watches = 0;      // WATCH calls from a LIST's resourceVersion
  int64_t resumes = 0;      // WATCH calls resumed from the last resourceVersion
  int64_t expired = 0;      // 410s (a resume refused, or an ERROR event)
  int64_t failures = 0;     // failed calls, other ERROR events and garbage
  int64_t garbage = 0;      // of which: answers that are not valid objects/events
  int64_t events = 0;       // valid events applied
};

class RemoteWatch {
 public:
  // `on_change` runs on the pumping thread after the cache changed, with the
  // object (its last state for a deletion); also for each object a re-list
  // adds, changes or removes. It must not block.
  // `cluster` names the worker in logs.
  RemoteWatch(std::shared_ptr<client::Client> client, const api::KindDef& kind,
              std::string origin_label, std::string origin, Clock& clock,
              RemoteWatchOptions opts, std::function<void(const ObjectRef&)> on_change,
              std::string cluster = "");
  ~RemoteWatch();

  // (Re)connects when due, then applies ready events, waiting up to `wait`
  // for the first one. Returns the number of events applied.
  int Pump(absl::Duration wait);
  // Drops the watch (the next Pump resumes it).
  void Close();
  // The next Pump connects at once, backoff or not (the worker was seen
  // back). Thread-safe.
  void RetryNow();

  // Listed and watching: the cache can be trusted to say what is there.
  bool Synced() const;
  // Since when the watch has been in trouble: from its first failure (or
  // its creation) until a watch proves healthy (healthy_after); nullopt
  // while it is. A worker whose watches fail over and over (garbage after
  // each good LIST, say) stays in trouble though Synced() flickers.
  std::optional<absl::Time> UnsyncedSince() const;
  ObjectRef Get(const std::string& ns, const std::string& name) const;
  std::vector<ObjectRef> List() const;
  RemoteWatchStats stats() const;
  std::string last_error() const;
  const api::KindDef& kind() const { return kind_; }
  // Whether a watch is open now (the pumping thread only).
  bool open() const { return watch_ != nullptr; }

 private:
  enum class Next { kList, kResume };
  void Connect(absl::Time now);
  void Fail(absl::Time now, const std::string& why, bool garbage);
  // An ERROR event / refused resume with 410: relist at once.
  void Expire(absl::Time now, const std::string& why);
  absl::Duration Backoff() const;
  bool Valid(const api::Json& obj, std::string* why) const;
  void Notify(const ObjectRef& obj) const;

  std::shared_ptr<client::Client> client_;
  const api::KindDef& kind_;
  const std::string origin_label_, origin_, cluster_;
  Clock& clock_;
  const RemoteWatchOptions opts_;
  std::function<void(const ObjectRef&)> on_change_;

  // Pump's state (one pumping thread).
  std::unique_ptr<client::WatchStream> watch_;
  Next next_ = Next::kList;
  absl::Time next_attempt_ = absl::InfinitePast();
  absl::Time watch_opened_;
  int failures_in_a_row_ = 0;
  std::atomic<bool> retry_now_{false};

  mutable absl::Mutex mu_;
  std::map<std::string, ObjectRef> objects_ ABSL_GUARDED_BY(mu_);
  std::string resource_version_ ABSL_GUARDED_BY(mu_);
  bool synced_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<absl::Time> unsynced_since_ ABSL_GUARDED_BY(mu_);
  RemoteWatchStats stats_ ABSL_GUARDED_BY(mu_);
  std::string last_error_ ABSL_GUARDED_BY(mu_);
};

// The watches the manager keeps on one worker: its Workloads, Jobs and
// JobSets of our origin. `Start` pumps them on a thread of their own
// ("mk-watch"); without it the owner pumps them (PumpAll). Their changes
// are collected as manager Workload keys ("ns/name": a copy's name, or a
// job's prebuilt-workload label), which the owner takes (TakeChanged) and
// enqueues: the thread never calls into a controller, so it may outlive
// them at shutdown.
class WorkerWatches {
 public:
  WorkerWatches(std::shared_ptr<client::Client> client, const std::string& origin, Clock& clock,
                const std::string& cluster, RemoteWatchOptions opts = {});
  ~WorkerWatches();

  void Start();
  void Stop();
  // One round over the three watches (none waits).
  int PumpAll();
  void RetryNow();
  // The manager Workload keys whose copies changed since the last call.
  std::vector<std::string> TakeChanged();

  RemoteWatch& workloads() { return *workloads_; }
  RemoteWatch& jobs() { return *jobs_; }
  RemoteWatch& jobsets() { return *jobsets_; }
  // By plural ("workloads", "jobs", "jobsets"); null for another.
  RemoteWatch* For(const std::string& plural);

 private:
  void Changed(const ObjectRef& obj);

  std::unique_ptr<RemoteWatch> workloads_, jobs_, jobsets_;
  absl::Mutex mu_;
  std::set<std::string> changed_ ABSL_GUARDED_BY(mu_);  // bounded by our copies
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace batchd::controllers::multikueue::internal
