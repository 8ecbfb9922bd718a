#include "reconcile/leader_election.h"

#include <memory>
#include <string>
#include <vector>

#include "client/in_process_client.h"
#include "common/testing/fake_clock.h"
#include "gtest/gtest.h"
#include "reconcile/context.h"
#include "reconcile/controller.h"
#include "registry/registry.h"
#include "store/memory/memory_store.h"

namespace batchd::reconcile {
namespace {

using api::Json;

class LeaderElectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    reg_ = std::make_unique<registry::Registry>(store_, api::BuiltinScheme(), clock_);
    ASSERT_TRUE(reg_->Start().ok());
    client_ = std::make_unique<client::InProcessClient>(*reg_);
    Json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "kube-system"}}}};
    (void)client_->Create(client_->Kind("", "v1", "namespaces"), "", ns);
  }
  std::unique_ptr<LeaderElector> Elector(const std::string& id, int* started, int* stopped) {
    LeaderElectionOptions o;
    o.identity = id;
    return std::make_unique<LeaderElector>(
        *client_, clock_, o, [started] { ++*started; }, [stopped] { ++*stopped; });
  }
  Json Lease() {
    auto l = client_->Get(client_->Kind("coordination.k8s.io", "v1", "leases"), "kube-system",
                          "batchd-controller-manager");
    EXPECT_TRUE(l.ok()) << l.status();
    return l.ok() ? (*l)["spec"] : Json();
  }

  FakeClock clock_;
  store::MemoryStore store_;
  std::unique_ptr<registry::Registry> reg_;
  std::unique_ptr<client::InProcessClient> client_;
};

TEST_F(LeaderElectionTest, OneLeaderAndTakeoverOnlyAfterTheLeaseExpires) {
  int a_started = 0, a_stopped = 0, b_started = 0, b_stopped = 0;
  auto a = Elector("a", &a_started, &a_stopped);
  auto b = Elector("b", &b_started, &b_stopped);
  ASSERT_TRUE(a->TryAcquireOrRenew());
  EXPECT_EQ(a_started, 1);
  EXPECT_FALSE(b->TryAcquireOrRenew());  // t=0: first seen now
  EXPECT_EQ(Lease()["holderIdentity"], "a");
  EXPECT_EQ(Lease()["leaseDurationSeconds"], 15);

  clock_.Advance(absl::Seconds(8));
  ASSERT_TRUE(a->TryAcquireOrRenew());  // renewed at t=8
  EXPECT_EQ(a_started, 1);              // started once
  EXPECT_FALSE(b->TryAcquireOrRenew());  // the new record is seen at t=8

  // a stops renewing (paused, partitioned). It stops leading at t=18, the
  // renew deadline after its last renewal...
  clock_.Advance(absl::Seconds(9));  // t=17
  EXPECT_TRUE(a->CheckDeadline());
  EXPECT_FALSE(b->TryAcquireOrRenew());
  clock_.Advance(absl::Seconds(1));  // t=18
  EXPECT_FALSE(a->CheckDeadline());
  EXPECT_EQ(a_stopped, 1);
  EXPECT_FALSE(a->leading());
  // ...and b may take over only at t=23, 15 s after it saw the last renewal.
  clock_.Advance(absl::Seconds(4) + absl::Milliseconds(900));  // t=22.9
  EXPECT_FALSE(b->TryAcquireOrRenew());
  EXPECT_EQ(Lease()["holderIdentity"], "a");
  clock_.Advance(absl::Milliseconds(100));  // t=23
  ASSERT_TRUE(b->TryAcquireOrRenew());
  EXPECT_EQ(b_started, 1);
  EXPECT_EQ(Lease()["holderIdentity"], "b");
  EXPECT_EQ(Lease()["leaseTransitions"], 1);
  // A replica that stopped leading never writes the Lease again.
  EXPECT_FALSE(a->TryAcquireOrRenew());
  EXPECT_EQ(Lease()["holderIdentity"], "b");
  EXPECT_EQ(a_started, 1);
  EXPECT_EQ(b_stopped, 0);
}

TEST_F(LeaderElectionTest, TwoCandidatesOneHolder) {
  int s1 = 0, s2 = 0, x = 0;
  auto a = Elector("a", &s1, &x);
  auto b = Elector("b", &s2, &x);
  // The first creates the Lease; the second finds it held and waits.
  bool ra = a->TryAcquireOrRenew();
  bool rb = b->TryAcquireOrRenew();
  EXPECT_NE(ra, rb);
  EXPECT_EQ(s1 + s2, 1);
}

// A candidate that sees each renewal on its watch when it is written counts
// the lease from then, and its next attempt falls on the expiry instead of
// the next poll.
TEST_F(LeaderElectionTest, WatchedRenewalCountsFromWhenItWasWritten) {
  int a_started = 0, b_started = 0, x = 0;
  auto a = Elector("a", &a_started, &x);
  auto b = Elector("b", &b_started, &x);
  ASSERT_TRUE(a->TryAcquireOrRenew());
  EXPECT_FALSE(b->TryAcquireOrRenew());  // t=0: the record is seen at once
  // While nothing is known to expire soon, a candidate waits its poll
  // period: retry (2 s) plus jitter x retry.
  EXPECT_EQ(b->NextAttemptIn(0.5), absl::Seconds(3));
  EXPECT_EQ(a->NextAttemptIn(0.5), absl::Seconds(2));  // the leader renews every retry period

  clock_.Advance(absl::Seconds(2));
  ASSERT_TRUE(a->TryAcquireOrRenew());  // renewed at t=2
  auto lease = client_->Get(client_->Kind("coordination.k8s.io", "v1", "leases"), "kube-system",
                            "batchd-controller-manager");
  ASSERT_TRUE(lease.ok());
  b->ObserveLease(*lease);  // seen on the watch at t=2
  b->ObserveLease(*lease);  // the same record again changes nothing

  // a dies. At t=16 b's next attempt is due at the expiry (t=17 + 1 ms),
  // sooner than its poll period.
  clock_.Advance(absl::Seconds(14));
  EXPECT_EQ(b->NextAttemptIn(1.2), absl::Seconds(1) + absl::Milliseconds(1));
  clock_.Advance(absl::Seconds(1) - absl::Milliseconds(1));  // t=16.999
  EXPECT_FALSE(b->TryAcquireOrRenew());
  clock_.Advance(absl::Milliseconds(2));  // t=17.001
  EXPECT_EQ(b->NextAttemptIn(1.2), absl::Milliseconds(1));
  ASSERT_TRUE(b->TryAcquireOrRenew());
  EXPECT_EQ(b_started, 1);
  EXPECT_EQ(Lease()["holderIdentity"], "b");
  // a stopped leading at t=12, its renew deadline, well before.
  EXPECT_FALSE(a->CheckDeadline());
}

// Watch events that are not a Lease record are ignored.
TEST_F(LeaderElectionTest, ObserveIgnoresMalformedRecords) {
  int s = 0, x = 0;
  auto b = Elector("b", &s, &x);
  b->ObserveLease(Json());
  b->ObserveLease(Json::object());
  b->ObserveLease({{"metadata", {{"resourceVersion", "7"}}}, {"spec", "x"}});
  EXPECT_EQ(b->NextAttemptIn(0.0), absl::Seconds(2));
  ASSERT_TRUE(b->TryAcquireOrRenew());
}

// A standby's informers are listed and watching and fill the controllers'
// queues (Manager::StartInformers, what every replica runs), but nothing is
// reconciled until it leads (StartControllers): leading needs no relist.
class RecordingReconciler : public Reconciler {
 public:
  absl::StatusOr<Result> Reconcile(const std::string& key) override {
    absl::MutexLock lock(&mu_);
    keys_.push_back(key);
    return Result::Done();
  }
  bool WaitFor(size_t n) {
    absl::MutexLock lock(&mu_);
    auto done = [this, n]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return keys_.size() >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&done), absl::Seconds(30));
  }
  size_t Count() {
    absl::MutexLock lock(&mu_);
    return keys_.size();
  }

 private:
  absl::Mutex mu_;
  std::vector<std::string> keys_ ABSL_GUARDED_BY(mu_);
};

TEST_F(LeaderElectionTest, StandbyInformersAreWarmControllersWaitForLeading) {
  const api::KindDef& cms = client_->Kind("", "v1", "configmaps");
  Json cm = {{"apiVersion", "v1"},
             {"kind", "ConfigMap"},
             {"metadata", {{"name", "c1"}, {"namespace", "kube-system"}}}};
  ASSERT_TRUE(client_->Create(cms, "kube-system", cm).ok());
  RecordingReconciler rec;
  Manager m(clock_);
  InformerFactory informers(*client_, m);
  client::Informer& inf = informers.For(cms);
  Controller& c = m.AddController(std::make_unique<Controller>("cm", rec, clock_));
  inf.AddHandlers({.on_add = [&c](const client::ObjectRef& o) { c.Enqueue(*o); }});
  EXPECT_EQ(m.UnsyncedInformers().size(), 1u);
  ASSERT_TRUE(m.StartInformers().ok());
  ASSERT_TRUE(m.StartInformers().ok());  // a second call starts nothing more
  EXPECT_TRUE(m.UnsyncedInformers().empty());
  EXPECT_EQ(inf.List().size(), 1u);
  EXPECT_EQ(c.queue().Len(), 1u);  // queued while standing by...
  EXPECT_EQ(rec.Count(), 0u);      // ...and not reconciled
  m.StartControllers(1);
  EXPECT_TRUE(rec.WaitFor(1));
  m.Stop();
}

TEST(LeaderElectionOptionsTest, Validation) {
  LeaderElectionOptions o;
  EXPECT_TRUE(ValidateLeaderElection(o).ok());
  o.renew_deadline = absl::Seconds(15);
  EXPECT_FALSE(ValidateLeaderElection(o).ok());
  o = {};
  o.retry_period = absl::Seconds(9);  // 1.2 x 9 > 10
  EXPECT_FALSE(ValidateLeaderElection(o).ok());
  o = {};
  o.retry_period = absl::ZeroDuration();
  EXPECT_FALSE(ValidateLeaderElection(o).ok());
}

}  // namespace
}  // namespace batchd::reconcile
