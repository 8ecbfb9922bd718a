#include "controllers/gc/event_ttl.h"

#include "api/meta/time_util.h"
#include "common/testing/fake_clock.h"
#include "gtest/gtest.h"
#include "registry/registry.h"
#include "store/memory/memory_store.h"

namespace batchd::controllers {
namespace {

using api::Json;

class EventTtlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(reg_.Start().ok());
    events_ = reg_.scheme().ByResource("", "v1", "events");
    ASSERT_NE(events_, nullptr);
  }
  void CreateEvent(const std::string& name) {
    std::string now = api::meta::FormatRfc3339(clock_.Now());
    Json ev = {{"apiVersion", "v1"},
               {"kind", "Event"},
               {"metadata", {{"name", name}, {"namespace", "default"}}},
               {"involvedObject", {{"kind", "Job"}, {"name", "j"}, {"namespace", "default"}}},
               {"reason", "Test"},
               {"message", "m"},
               {"type", "Normal"},
               {"firstTimestamp", now},
               {"lastTimestamp", now},
               {"count", 1}};
    auto r = reg_.Create(*events_, "default", ev, registry::WriteOptions{});
    ASSERT_TRUE(r.ok()) << r.status();
  }
  // A repeat, as the recorder writes it: count + 1 and a new lastTimestamp.
  void Renew(const std::string& name) {
    auto cur = reg_.Get(*events_, "default", name);
    ASSERT_TRUE(cur.ok());
    Json ev = (*cur)->Decode();
    ev["count"] = ev["count"].get<int>() + 1;
    ev["lastTimestamp"] = api::meta::FormatRfc3339(clock_.Now());
    ASSERT_TRUE(reg_.Update(*events_, "default", name, ev, false, registry::WriteOptions{}).ok());
  }
  bool Exists(const std::string& name) { return reg_.Get(*events_, "default", name).ok(); }

  FakeClock clock_;
  store::MemoryStore store_;
  registry::Registry reg_{store_, api::BuiltinScheme(), clock_};
  const api::KindDef* events_ = nullptr;
};

TEST_F(EventTtlTest, ExpiresEventsTtlAfterTheirLastWrite) {
  EventTtlSweeper sweeper(reg_, clock_, absl::Hours(1));
  EXPECT_EQ(sweeper.interval(), absl::Minutes(1));
  CreateEvent("old");
  clock_.Advance(absl::Minutes(30));
  CreateEvent("young");
  CreateEvent("renewed");
  clock_.Advance(absl::Minutes(29));
  EXPECT_EQ(sweeper.Sweep(), 0);
  clock_.Advance(absl::Minutes(2));  // "old": 61 min
  Renew("renewed");
  EXPECT_EQ(sweeper.Sweep(), 1);
  EXPECT_FALSE(Exists("old"));
  EXPECT_TRUE(Exists("young"));
  clock_.Advance(absl::Minutes(30));  // "young": 61 min, "renewed": 30 min since its repeat
  EXPECT_EQ(sweeper.Sweep(), 1);
  EXPECT_FALSE(Exists("young"));
  EXPECT_TRUE(Exists("renewed"));
  clock_.Advance(absl::Minutes(31));
  EXPECT_EQ(sweeper.Sweep(), 1);
  EXPECT_FALSE(Exists("renewed"));
}

TEST_F(EventTtlTest, ScheduleRunsOnTheClock) {
  EventTtlSweeper sweeper(reg_, clock_, absl::Seconds(5));
  EXPECT_EQ(sweeper.interval(), absl::Seconds(1));
  sweeper.Start();
  CreateEvent("e");
  for (int i = 1; i <= 6; ++i) {
    clock_.Advance(absl::Seconds(1));
    ASSERT_TRUE(sweeper.WaitForSweeps(i, absl::Seconds(60)));
  }
  EXPECT_FALSE(Exists("e"));
}

}  // namespace
}  // namespace batchd::controllers
