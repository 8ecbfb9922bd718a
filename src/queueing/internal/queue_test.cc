// Per-ClusterQueue queue (reference §2.2): heap order, inadmissible set and
// bulk requeue, equivalence signatures.
#include "queueing/internal/queue.h"

#include <memory>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "queueing/internal/test_util.h"

namespace batchd::queueing::internal {
namespace {

using namespace batchd::queueing::testing;  // NOLINT

std::unique_ptr<PendingEntry> Entry(Workload wl) {
  auto e = std::make_unique<PendingEntry>();
  e->wl = std::move(wl);
  e->signature = SchedulingSignature(e->wl);
  e->coarse_signature = SchedulingSignature(e->wl, /*with_priority=*/false);
  return e;
}

TEST(QueueTest, HeapOrder) {
  struct Case {
    std::string name;
    std::vector<Workload> in;
    std::vector<std::string> want;  // pop order
  };
  std::vector<Case> cases = {
      {"higher priority first",
       {WlBuilder("a", "q").Priority(1).At(1).Obj(), WlBuilder("b", "q").Priority(5).At(2).Obj()},
       {"ns/b", "ns/a"}},
      {"older queue-order time first",
       {WlBuilder("a", "q").At(5).Obj(), WlBuilder("b", "q").At(2).Obj()},
       {"ns/b", "ns/a"}},
      {"uid breaks ties",
       {WlBuilder("b", "q").At(1).Obj(), WlBuilder("a", "q").At(1).Obj()},
       {"ns/a", "ns/b"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    CqQueue q;
    std::vector<std::unique_ptr<PendingEntry>> owned;
    for (const Workload& w : c.in) {
      owned.push_back(Entry(w));
      q.PushHeap(owned.back().get());
    }
    std::vector<std::string> got;
    while (PendingEntry* e = q.PopHead()) got.push_back(e->wl.key);
    EXPECT_EQ(got, c.want);
  }
}

TEST(QueueTest, InadmissibleReturnInBulkAndEraseWorksEverywhere) {
  CqQueue q;
  auto a = Entry(WlBuilder("a", "q").At(1).Obj());
  auto b = Entry(WlBuilder("b", "q").At(2).Obj());
  auto c = Entry(WlBuilder("c", "q").At(3).Obj());
  q.PushHeap(a.get());
  q.PushInadmissible(b.get());
  q.PushInadmissible(c.get());
  EXPECT_EQ(q.heap_size(), 1u);
  EXPECT_EQ(q.inadmissible_size(), 2u);
  q.Erase(c.get());
  EXPECT_EQ(c->where, PendingEntry::Where::kNone);
  EXPECT_EQ(q.RequeueInadmissible(), 1u);
  EXPECT_EQ(q.heap_size(), 2u);
  EXPECT_EQ(q.Head(), a.get());
  q.Erase(a.get());
  EXPECT_EQ(q.PopHead(), b.get());
  EXPECT_EQ(q.PopHead(), nullptr);
}

// A group across priorities (the coarse signature) returns one workload at a
// time, the best first; the next follows when that one leaves for good or
// goes inadmissible for a reason that may depend on its priority.
TEST(QueueTest, CrossPriorityGroupReleasesOneAtATimeInOrder) {
  CqQueue q;
  auto a = Entry(WlBuilder("a", "q").Cpu(1).Priority(3).At(3).Obj());
  auto b = Entry(WlBuilder("b", "q").Cpu(1).Priority(2).At(1).Obj());
  auto c = Entry(WlBuilder("c", "q").Cpu(1).Priority(1).At(2).Obj());
  ASSERT_EQ(a->coarse_signature, c->coarse_signature);
  ASSERT_NE(a->signature, c->signature);
  ASSERT_NE(a->coarse_signature, a->signature);
  const uint64_t group = a->coarse_signature;
  for (auto* e : {c.get(), a.get(), b.get()}) q.PushInadmissible(e, group);
  EXPECT_EQ(q.inadmissible_size(), 3u);
  // An event returns only the first (the highest priority).
  EXPECT_EQ(q.RequeueInadmissible(), 1u);
  EXPECT_EQ(q.heap_size(), 1u);
  ASSERT_EQ(q.PopHead(), a.get());
  EXPECT_EQ(a->released_from, group);
  // NoFit again, independent of its priority: back first, nothing else moves.
  q.PushInadmissible(a.get(), group);
  EXPECT_EQ(q.heap_size(), 0u);
  EXPECT_EQ(a->released_from, 0u);
  // Again, but now its outcome read its priority (preemption candidates):
  // to its own group, and the next of the shared one is evaluated.
  q.RequeueInadmissible();
  ASSERT_EQ(q.PopHead(), a.get());
  q.PushInadmissible(a.get());
  EXPECT_EQ(a->group, a->signature);
  ASSERT_EQ(q.Head(), b.get());
  EXPECT_EQ(b->released_from, group);
  // b is admitted: c follows.
  ASSERT_EQ(q.PopHead(), b.get());
  q.ReleaseAfter(b.get());
  EXPECT_EQ(q.Head(), c.get());
  EXPECT_EQ(q.inadmissible_size(), 1u);  // a, alone in its own group
  // Erase finds an entry in whichever group it is.
  q.Erase(a.get());
  EXPECT_EQ(q.inadmissible_size(), 0u);
  EXPECT_THAT(q.Inadmissible(), ::testing::IsEmpty());
}

TEST(QueueTest, SignatureIgnoresIdentityButNotRequirements) {
  Workload base = WlBuilder("a", "q").Cpu(1).At(1).Obj();
  struct Case {
    std::string name;
    Workload other;
    bool want_equal;
  };
  std::vector<Case> cases = {
      {"other name and time", WlBuilder("b", "q").Cpu(1).At(9).Obj(), true},
      {"other request", WlBuilder("b", "q").Cpu(2).At(1).Obj(), false},
      {"other priority", WlBuilder("b", "q").Cpu(1).Priority(3).Obj(), false},
      {"other queue", WlBuilder("b", "r").Cpu(1).Obj(), false},
      {"other selector", WlBuilder("b", "q").Cpu(1).Selector("k", "v").Obj(), false},
      {"other count", WlBuilder("b", "q").Cpu(1).Count(2).Obj(), false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(SchedulingSignature(base) == SchedulingSignature(c.other), c.want_equal);
    // Without the priority: the same, except that priority alone differs.
    EXPECT_EQ(SchedulingSignature(base, false) == SchedulingSignature(c.other, false),
              c.want_equal || c.name == "other priority");
  }
}

}  // namespace
}  // namespace batchd::queueing::internal
