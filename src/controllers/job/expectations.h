// Bookkeeping that protects the Job controller while its informer lags
// behind its own writes (Kubernetes' ControllerExpectations):
//  - `Expectations`: per job key, creates issued but not yet observed, pod
//    UIDs whose deletion was issued but not observed, and pod UIDs whose
//    tracking-finalizer removal was issued but not observed. While creates
//    or deletes are outstanding the controller does not create or delete
//    more pods; entries expire after 5 minutes (lost watch events).
//  - `PodIndex`: pods grouped by their controlling Job's "ns/name".
//
// Thread-safety: both classes are internally locked; informer handlers and
// reconcile workers may call them concurrently.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "client/informer.h"

namespace batchd::controllers::job {

inline constexpr absl::Duration kExpectationsTimeout = absl::Minutes(5);

class Expectations {
 public:
  // REQUIRES: called before issuing the creates / deletes.
  void ExpectCreations(const std::string& key, int n, absl::Time now);
  void CreationObserved(const std::string& key);
  void ExpectDeletions(const std::string& key, const std::vector<std::string>& uids,
                       absl::Time now);
  void DeletionObserved(const std::string& key, const std::string& uid);
  void ExpectFinalizerRemovals(const std::string& key, const std::vector<std::string>& uids);
  void FinalizerRemovalObserved(const std::string& key, const std::string& uid);

  // True when no creates/deletes are outstanding (or they timed out).
  bool Satisfied(const std::string& key, absl::Time now) const;
  std::set<std::string> PendingFinalizerRemovals(const std::string& key) const;
  void Forget(const std::string& key);

 private:
  struct Entry {
    int creates = 0;
    std::set<std::string> deletes;
    std::set<std::string> finalizers;
    absl::Time set_at;
  };
  mutable absl::Mutex mu_;
  std::map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
};

// The Job "ns/name" that controls `pod` (controller ownerReference of kind
// Job in batch/v1), or "" when none.
std::string ControllingJobKey(const api::Json& pod);

// Holds pod names only: the pods themselves are read from the informer, so
// the index does not keep a settled pod's decoding alive.
class PodIndex {
 public:
  void Upsert(const client::ObjectRef& pod);
  void Remove(const api::Json& pod);
  // Pods whose controller reference names Job `key` (any UID), as `pods`
  // (the informer whose handlers feed this index) has them now.
  // With `skip_settled`, pods the informer keeps compact (settled: terminal,
  // no finalizer, not being deleted; reconcile/settled.h) are left out
  // without being decoded.
  std::vector<client::ObjectRef> For(const std::string& key, const client::Informer& pods,
                                     bool skip_settled = false) const;

 private:
  mutable absl::Mutex mu_;
  // Job key -> names of its pods.
  std::map<std::string, std::set<std::string>> pods_ ABSL_GUARDED_BY(mu_);
};

}  // namespace batchd::controllers::job
