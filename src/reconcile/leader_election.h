// LeaderElector: leader election through a coordination.k8s.io/v1 Lease, as
// client-go's leaderelection package does for kube-controller-manager and
// kube-scheduler (lease 15 s, renew deadline 10 s, retry 2 s), so that of
// several `batchd server` replicas on one shared store exactly one runs
// what must run once (controllers, admission, scheduler, simulated kubelet).
//
// Algorithm (tryAcquireOrRenew): read the Lease (create it when absent,
// holding it); whenever its record changes, note the *local* time it was
// seen; while another holder's record is younger than leaseDurationSeconds
// by that local time, wait; otherwise write ourselves in as holder with a
// compare-and-swap on the Lease's resourceVersion (leaseTransitions + 1 on a
// change of holder). A leader renews every retry period; when it has not
// renewed for `renew_deadline` (< lease duration) it stops at once
// (`on_stopped_leading`; the server exits, as kube-controller-manager does),
// before any other replica may take the Lease over. Only elapsed local
// time counts, so clock offsets between machines do not matter (clock *rate*
// differences beyond lease/renew do, as in Kubernetes).
//
// Unlike client-go, which only polls, a candidate also watches the Lease: a
// renewal is seen when it is written, not up to a poll period (2-4.4 s)
// later, and the next attempt is made when the lease expires by local time
// rather than at the next poll. A leader killed right after a renewal is
// replaced after the lease duration (15 s) instead of ~18 s; the safety
// margin is unchanged (a record can only be seen after it was written, and
// a leader stops at renew_deadline < lease_duration after its renewal).
//
// Thread-safety: TryAcquireOrRenew and CheckDeadline are for tests (one
// thread, FakeClock); Start runs them on the elector's own threads.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "client/client.h"
#include "common/clock.h"

namespace batchd::reconcile {

struct LeaderElectionOptions {
  std::string lease_namespace = "kube-system";
  std::string lease_name = "batchd-controller-manager";
  // Unique per process: "<hostname>_<random hex>" when empty.
  std::string identity;
  absl::Duration lease_duration = absl::Seconds(15);
  absl::Duration renew_deadline = absl::Seconds(10);
  absl::Duration retry_period = absl::Seconds(2);
};

// LeaseDuration > RenewDeadline > 1.2 x RetryPeriod > 0, as client-go requires.
absl::Status ValidateLeaderElection(const LeaderElectionOptions& o);

class LeaderElector {
 public:
  LeaderElector(client::Client& client, Clock& clock, LeaderElectionOptions options,
                std::function<void()> on_started_leading,
                std::function<void()> on_stopped_leading);
  ~LeaderElector();
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  // Campaigns and renews on a thread of its own until Stop.
  void Start();
  // Stops campaigning (a leader does not release the Lease: its successor
  // takes over once the lease duration passed, as without ReleaseOnCancel).
  void Stop();

  // One attempt; true when this process holds the Lease afterwards. Calls
  // on_started_leading on the first success.
  bool TryAcquireOrRenew();
  // Calls on_stopped_leading (once) when leading and the last renewal is
  // renew_deadline old. Returns whether this process still leads.
  bool CheckDeadline();
  // Notes a Lease record seen on the watch (tests call it directly).
  void ObserveLease(const api::Json& lease);
  // How long the campaign waits before its next attempt: the retry period
  // (plus `jitter` x retry period for a candidate), cut short to the moment
  // the current holder's lease expires by local time.
  absl::Duration NextAttemptIn(double jitter);

  bool leading() const { return leading_.load(); }
  const std::string& identity() const { return opts_.identity; }

 private:
  client::Client& client_;
  Clock& clock_;
  LeaderElectionOptions opts_;
  const api::KindDef& lease_kind_;
  std::function<void()> on_started_, on_stopped_;
  std::atomic<bool> leading_{false};
  std::atomic<bool> stopped_leading_{false};

  absl::Mutex mu_;
  // The Lease as last read or written, and the local time its record (its
  // resourceVersion) was first seen.
  std::string observed_rv_ ABSL_GUARDED_BY(mu_);
  absl::Time observed_time_ ABSL_GUARDED_BY(mu_);
  absl::Time last_renew_ ABSL_GUARDED_BY(mu_);
  // The observed record's holder and lease duration.
  std::string observed_holder_ ABSL_GUARDED_BY(mu_);
  absl::Duration observed_duration_ ABSL_GUARDED_BY(mu_) = absl::ZeroDuration();
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread campaign_, watchdog_, observer_;
};

}  // namespace batchd::reconcile
