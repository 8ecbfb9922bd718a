// UpdateLoop (issue #13: the one conflict-retry loop): a stale start is
// re-read and retried, nothing is written when nothing changes, a deleted or
// replaced object ends the loop, and a conflict on every attempt gives up
// with the Conflict after `attempts` tries.
#include "client/update_loop.h"

#include "api/testing/builders.h"
#include "client/in_process_client.h"
#include "common/testing/fake_clock.h"
#include "gtest/gtest.h"
#include "registry/errors.h"
#include "store/memory/memory_store.h"

namespace batchd::client {
namespace {

using api::Json;

class UpdateLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(reg_.Start().ok());
    auto j = c_.Create(jobs_, "default", api::testing::MakeJob("a").Obj());
    ASSERT_TRUE(j.ok()) << j.status();
    job_ = *j;
  }
  std::string Label(const std::string& key) {
    auto j = c_.Get(jobs_, "default", "a");
    return j.ok() ? (*j)["metadata"].value("labels", Json::object()).value(key, "") : "<gone>";
  }
  static std::function<bool(Json&)> SetLabel(const std::string& k, const std::string& v,
                                             int* calls = nullptr) {
    return [k, v, calls](Json& o) {
      if (calls) ++*calls;
      if (o["metadata"].value("labels", Json::object()).value(k, "") == v) return false;
      o["metadata"]["labels"][k] = v;
      return true;
    };
  }

  FakeClock clock_;
  store::MemoryStore store_;
  registry::Registry reg_{store_, api::BuiltinScheme(), clock_};
  InProcessClient c_{reg_};
  const api::KindDef& jobs_ = c_.Kind("batch", "v1", "jobs");
  Json job_;
};

TEST_F(UpdateLoopTest, StaleStartIsReadAgainAndRetried) {
  // Someone else writes after our copy was taken: our first PUT conflicts.
  ASSERT_TRUE(c_.MergePatch(jobs_, "default", "a",
                            Json::parse(R"({"metadata":{"labels":{"other":"1"}}})"))
                  .ok());
  int calls = 0;
  auto r = UpdateLoop(c_, jobs_, "default", "a", job_["metadata"]["uid"], job_,
                      SetLabel("mine", "1", &calls));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, UpdateOutcome::kUpdated);
  EXPECT_EQ(calls, 2);  // the stale copy, then the fresh one
  EXPECT_EQ(Label("mine"), "1");
  EXPECT_EQ(Label("other"), "1");  // the other write is kept
}

TEST_F(UpdateLoopTest, NothingToChangeWritesNothing) {
  auto r = UpdateLoop(c_, jobs_, "default", "a", "", std::nullopt, SetLabel("mine", "1"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, UpdateOutcome::kUpdated);
  const std::string rv = (*c_.Get(jobs_, "default", "a"))["metadata"]["resourceVersion"];
  r = UpdateLoop(c_, jobs_, "default", "a", "", std::nullopt, SetLabel("mine", "1"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, UpdateOutcome::kUnchanged);
  EXPECT_EQ((*c_.Get(jobs_, "default", "a"))["metadata"]["resourceVersion"], rv);
}

TEST_F(UpdateLoopTest, GoneOrReplacedEndsTheLoop) {
  const std::string uid = job_["metadata"]["uid"];
  DeleteOptions bg;
  bg.propagation_policy = "Background";
  ASSERT_TRUE(c_.Delete(jobs_, "default", "a", bg).ok());
  auto r = UpdateLoop(c_, jobs_, "default", "a", uid, std::nullopt, SetLabel("mine", "1"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, UpdateOutcome::kGone);
  // A namesake (another uid) is not ours to change.
  ASSERT_TRUE(c_.Create(jobs_, "default", api::testing::MakeJob("a").Obj()).ok());
  int calls = 0;
  r = UpdateLoop(c_, jobs_, "default", "a", uid, std::nullopt, SetLabel("mine", "1", &calls));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, UpdateOutcome::kGone);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(Label("mine"), "");
  // Replaced between our read and our write: the uid precondition refuses it.
  auto fresh = c_.Get(jobs_, "default", "a");
  ASSERT_TRUE(fresh.ok());
  ASSERT_TRUE(c_.Delete(jobs_, "default", "a", bg).ok());
  ASSERT_TRUE(c_.Create(jobs_, "default", api::testing::MakeJob("a").Obj()).ok());
  r = UpdateLoop(c_, jobs_, "default", "a", (*fresh)["metadata"]["uid"], *fresh,
                 SetLabel("mine", "1"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, UpdateOutcome::kGone);
  EXPECT_EQ(Label("mine"), "");
}

TEST_F(UpdateLoopTest, GivesUpAfterItsAttempts) {
  // Every mutate races with another writer: each PUT conflicts.
  int calls = 0;
  auto racing = [&](Json& o) {
    ++calls;
    EXPECT_TRUE(c_.MergePatch(jobs_, "default", "a",
                              Json{{"metadata", {{"labels", {{"n", std::to_string(calls)}}}}}})
                    .ok());
    o["metadata"]["labels"]["mine"] = "1";
    return true;
  };
  auto r = UpdateLoop(c_, jobs_, "default", "a", "", std::nullopt, racing,
                      UpdateLoopOptions{.attempts = 3});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(registry::GetPayload(r.status()).reason, "Conflict");
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(Label("mine"), "");
}

TEST_F(UpdateLoopTest, StatusWritesTheSubresourceOnly) {
  auto r = UpdateLoop(c_, jobs_, "default", "a", "", std::nullopt,
                      [](Json& o) {
                        o["status"]["active"] = 3;
                        o["metadata"]["labels"]["ignored"] = "1";
                        return true;
                      },
                      UpdateLoopOptions{.status = true});
  ASSERT_TRUE(r.ok()) << r.status();
  const Json got = *c_.Get(jobs_, "default", "a");
  EXPECT_EQ(got["status"].value("active", 0), 3);
  EXPECT_EQ(Label("ignored"), "");
}

}  // namespace
}  // namespace batchd::client
