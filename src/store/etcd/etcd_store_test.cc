#include "store/etcd/etcd_store.h"

#include <memory>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "common/testing/fake_clock.h"
#include "store/compactor.h"
#include "store/testing/etcd_process.h"
#include "store/testing/store_conformance.h"

namespace batchd::store {
namespace {

// Without an etcd binary there is nothing to run against: skip, saying so.
class NeedsEtcd : public ::testing::Environment {
 public:
  void SetUp() override {
    if (testing::FindEtcdBinary().empty()) {
      GTEST_SKIP() << "no etcd binary on PATH (install Debian's etcd-server, or set "
                      "BATCHD_ETCD): the etcd store tests are skipped";
    }
  }
};
const auto* const kNeedsEtcd = ::testing::AddGlobalTestEnvironment(new NeedsEtcd);

EtcdOptions TestOptions(const testing::EtcdProcess& etcd) {
  EtcdOptions o;
  o.servers = {etcd.client_url()};
  o.prefix = "/t";
  // A fresh etcd is at revision 1, a fresh Store at 0.
  o.revision_offset = 1;
  return o;
}

// A fresh etcd per test: the suite counts revisions from 0.
struct EtcdFactory {
  std::unique_ptr<testing::EtcdProcess> etcd;
  std::unique_ptr<Store> Make() {
    etcd = std::make_unique<testing::EtcdProcess>();
    absl::Status st = etcd->Start();
    if (!st.ok()) {
      ADD_FAILURE() << st;
      return nullptr;
    }
    auto s = EtcdStore::Open(TestOptions(*etcd));
    if (!s.ok()) {
      ADD_FAILURE() << s.status();
      return nullptr;
    }
    return std::move(*s);
  }
};

}  // namespace

namespace testing {
INSTANTIATE_TYPED_TEST_SUITE_P(Etcd, StoreConformanceTest, ::testing::Types<EtcdFactory>);
}  // namespace testing

}  // namespace batchd::store

namespace batchd::store {
namespace {

// etcd gone: operations fail Unavailable (the API's 503) within the request
// timeout, nothing is lost; when it returns the store recovers by itself and
// its watch resumes with no gap and no duplicate.
TEST(EtcdStoreTest, EtcdDownThenBackRecovers) {
  testing::EtcdProcess etcd;
  ASSERT_TRUE(etcd.Start().ok());
  EtcdOptions o = TestOptions(etcd);
  o.request_timeout = absl::Seconds(3);
  auto s = EtcdStore::Open(o);
  ASSERT_TRUE(s.ok()) << s.status();
  EtcdStore& store = **s;
  testing::EventRecorder rec;
  auto h = store.Watch("/r/", -1, rec.Callback());
  ASSERT_TRUE(h.ok());
  ASSERT_TRUE(store.Create("/r/1", "a").ok());  // 1
  etcd.Kill();
  auto down = store.Create("/r/2", "b");
  EXPECT_EQ(down.status().code(), absl::StatusCode::kUnavailable) << down.status();
  EXPECT_EQ(store.Get("/r/1").status().code(), absl::StatusCode::kUnavailable);
  ASSERT_TRUE(etcd.Restart().ok());
  absl::StatusOr<KeyValue> up;
  for (int i = 0; i < 50; ++i) {  // the first request after the restart may race its leader
    up = store.Create("/r/2", "b");
    if (up.ok() || !absl::IsUnavailable(up.status())) break;
  }
  ASSERT_TRUE(up.ok()) << up.status();
  EXPECT_EQ(up->mod_revision, 2);
  ASSERT_TRUE(store.Update("/r/1", "a2", 1).ok());  // 3
  ASSERT_TRUE(rec.WaitForCount(3));
  EXPECT_THAT(rec.Revisions(), ::testing::ElementsAre(1, 2, 3));
  EXPECT_EQ(store.Get("/r/1")->value, "a2");
}

// Two stores on one fresh etcd: two API server replicas, A and B.
class EtcdTwoReplicasTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(etcd_.Start().ok());
    auto a = EtcdStore::Open(TestOptions(etcd_));
    ASSERT_TRUE(a.ok()) << a.status();
    auto b = EtcdStore::Open(TestOptions(etcd_));
    ASSERT_TRUE(b.ok()) << b.status();
    a_ = std::move(*a);
    b_ = std::move(*b);
  }
  testing::EtcdProcess etcd_;
  std::unique_ptr<EtcdStore> a_, b_;
};

// A write through one is seen by a watch on the other, in revision order,
// with the same revisions.
TEST_F(EtcdTwoReplicasTest, TwoReplicasShareRevisions) {
  testing::EventRecorder on_b;
  auto h = b_->Watch("/x/", 0, on_b.Callback());
  ASSERT_TRUE(h.ok());
  ASSERT_TRUE(a_->Create("/x/1", "v").ok());
  ASSERT_TRUE(b_->Create("/x/2", "v").ok());
  ASSERT_TRUE(a_->Update("/x/1", "w", 1).ok());
  EXPECT_EQ(b_->Update("/x/1", "stale", 1).status().code(), absl::StatusCode::kAborted);
  ASSERT_TRUE(on_b.WaitForCount(3));
  EXPECT_THAT(on_b.Revisions(), ::testing::ElementsAre(1, 2, 3));
  EXPECT_EQ(on_b.Events()[2].kv.value, "w");
  EXPECT_EQ(b_->Get("/x/1")->mod_revision, 3);
}

}  // namespace
}  // namespace batchd::store

namespace batchd::store {
namespace {

// The final value a DeleteWithFinalValue keeps beside the data is bounded:
// a compaction past the delete removes it; Range never shows it.
TEST(EtcdStoreTest, FinalValuesGoAtCompaction) {
  testing::EtcdProcess etcd;
  ASSERT_TRUE(etcd.Start().ok());
  auto s = EtcdStore::Open(TestOptions(etcd));
  ASSERT_TRUE(s.ok()) << s.status();
  EtcdOptions raw_opts = TestOptions(etcd);
  raw_opts.prefix = "";  // sees the whole key space
  auto raw = EtcdStore::Open(raw_opts);
  ASSERT_TRUE(raw.ok()) << raw.status();
  for (int i = 0; i < 3; ++i) {
    const std::string k = "/f/" + std::to_string(i);
    ASSERT_TRUE((*s)->Create(k, "held").ok());
    ASSERT_TRUE((*s)->DeleteWithFinalValue(k, 0, "final").ok());
  }
  auto tombs = (*raw)->Range(std::string("/t\xff"), "", 0);
  ASSERT_TRUE(tombs.ok());
  EXPECT_EQ(tombs->kvs.size(), 3u);
  EXPECT_TRUE((*s)->Range("", "", 0)->kvs.empty());
  EXPECT_EQ((*s)->Create(std::string("\xff/x"), "v").status().code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE((*s)->Compact((*s)->Revision()).ok());
  EXPECT_TRUE((*raw)->Range(std::string("/t\xff"), "", 0)->kvs.empty());
}

}  // namespace
}  // namespace batchd::store

namespace batchd::store {
namespace {

// Fencing: once another replica took the fence over, nothing of the old
// leader's lands, whatever its own view of its lease.
TEST_F(EtcdTwoReplicasTest, FenceStopsAnOldLeader) {
  ASSERT_TRUE(a_->TakeFence("/fence", "a").ok());
  auto k = a_->Create("/k", "v");
  ASSERT_TRUE(k.ok()) << k.status();
  ASSERT_TRUE(a_->Update("/k", "v2", k->mod_revision).ok());
  ASSERT_TRUE(b_->TakeFence("/fence", "b").ok());
  EXPECT_EQ(a_->Create("/k2", "v").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(a_->Update("/k", "v3", 0).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(a_->Delete("/k", 0).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(a_->Get("/k")->value, "v2");
  EXPECT_EQ(a_->Get("/k2").status().code(), absl::StatusCode::kNotFound);
  // The new leader writes; its own ordinary conflicts stay Aborted.
  ASSERT_TRUE(b_->Update("/k", "b", 0).ok());
  EXPECT_EQ(b_->Update("/k", "x", 1).status().code(), absl::StatusCode::kAborted);
  EXPECT_EQ(b_->Create("/k", "x").status().code(), absl::StatusCode::kAlreadyExists);
}

}  // namespace
}  // namespace batchd::store

namespace batchd::store {
namespace {

// kube-apiserver's compaction agreement: two replicas' compactors on one etcd
// compact once per round between them, the loser learns what was compacted,
// and when the winner is gone the other carries on.
TEST_F(EtcdTwoReplicasTest, CompactionAgreementOneCompactsPerRound) {
  EtcdStore* sa = a_.get();
  EtcdStore* sb = b_.get();
  FakeClock clock;
  Compactor ca(*sa, clock, absl::Minutes(5),
               [sa](int64_t t, int64_t r) { return sa->CompactAgreed(t, r); });
  Compactor cb(*sb, clock, absl::Minutes(5),
               [sb](int64_t t, int64_t r) { return sb->CompactAgreed(t, r); });
  ASSERT_TRUE(sa->Create("/c/k", "1").ok());
  // Round 1: a wins (nothing recorded yet: nothing compacted), b loses.
  EXPECT_EQ(*ca.Tick(), 0);
  EXPECT_EQ(*cb.Tick(), 0);
  const int64_t seen_in_round1 = sa->Revision();
  ASSERT_TRUE(sa->Update("/c/k", "2", 0).ok());
  ASSERT_TRUE(sb->Update("/c/k", "3", 0).ok());
  // Round 2: a compacts to what it saw in round 1; b loses and notes it.
  EXPECT_EQ(*ca.Tick(), seen_in_round1);
  EXPECT_EQ(*cb.Tick(), 0);
  EXPECT_EQ(sa->CompactedRevision(), seen_in_round1);
  EXPECT_EQ(sb->CompactedRevision(), seen_in_round1);
  EXPECT_EQ(sb->RangeAtRevision("/c/", "", 0, seen_in_round1 - 1).status().code(),
            absl::StatusCode::kOutOfRange);
  const int64_t seen_in_round2 = sb->Revision();
  ASSERT_TRUE(sb->Update("/c/k", "4", 0).ok());
  // Round 3 without a (gone): b wins and compacts to what it saw in round 2.
  EXPECT_EQ(*cb.Tick(), seen_in_round2);
  EXPECT_EQ(sb->CompactedRevision(), seen_in_round2);
  EXPECT_EQ(sb->Get("/c/k")->value, "4");
  // a comes back: it lost the rounds it missed, so it loses once and then
  // takes turns again; never two compactions in one round.
  EXPECT_EQ(*ca.Tick(), 0);
  EXPECT_EQ(sa->CompactedRevision(), seen_in_round2);
}

}  // namespace
}  // namespace batchd::store
