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
// one Event; each repeat then bumps it once). The spam filter is off: its
// 25-Event burst would leave the written count to the threads' timing.
TEST_F(ApiEventRecorderTest, ConcurrentRepeatsAllCounted) {
  ApiEventRecorder::Options opts;
  opts.spam_burst = 0;
  rec_ = std::make_unique<ApiEventRecorder>(*client_, clock_, "job-controller", opts);
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

namespace batchd::reconcile {
namespace {

// AggregatedEvent: one Event object per (object, type, reason) whatever the
// message; repeats bump the count and carry the latest message (a
// workload's admission decisions). Plain Events with other messages stay apart.
TEST_F(ApiEventRecorderTest, AggregatedEventsKeepOneObjectPerReason) {
  rec_->AggregatedEvent(Pod("u1"), "Normal", "Pending", "waiting for 2 cpu");
  clock_.Advance(absl::Seconds(1));
  rec_->AggregatedEvent(Pod("u1"), "Normal", "Pending", "waiting for 1 cpu");
  rec_->AggregatedEvent(Pod("u1"), "Normal", "Pending", "waiting for 1 cpu");
  rec_->AggregatedEvent(Pod("u1"), "Normal", "QuotaReserved", "reserved");
  rec_->AggregatedEvent(Pod("u2"), "Normal", "Pending", "other object");
  auto stored = Stored();
  ASSERT_EQ(stored.size(), 3u);
  EXPECT_EQ(stored["Pending/waiting for 1 cpu"].first, 3);
  EXPECT_EQ(stored.count("Pending/waiting for 2 cpu"), 0u);
  EXPECT_EQ(stored["QuotaReserved/reserved"].first, 1);
  EXPECT_EQ(stored["Pending/other object"].first, 1);
  ComponentEventRecorder kueue(*rec_, "kueue-admission");
  kueue.AggregatedEvent(Pod("u1"), "Normal", "Pending", "from another component");
  EXPECT_EQ(Stored().size(), 4u) << "one object per component too";
}

}  // namespace
}  // namespace batchd::reconcile

namespace batchd::reconcile {
namespace {

Json Job(const std::string& name) {
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata", {{"name", name}, {"namespace", "default"}, {"uid", "uid-" + name}}}};
}

// client-go's EventCorrelator, run synchronously (false) and through the
// asynchronous sink (true): the same Events give the same stored Events.
class EventCorrelationTest : public ApiEventRecorderTest,
                             public ::testing::WithParamInterface<bool> {
 protected:
  void SetUp() override {
    ApiEventRecorderTest::SetUp();
    Use(ApiEventRecorder::Options());
  }
  void Use(ApiEventRecorder::Options opts) {
    rec_ = std::make_unique<ApiEventRecorder>(*client_, clock_, "job-controller", opts);
    if (GetParam()) rec_->StartAsync(10000, absl::Hours(1));  // only Flush ends a batch
  }
  // Writes what the async sink holds (nothing to do when synchronous).
  void Sync() {
    if (GetParam()) rec_->Flush();
  }
  // The stored Events about `name`: message -> count.
  std::map<std::string, int> About(const std::string& name) {
    Sync();
    std::map<std::string, int> out;
    auto list = client_->List(client_->Kind("", "v1", "events"), "default");
    EXPECT_TRUE(list.ok());
    if (!list.ok()) return out;
    for (const Json& e : list->items) {
      if (e["involvedObject"].value("name", "") != name) continue;
      std::string k = e.value("reason", "") + "/" + e.value("message", "");
      EXPECT_EQ(out.count(k), 0u) << "two Events " << k;
      out[k] = e.value("count", 0);
    }
    return out;
  }
};

INSTANTIATE_TEST_SUITE_P(SyncAndAsync, EventCorrelationTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return p.param ? std::string("Async") : std::string("Sync");
                         });

// Nine messages of one (object, component, type, reason) keep their own
// Events; the tenth distinct message and every later one join one Event,
// "(combined from similar events): <latest>", its count raised; repeats of
// the first nine still count in their own Events.
TEST_P(EventCorrelationTest, TheTenthSimilarMessageIsCombined) {
  std::map<std::string, int> want;
  for (int i = 0; i < 9; ++i) {
    rec_->Event(Job("j"), "Normal", "SuccessfulCreate", "Created pod: p" + std::to_string(i));
    want["SuccessfulCreate/Created pod: p" + std::to_string(i)] = 1;
    clock_.Advance(absl::Seconds(1));
  }
  EXPECT_EQ(About("j"), want);
  EXPECT_EQ(rec_->GetStats().combined, 0u);

  rec_->Event(Job("j"), "Normal", "SuccessfulCreate", "Created pod: p9");
  want["SuccessfulCreate/(combined from similar events): Created pod: p9"] = 1;
  EXPECT_EQ(About("j"), want);

  clock_.Advance(absl::Seconds(1));
  rec_->Event(Job("j"), "Normal", "SuccessfulCreate", "Created pod: p10");
  want.erase("SuccessfulCreate/(combined from similar events): Created pod: p9");
  want["SuccessfulCreate/(combined from similar events): Created pod: p10"] = 2;
  EXPECT_EQ(About("j"), want);
  // The combined Event moved on to the latest occurrence.
  auto list = client_->List(client_->Kind("", "v1", "events"), "default");
  ASSERT_TRUE(list.ok());
  for (const Json& e : list->items) {
    if (e.value("message", "").starts_with(ApiEventRecorder::kCombinedPrefix)) {
      EXPECT_EQ(e.value("firstTimestamp", ""), "2026-01-01T00:00:09Z");
      EXPECT_EQ(e.value("lastTimestamp", ""), "2026-01-01T00:00:10Z");
    }
  }

  // Exact repeats of the first nine still count in their own Events; the
  // tenth message again joins the combined one.
  rec_->Event(Job("j"), "Normal", "SuccessfulCreate", "Created pod: p3");
  rec_->Event(Job("j"), "Normal", "SuccessfulCreate", "Created pod: p3");
  want["SuccessfulCreate/Created pod: p3"] = 3;
  rec_->Event(Job("j"), "Normal", "SuccessfulCreate", "Created pod: p9");
  want.erase("SuccessfulCreate/(combined from similar events): Created pod: p10");
  want["SuccessfulCreate/(combined from similar events): Created pod: p9"] = 3;
  EXPECT_EQ(About("j"), want);
  EXPECT_EQ(rec_->GetStats().combined, 3u);
  EXPECT_EQ(rec_->GetStats().dropped_spam, 0u);
}

// Similar means the same object, component, type and reason: nine messages
// in each of several groups that differ in one of them combine nothing.
TEST_P(EventCorrelationTest, OtherReasonsTypesObjectsAndComponentsStayApart) {
  ComponentEventRecorder other(*rec_, "other-controller");
  // Nine distinct messages (`prefix`0..8) in one group.
  auto nine = [](EventRecorder& r, const Json& obj, const std::string& type,
                 const std::string& reason, const std::string& prefix) {
    for (int i = 0; i < 9; ++i) r.Event(obj, type, reason, prefix + std::to_string(i));
  };
  nine(*rec_, Job("a"), "Normal", "R1", "m");
  nine(*rec_, Job("a"), "Normal", "R2", "m");   // another reason
  nine(*rec_, Job("b"), "Normal", "R1", "m");   // another object
  nine(*rec_, Job("b"), "Warning", "R1", "w");  // another type
  nine(other, Job("a"), "Normal", "R1", "o");   // another component
  EXPECT_EQ(About("a").size(), 27u);
  EXPECT_EQ(About("b").size(), 18u);
  EXPECT_EQ(rec_->GetStats().combined, 0u);
  // A tenth message combines in its own group only.
  rec_->Event(Job("a"), "Normal", "R2", "m9");
  std::map<std::string, int> a = About("a");
  EXPECT_EQ(a.size(), 28u);
  EXPECT_EQ(a["R2/(combined from similar events): m9"], 1);
  EXPECT_EQ(About("b").size(), 18u);
  EXPECT_EQ(rec_->GetStats().combined, 1u);
}

// The group counts distinct messages while each follows the previous one
// within 10 minutes; a longer quiet period starts it again.
TEST_P(EventCorrelationTest, SimilarMessagesCountWithinTenMinutes) {
  for (int i = 0; i < 9; ++i) {
    rec_->Event(Job("slow"), "Normal", "R", "m" + std::to_string(i));
    rec_->Event(Job("fast"), "Normal", "R", "m" + std::to_string(i));
    clock_.Advance(absl::Minutes(1));
  }
  clock_.Advance(absl::Minutes(9));  // 10 minutes after the ninth: still one group
  rec_->Event(Job("fast"), "Normal", "R", "m9");
  clock_.Advance(absl::Minutes(10) + absl::Seconds(1));  // quiet for longer than 10 minutes
  rec_->Event(Job("slow"), "Normal", "R", "m9");
  std::map<std::string, int> fast = About("fast"), slow = About("slow");
  EXPECT_EQ(fast.size(), 10u);
  EXPECT_EQ(fast["R/(combined from similar events): m9"], 1);
  EXPECT_EQ(slow.size(), 10u);
  EXPECT_EQ(slow["R/m9"], 1);
  EXPECT_EQ(slow.count("R/(combined from similar events): m9"), 0u);
}

// The spam filter: a component may write 25 Events about an object, then
// one per 5 minutes; an Event over it is not written (and is counted), yet
// it counts in its series, whose next write carries it.
TEST_P(EventCorrelationTest, SpamFilterDropsThe26thAndAdmitsOneEveryFiveMinutes) {
  ComponentEventRecorder other(*rec_, "other-controller");
  std::map<std::string, int> want;
  for (int i = 0; i < 25; ++i) {  // distinct reasons: nothing combines
    rec_->Event(Job("s"), "Normal", "R" + std::to_string(i), "m");
    want["R" + std::to_string(i) + "/m"] = 1;
  }
  EXPECT_EQ(About("s"), want);
  rec_->Event(Job("s"), "Normal", "R25", "m");  // the 26th: dropped
  rec_->Event(Job("s"), "Normal", "R0", "m");   // a repeat: dropped too
  EXPECT_EQ(About("s"), want);
  EXPECT_EQ(rec_->GetStats().dropped_spam, 2u);
  // Other objects and other components have buckets of their own.
  rec_->Event(Job("t"), "Normal", "R0", "m");
  other.Event(Job("s"), "Normal", "Other", "m");
  want["Other/m"] = 1;
  EXPECT_EQ(About("s"), want);
  EXPECT_EQ(About("t").size(), 1u);

  clock_.Advance(absl::Minutes(5) - absl::Seconds(1));
  rec_->Event(Job("s"), "Normal", "R26", "m");  // not a whole token yet
  EXPECT_EQ(About("s"), want);
  clock_.Advance(absl::Seconds(1));  // 5 minutes: one token
  rec_->Event(Job("s"), "Normal", "R0", "m");
  want["R0/m"] = 3;  // the first, the dropped repeat and this one
  EXPECT_EQ(About("s"), want);
  rec_->Event(Job("s"), "Normal", "R27", "m");  // the token is spent
  EXPECT_EQ(About("s"), want);
  EXPECT_EQ(rec_->GetStats().dropped_spam, 4u);

  clock_.Advance(absl::Minutes(5));
  rec_->Event(Job("s"), "Normal", "R25", "m");  // its dropped first occurrence counts
  want["R25/m"] = 2;
  EXPECT_EQ(About("s"), want);
  std::string metrics;
  rec_->AppendPrometheus(&metrics);
  EXPECT_NE(metrics.find("batchd_events_dropped_total{reason=\"spam_filter\"} 4\n"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("batchd_events_dropped_total{reason=\"queue_full\"} 0\n"),
            std::string::npos)
      << metrics;
}

// Combined Events and repeats spend the same bucket: a Job creating 100
// pods writes 9 Events and a combined one, whose count stops at the 25th
// Event until the bucket refills.
TEST_P(EventCorrelationTest, HundredPodsOfOneJob) {
  for (int i = 0; i < 100; ++i) {
    rec_->Event(Job("big"), "Normal", "SuccessfulCreate", "Created pod: big-" + std::to_string(i));
  }
  std::map<std::string, int> got = About("big");
  EXPECT_EQ(got.size(), 10u);
  // In the 25 Events the bucket admits: 9 of their own, 16 combined. The
  // 75 dropped ones still count in the combined series (91 in memory), and
  // its next Event let through writes them.
  const std::string combined = "SuccessfulCreate/(combined from similar events): Created pod: big-";
  int combined_count = 0;
  for (const auto& [k, count] : got) {
    if (k.starts_with(combined)) combined_count = count;
  }
  EXPECT_EQ(combined_count, 16);
  EXPECT_EQ(rec_->GetStats().dropped_spam, 75u);
  EXPECT_EQ(rec_->GetStats().combined, 91u);
  clock_.Advance(absl::Minutes(5));
  rec_->Event(Job("big"), "Normal", "SuccessfulCreate", "Created pod: big-100");
  got = About("big");
  EXPECT_EQ(got[combined + "100"], 92);
}

// The bounds: at most max_similar_groups groups and max_spam_keys buckets,
// the least recently used forgotten first (a forgotten bucket starts full,
// a forgotten group counts from zero).
TEST_P(EventCorrelationTest, CachesAreBounded) {
  ApiEventRecorder::Options opts;
  opts.spam_burst = 1;
  opts.max_spam_keys = 2;
  opts.similar_max_messages = 2;  // the second distinct message combines
  opts.max_similar_groups = 2;
  Use(opts);
  rec_->Event(Job("a"), "Normal", "R", "m1");  // a's token spent; group a: {m1}
  rec_->Event(Job("a"), "Normal", "R", "m2");  // dropped (and combined)
  rec_->Event(Job("b"), "Normal", "R", "m1");
  rec_->Event(Job("c"), "Normal", "R", "m1");  // forgets a's bucket and group
  ApiEventRecorder::Stats st = rec_->GetStats();
  EXPECT_EQ(st.spam_keys, 2u);
  EXPECT_EQ(st.similar_groups, 2u);
  EXPECT_EQ(st.dropped_spam, 1u);
  EXPECT_EQ(st.combined, 1u);
  // a again: a full bucket, and a group that has seen no message.
  rec_->Event(Job("a"), "Normal", "R", "m3");
  EXPECT_EQ(About("a"), (std::map<std::string, int>{{"R/m1", 1}, {"R/m3", 1}}));
  st = rec_->GetStats();
  EXPECT_EQ(st.spam_keys, 2u);
  EXPECT_EQ(st.similar_groups, 2u);
  EXPECT_EQ(st.dropped_spam, 1u);
  EXPECT_EQ(st.combined, 1u);
  // c is still known: its bucket is empty, its group has m1.
  rec_->Event(Job("c"), "Normal", "R", "m2");
  st = rec_->GetStats();
  EXPECT_EQ(st.dropped_spam, 2u);
  EXPECT_EQ(st.combined, 2u);
  EXPECT_EQ(About("c"), (std::map<std::string, int>{{"R/m1", 1}}));
}

}  // namespace
}  // namespace batchd::reconcile
