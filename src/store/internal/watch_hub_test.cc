#include "store/internal/watch_hub.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace batchd::store::internal {
namespace {

Event Put(const std::string& key, int64_t rev, size_t value_size = 1) {
  Event e;
  e.kv = KeyValue{key, std::string(value_size, 'v'), rev, rev};
  return e;
}

void PublishOne(WatchHub& hub, Event e) {
  std::vector<Event> events;
  events.push_back(std::move(e));
  hub.Publish(std::move(events));
}

TEST(WatchHubTest, StartRevisionIsOldestWatchable) {
  WatchHub hub(41);
  EXPECT_EQ(hub.Revision(), 41);
  EXPECT_EQ(hub.OldestWatchableRevision(), 41);
  struct Case {
    std::string name;
    int64_t after;
    absl::StatusCode want;
  };
  std::vector<Case> cases = {
      {"before start", 40, absl::StatusCode::kOutOfRange},
      {"at start", 41, absl::StatusCode::kOk},
      {"from now", -1, absl::StatusCode::kOk},
      {"future", 100, absl::StatusCode::kOk},
      {"invalid", -2, absl::StatusCode::kInvalidArgument},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(hub.Watch("", c.after, [](const Event&) {}).status().code(), c.want);
  }
  EXPECT_EQ(hub.Watch("", -1, nullptr).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(WatchHubTest, ByteLimitDropsOldestEvents) {
  WatchHubOptions options;
  options.max_bytes = 3 * (sizeof(Event) + 1000);
  WatchHub hub(0, options);
  for (int64_t rev = 1; rev <= 4; ++rev) PublishOne(hub, Put("/k", rev, 990));
  // Four events of ~1000 bytes exceed the budget of three: event 1 dropped.
  EXPECT_EQ(hub.OldestWatchableRevision(), 1);
  EXPECT_EQ(hub.Watch("", 0, [](const Event&) {}).status().code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_TRUE(hub.Watch("", 1, [](const Event&) {}).ok());
}

TEST(WatchHubTest, BatchIsDeliveredInOrderToMatchingWatchers) {
  WatchHub hub(0);
  std::vector<int64_t> a, all;
  auto ha = hub.Watch("/a/", -1, [&](const Event& e) { a.push_back(e.revision()); });
  auto hall = hub.Watch("", -1, [&](const Event& e) { all.push_back(e.revision()); });
  ASSERT_TRUE(ha.ok() && hall.ok());
  std::vector<Event> batch;
  batch.push_back(Put("/a/1", 1));
  batch.push_back(Put("/b/1", 2));
  batch.push_back(Put("/a/2", 3));
  hub.Publish(std::move(batch));
  EXPECT_THAT(a, ::testing::ElementsAre(1, 3));
  EXPECT_THAT(all, ::testing::ElementsAre(1, 2, 3));
  EXPECT_EQ(hub.Revision(), 3);
}

TEST(WatchHubTest, CompactBounds) {
  WatchHub hub(0);
  for (int64_t rev = 1; rev <= 3; ++rev) PublishOne(hub, Put(absl::StrCat("/k", rev), rev));
  EXPECT_EQ(hub.Compact(4).code(), absl::StatusCode::kOutOfRange);
  EXPECT_TRUE(hub.Compact(3).ok());
  EXPECT_EQ(hub.OldestWatchableRevision(), 3);
  EXPECT_TRUE(hub.Compact(1).ok());
  EXPECT_EQ(hub.OldestWatchableRevision(), 3);
}

}  // namespace
}  // namespace batchd::store::internal
