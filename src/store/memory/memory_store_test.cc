#include "store/memory/memory_store.h"

#include <memory>

#include "gtest/gtest.h"
#include "store/testing/store_conformance.h"

namespace batchd::store {
namespace {

struct MemoryFactory {
  std::unique_ptr<Store> Make() { return std::make_unique<MemoryStore>(); }
};

}  // namespace

namespace testing {
INSTANTIATE_TYPED_TEST_SUITE_P(Memory, StoreConformanceTest, ::testing::Types<MemoryFactory>);
}  // namespace testing

namespace {

TEST(MemoryStoreTest, HistoryLimitAdvancesOldestWatchableRevision) {
  MemoryStoreOptions options;
  options.history.max_events = 3;
  MemoryStore store(options);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(store.Create("/k" + std::to_string(i), "v").ok());
  // Events 1 and 2 were dropped: watching after 1 would need event 2.
  EXPECT_EQ(store.OldestWatchableRevision(), 2);
  EXPECT_EQ(store.Watch("/", 1, [](const Event&) {}).status().code(),
            absl::StatusCode::kOutOfRange);
  testing::EventRecorder rec;
  auto h = store.Watch("/", 2, rec.Callback());
  ASSERT_TRUE(h.ok()) << h.status();
  ASSERT_TRUE(rec.WaitForCount(3));
  EXPECT_THAT(rec.Revisions(), ::testing::ElementsAre(3, 4, 5));
}

}  // namespace
}  // namespace batchd::store
