#include "store/observable_store.h"

#include <memory>
#include <string>
#include <vector>

#include "common/testing/fake_clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/memory/memory_store.h"
#include "store/testing/fault_store.h"
#include "store/testing/store_conformance.h"

namespace batchd::store {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Decorators must keep the contract: run the suite through them.
struct ObservableFactory {
  FakeClock clock;
  std::unique_ptr<Store> Make() {
    return std::make_unique<ObservableStore>(std::make_unique<MemoryStore>(), clock);
  }
};

struct FaultFactory {
  MemoryStore inner;
  std::unique_ptr<Store> Make() { return std::make_unique<testing::FaultStore>(inner); }
};

}  // namespace

namespace testing {
using DecoratorFactories = ::testing::Types<ObservableFactory, FaultFactory>;
INSTANTIATE_TYPED_TEST_SUITE_P(Decorators, StoreConformanceTest, DecoratorFactories);
}  // namespace testing

namespace {

TEST(ObservableStoreTest, CountsResultsAndRendersPrometheus) {
  FakeClock clock;
  MemoryStore memory;
  testing::FaultStore slow(memory);
  absl::Duration latency = absl::Milliseconds(3);
  slow.SetHook([&] { clock.Advance(latency); });
  ObservableStore store(slow, clock);

  ASSERT_TRUE(store.Create("/a", "v").ok());
  EXPECT_EQ(store.Create("/a", "v").status().code(), absl::StatusCode::kAlreadyExists);
  latency = absl::Seconds(2);
  EXPECT_EQ(store.Get("/missing").status().code(), absl::StatusCode::kNotFound);
  latency = absl::Microseconds(50);
  ASSERT_TRUE(store.Update("/a", "w", 1).ok());

  EXPECT_EQ(store.Count(ObservableStore::Operation::kCreate, absl::StatusCode::kOk), 1u);
  EXPECT_EQ(store.Count(ObservableStore::Operation::kCreate, absl::StatusCode::kAlreadyExists),
            1u);
  EXPECT_EQ(store.Count(ObservableStore::Operation::kGet, absl::StatusCode::kNotFound), 1u);

  std::string out;
  store.AppendPrometheus(&out);
  struct Case {
    std::string name;
    std::string line;
    bool present;
  };
  std::vector<Case> cases = {
      {"create ok", "batchd_store_operations_total{operation=\"create\",result=\"ok\"} 1\n", true},
      {"create exists",
       "batchd_store_operations_total{operation=\"create\",result=\"already_exists\"} 1\n", true},
      {"get not found",
       "batchd_store_operations_total{operation=\"get\",result=\"not_found\"} 1\n", true},
      {"get ok shown at zero", "batchd_store_operations_total{operation=\"get\",result=\"ok\"} 0\n",
       true},
      {"unseen errors hidden", "result=\"aborted\"", false},
      {"3ms below 2.5ms bucket",
       "batchd_store_operation_duration_seconds_bucket{operation=\"create\",le=\"0.0025\"} 0\n",
       true},
      {"3ms in 5ms bucket",
       "batchd_store_operation_duration_seconds_bucket{operation=\"create\",le=\"0.005\"} 2\n",
       true},
      {"create sum", "batchd_store_operation_duration_seconds_sum{operation=\"create\"} 0.006\n",
       true},
      {"create count", "batchd_store_operation_duration_seconds_count{operation=\"create\"} 2\n",
       true},
      {"2s only in +Inf",
       "batchd_store_operation_duration_seconds_bucket{operation=\"get\",le=\"1\"} 0\n", true},
      {"+Inf", "batchd_store_operation_duration_seconds_bucket{operation=\"get\",le=\"+Inf\"} 1\n",
       true},
      {"50us in first bucket",
       "batchd_store_operation_duration_seconds_bucket{operation=\"update\",le=\"0.0001\"} 1\n",
       true},
      {"types", "# TYPE batchd_store_operation_duration_seconds histogram\n", true},
      {"revision gauge", "batchd_store_revision 2\n", true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    if (c.present) {
      EXPECT_THAT(out, HasSubstr(c.line));
    } else {
      EXPECT_THAT(out, Not(HasSubstr(c.line)));
    }
  }
}

TEST(FaultStoreTest, FailsTheChosenWrites) {
  MemoryStore memory;
  testing::FaultStore store(memory);
  store.FailNthWrite(2, absl::UnavailableError("injected"));
  store.FailNthWrite(3, absl::DeadlineExceededError("lost ack"),
                     testing::FaultStore::Timing::kAfterWrite);
  struct Case {
    std::string name;
    std::string key;
    absl::StatusCode want;
    bool want_stored;
  };
  std::vector<Case> cases = {
      {"first write passes", "/1", absl::StatusCode::kOk, true},
      {"second fails before writing", "/2", absl::StatusCode::kUnavailable, false},
      {"third fails after writing", "/3", absl::StatusCode::kDeadlineExceeded, true},
      {"fourth passes", "/4", absl::StatusCode::kOk, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(store.Create(c.key, "v").status().code(), c.want);
    EXPECT_EQ(memory.Get(c.key).ok(), c.want_stored);
  }
  EXPECT_EQ(store.writes(), 4);
  store.FailAllWrites(absl::UnavailableError("down"));
  EXPECT_EQ(store.Delete("/1", 0).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(store.Get("/1").ok());  // Reads are unaffected.
  store.Clear();
  EXPECT_TRUE(store.Delete("/1", 0).ok());
}

}  // namespace
}  // namespace batchd::store
