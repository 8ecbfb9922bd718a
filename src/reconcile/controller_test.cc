#include "reconcile/controller.h"

#include <memory>

#include "client/in_process_client.h"
#include "common/clock.h"
#include "gtest/gtest.h"
#include "registry/registry.h"
#include "store/memory/memory_store.h"

namespace batchd::reconcile {
namespace {

// Stop ends the informers' watch threads together. Each notices a stop
// within its 200 ms wait for an event; stopped one after another, the
// server's 30 informers made `batchd server` take about 5 s to exit on
// SIGTERM. A hang check, not a timing: together they take one wait.
TEST(ManagerTest, StopEndsManyInformersTogether) {
  RealClock clock;
  store::MemoryStore store;
  registry::Registry reg(store, api::BuiltinScheme(), clock);
  ASSERT_TRUE(reg.Start().ok());
  client::InProcessClient c(reg);
  Manager m(clock);
  for (int i = 0; i < 30; ++i) {
    m.AddInformer(std::make_unique<client::Informer>(c, c.Kind("batch", "v1", "jobs")));
  }
  ASSERT_TRUE(m.Start().ok());
  const absl::Time start = absl::Now();
  m.Stop();
  const absl::Duration took = absl::Now() - start;
  EXPECT_LT(took, absl::Seconds(2)) << took;  // one by one: 3 to 6 s
}

}  // namespace
}  // namespace batchd::reconcile
