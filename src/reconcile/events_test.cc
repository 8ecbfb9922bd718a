#include "reconcile/events.h"

#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "client/in_process_client.h"
#include "common/testing/fake_clock.h"
#include "gtest/gtest.h"
#include "registry/registry.h"
#include "store/memory/memory_store.h"

namespace batchd::reconcile {
namespace {

using api::Json;

class ApiEventRecorderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    reg_ = std::make_unique<registry::Registry>(store_, api::BuiltinScheme(), clock_);
    ASSERT_TRUE(reg_->Start().ok());
    client_ = std::make_unique<client::InProcessClient>(*reg_);
    rec_ = std::make_unique<ApiEventRecorder>(*client_, clock_, "job-controller");
  }
  // reason/message -> (count, lastTimestamp) of the stored Events.
  std::map<std::string, std::pair<int, std::string>> Stored() {
    std::map<std::string, std::pair<int, std::string>> out;
    auto list = client_->List(client_->Kind("", "v1", "events"), "default");
    EXPECT_TRUE(list.ok());
    if (!list.ok()) return out;
    for (const Json& e : list->items) {
      out[e.value("reason", "") + "/" + e.value("message", "")] = {
          e.value("count", 0), e.value("lastTimestamp", "")};
    }
    return out;
  }

  FakeClock clock_;
  store::MemoryStore store_;
  std::unique_ptr<registry::Registry> reg_;
  std::unique_ptr<client::InProcessClient> client_;
  std::unique_ptr<ApiEventRecorder> rec_;
};

Json Pod(const std::string& uid) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", "p"}, {"namespace", "default"}, {"uid", uid}}}};
}

TEST_F(ApiEventRecorderTest, RepeatsAggregateIntoCount) {
  struct Case {
    const char* reason;
    const char* message;
    int times;
  };
  const std::vector<Case> cases = {{"Scheduled", "on n1", 1}, {"Started", "c", 3}};
  for (const Case& c : cases) {
    for (int i = 0; i < c.times; ++i) {
      rec_->Event(Pod("u1"), "Normal", c.reason, c.message);
      clock_.Advance(absl::Seconds(1));
    }
  }
  auto stored = Stored();
  ASSERT_EQ(stored.size(), cases.size());
  for (const Case& c : cases) {
    SCOPED_TRACE(c.reason);
    const auto& [count, last] = stored[std::string(c.reason) + "/" + c.message];
    EXPECT_EQ(count, c.times);
  }
  // The last repeat of Started (t=3s) moved its lastTimestamp.
  EXPECT_EQ(stored["Started/c"].second, "2026-01-01T00:00:03Z");
}

// Components sharing one recorder each name themselves, and one component's
// Event does not aggregate with another's.
TEST_F(ApiEventRecorderTest, ComponentsNameThemselves) {
  ComponentEventRecorder scheduler(*rec_, "default-scheduler");
  scheduler.Event(Pod("u1"), "Normal", "Scheduled", "on n1");
  scheduler.Event(Pod("u1"), "Normal", "Scheduled", "on n1");
  rec_->Event(Pod("u1"), "Normal", "Scheduled", "on n1");
  auto list = client_->List(client_->Kind("", "v1", "events"), "default");
  ASSERT_TRUE(list.ok());
  std::map<std::string, int> counts;
  for (const Json& e : list->items) {
    EXPECT_EQ(e["source"]["component"], e["reportingComponent"]);
    counts[e["reportingComponent"].get<std::string>()] = e.value("count", 0);
  }
  EXPECT_EQ(counts, (std::map<std::string, int>{{"default-scheduler", 2}, {"job-controller", 1}}));
}

// Concurrent repeats of one event are all counted (create races resolve to
// one Event; each repeat then bumps it once).
TEST_F(ApiEventRecorderTest, ConcurrentRepeatsAllCounted) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) rec_->Event(Pod("u2"), "Warning", "FailedScheduling", "full");
    });
  }
  for (auto& t : threads) t.join();
  auto stored = Stored();
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored["FailedScheduling/full"].first, 40);
}

// Asynchronous: Event returns before the write; Flush waits for it. Repeats
// queued together (one CreateMany) are still counted once each, and each
// Event keeps the time it was recorded at.
TEST_F(ApiEventRecorderTest, AsyncWritesQueuedEventsAndCountsRepeats) {
  rec_->StartAsync();
  for (int i = 0; i < 5; ++i) {
    rec_->Event(Pod("u3"), "Normal", "Started", "c");
    clock_.Advance(absl::Seconds(1));
  }
  for (int i = 0; i < 20; ++i) {
    Json pod = Pod("other-" + std::to_string(i));
    pod["metadata"]["name"] = "p" + std::to_string(i);
    rec_->Event(pod, "Normal", "Scheduled", "on n1");
  }
  rec_->Flush();
  auto stored = Stored();
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(stored["Started/c"].first, 5);
  EXPECT_EQ(stored["Started/c"].second, "2026-01-01T00:00:04Z");
  auto list = client_->List(client_->Kind("", "v1", "events"), "default");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->items.size(), 21u);
}

// The destructor writes what is still queued.
TEST_F(ApiEventRecorderTest, AsyncDestructorDrainsTheQueue) {
  rec_->StartAsync();
  for (int i = 0; i < 30; ++i) {
    Json pod = Pod("d-" + std::to_string(i));
    pod["metadata"]["name"] = "d" + std::to_string(i);
    rec_->Event(pod, "Normal", "Created", "c");
  }
  rec_.reset();
  auto list = client_->List(client_->Kind("", "v1", "events"), "default");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->items.size(), 30u);
}

// client-go's aggregation: a repeat within the window (from the last
// repeat) is the same Event; after a quiet window a new Event begins.
TEST_F(ApiEventRecorderTest, RepeatsJoinTheSeriesOnlyWithinTheWindow) {
  rec_ = std::make_unique<ApiEventRecorder>(*client_, clock_, "job-controller",
                                            ApiEventRecorder::Options{absl::Minutes(10), 4096});
  rec_->Event(Pod("w1"), "Warning", "BackOff", "restarting");
  clock_.Advance(absl::Minutes(9));
  rec_->Event(Pod("w1"), "Warning", "BackOff", "restarting");  // 9 min after the first
  clock_.Advance(absl::Minutes(9));
  rec_->Event(Pod("w1"), "Warning", "BackOff", "restarting");  // 9 min after the last
  auto list = client_->List(client_->Kind("", "v1", "events"), "default");
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->items.size(), 1u);
  EXPECT_EQ(list->items[0].value("count", 0), 3);
  EXPECT_EQ(list->items[0].value("firstTimestamp", ""), "2026-01-01T00:00:00Z");
  EXPECT_EQ(list->items[0].value("lastTimestamp", ""), "2026-01-01T00:18:00Z");
  clock_.Advance(absl::Minutes(11));  // quiet for longer than the window
  rec_->Event(Pod("w1"), "Warning", "BackOff", "restarting");
  list = client_->List(client_->Kind("", "v1", "events"), "default");
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->items.size(), 2u);
  std::multiset<int> counts;
  for (const Json& e : list->items) counts.insert(e.value("count", 0));
  EXPECT_EQ(counts, (std::multiset<int>{1, 3}));
  // Another message about the same object is another Event.
  rec_->Event(Pod("w1"), "Warning", "BackOff", "restarting again");
  EXPECT_EQ(client_->List(client_->Kind("", "v1", "events"), "default")->items.size(), 3u);
}

// The cache holds at most max_series series, dropping the least recently
// seen: a repeat of a dropped series is a new Event, one still cached counts.
TEST_F(ApiEventRecorderTest, SeriesCacheIsBounded) {
  rec_ = std::make_unique<ApiEventRecorder>(*client_, clock_, "job-controller",
                                            ApiEventRecorder::Options{absl::Minutes(10), 2});
  rec_->Event(Pod("a"), "Normal", "R", "m");
  clock_.Advance(absl::Seconds(1));
  rec_->Event(Pod("b"), "Normal", "R", "m");
  clock_.Advance(absl::Seconds(1));
  rec_->Event(Pod("a"), "Normal", "R", "m");  // a is the most recent now
  clock_.Advance(absl::Seconds(1));
  rec_->Event(Pod("c"), "Normal", "R", "m");  // drops b
  EXPECT_EQ(rec_->CachedSeries(), 2u);
  clock_.Advance(absl::Seconds(1));
  rec_->Event(Pod("a"), "Normal", "R", "m");  // still cached: count 3
  rec_->Event(Pod("b"), "Normal", "R", "m");  // dropped: a new Event
  EXPECT_EQ(rec_->CachedSeries(), 2u);
  auto list = client_->List(client_->Kind("", "v1", "events"), "default");
  ASSERT_TRUE(list.ok());
  std::map<std::string, std::multiset<int>> counts;
  for (const Json& e : list->items) {
    counts[e["involvedObject"]["uid"].get<std::string>()].insert(e.value("count", 0));
  }
  EXPECT_EQ(counts["a"], (std::multiset<int>{3}));
  EXPECT_EQ(counts["b"], (std::multiset<int>{1, 1}));
  EXPECT_EQ(counts["c"], (std::multiset<int>{1}));
}

// Asynchronous: the repeats of one batch are one write (a create carrying
// the count, then one patch for the next batch), and a batch with nothing
// new writes nothing.
TEST_F(ApiEventRecorderTest, AsyncRepeatsOfABatchAreOneWrite) {
  rec_->StartAsync(10000, absl::Hours(1));  // only Flush ends a batch
  const int64_t r0 = store_.Revision();
  for (int i = 0; i < 5; ++i) {
    rec_->Event(Pod("s1"), "Warning", "FailedScheduling", "full");
    clock_.Advance(absl::Seconds(1));
  }
  rec_->Flush();
  EXPECT_EQ(store_.Revision(), r0 + 1);  // one create, count 5
  EXPECT_EQ(Stored()["FailedScheduling/full"], (std::pair<int, std::string>{5, "2026-01-01T00:00:04Z"}));
  for (int i = 0; i < 3; ++i) rec_->Event(Pod("s1"), "Warning", "FailedScheduling", "full");
  rec_->Flush();
  EXPECT_EQ(store_.Revision(), r0 + 2);  // one patch
  EXPECT_EQ(Stored()["FailedScheduling/full"].first, 8);
  rec_->Flush();
  EXPECT_EQ(store_.Revision(), r0 + 2);
}

// A repeat whose Event is gone (expired by the TTL, or deleted) creates it
// again with the series' count, as client-go does when its patch finds nothing.
TEST_F(ApiEventRecorderTest, RepeatOfAGoneEventRecreatesIt) {
  rec_->Event(Pod("g1"), "Normal", "Pulled", "image");
  auto list = client_->List(client_->Kind("", "v1", "events"), "default");
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->items.size(), 1u);
  const std::string name = list->items[0]["metadata"]["name"];
  ASSERT_TRUE(client_->Delete(client_->Kind("", "v1", "events"), "default", name).ok());
  clock_.Advance(absl::Seconds(5));
  rec_->Event(Pod("g1"), "Normal", "Pulled", "image");
  EXPECT_EQ(Stored()["Pulled/image"], (std::pair<int, std::string>{2, "2026-01-01T00:00:05Z"}));
}

}  // namespace
}  // namespace batchd::reconcile
