#include "registry/server_side_apply.h"

#include <utility>

#include "api/testing/builders.h"
#include "common/testing/fake_clock.h"
#include "gtest/gtest.h"
#include "registry/errors.h"
#include "store/memory/memory_store.h"

namespace batchd::registry {
namespace {

using api::Json;
using api::testing::MakeJob;

class ServerSideApplyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    reg_ = std::make_unique<Registry>(store_, api::BuiltinScheme(), clock_);
    ASSERT_TRUE(reg_->Start().ok());
    jobs_ = reg_->scheme().ByResource("batch", "v1", "jobs");
    ASSERT_NE(jobs_, nullptr);
  }
  absl::StatusOr<Json> ApplyAs(const std::string& manager, const Json& config,
                               bool force = false) {
    WriteOptions o;
    o.field_manager = manager;
    return ServerSideApply(*reg_, clock_, *jobs_, "default", "a", config, false, force, o);
  }
  Json Managers(const Json& obj) {
    Json out = Json::array();
    for (const Json& e : obj["metadata"]["managedFields"]) {
      out.push_back(e["manager"].get<std::string>() + ":" + e["operation"].get<std::string>());
    }
    return out;
  }
  static Json Config(int backoff) {
    Json j = MakeJob("a").Obj();
    // Labelled: an unlabelled Job gains its template's labels on its first
    // update (defaulting), which would be a change of its own.
    j["metadata"]["labels"] = {{"app", "x"}};
    j["spec"]["backoffLimit"] = backoff;
    return j;
  }

  FakeClock clock_;
  store::MemoryStore store_;
  std::unique_ptr<Registry> reg_;
  const api::KindDef* jobs_ = nullptr;
};

TEST_F(ServerSideApplyTest, CreatesThenConflictsThenForces) {
  auto created = ApplyAs("alice", Config(2));
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(Managers(*created), Json::parse(R"(["alice:Apply"])"));
  const Json& entry = (*created)["metadata"]["managedFields"][0];
  EXPECT_EQ(entry["apiVersion"], "batch/v1");
  EXPECT_EQ(entry["time"], "2026-01-01T00:00:00Z");
  EXPECT_TRUE(entry["fieldsV1"]["f:spec"].contains("f:backoffLimit"));
  EXPECT_FALSE(entry["fieldsV1"]["f:spec"].contains("f:completions"));  // A default.

  auto refused = ApplyAs("bob", Config(4));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(GetPayload(refused.status()).reason, "Conflict");
  EXPECT_EQ(refused.status().message(),
            "Apply failed with 1 conflict: conflict with \"alice\": .spec.backoffLimit");
  EXPECT_EQ(GetPayload(refused.status()).details["causes"],
            Json::parse(R"([{"reason": "FieldManagerConflict", "message": "conflict with \"alice\"",
                             "field": ".spec.backoffLimit"}])"));
  auto still = reg_->Get(*jobs_, "default", "a");
  ASSERT_TRUE(still.ok());
  EXPECT_EQ((*still)->Decode()["spec"]["backoffLimit"], 2);

  auto forced = ApplyAs("bob", Config(4), /*force=*/true);
  ASSERT_TRUE(forced.ok()) << forced.status();
  EXPECT_EQ((*forced)["spec"]["backoffLimit"], 4);
  for (const Json& e : (*forced)["metadata"]["managedFields"]) {
    EXPECT_EQ(e["fieldsV1"]["f:spec"].contains("f:backoffLimit"), e["manager"] == "bob")
        << e.dump();
  }
}

TEST_F(ServerSideApplyTest, UnchangedApplyWritesNothing) {
  auto first = ApplyAs("alice", Config(2));
  ASSERT_TRUE(first.ok()) << first.status();
  clock_.Advance(absl::Seconds(30));
  auto again = ApplyAs("alice", Config(2));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *first);
  EXPECT_EQ((*again)["metadata"]["resourceVersion"], (*first)["metadata"]["resourceVersion"]);
  EXPECT_EQ((*again)["metadata"]["managedFields"], (*first)["metadata"]["managedFields"]);
}

TEST_F(ServerSideApplyTest, UpdatesRecordTheirManagerAndKeepOthers) {
  ASSERT_TRUE(ApplyAs("alice", Config(2)).ok());
  auto live = reg_->Get(*jobs_, "default", "a");
  ASSERT_TRUE(live.ok());
  Json obj = (*live)->Decode();
  obj["metadata"].erase("managedFields");  // A PUT without them keeps them.
  obj["metadata"]["labels"]["team"] = "red";
  WriteOptions o;
  o.field_manager = "kubectl-edit";
  auto updated = reg_->Update(*jobs_, "default", "a", obj, false, o);
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ(Managers(*updated), Json::parse(R"(["alice:Apply", "kubectl-edit:Update"])"));
  EXPECT_EQ((*updated)["metadata"]["managedFields"][1]["fieldsV1"],
            Json::parse(R"({"f:metadata": {"f:labels": {"f:team": {}}}})"));
  // Writers without a field manager (in-process controllers) record nothing.
  obj = *updated;
  obj["metadata"]["labels"]["team"] = "blue";
  auto quiet = reg_->Update(*jobs_, "default", "a", obj, false, WriteOptions{});
  ASSERT_TRUE(quiet.ok()) << quiet.status();
  EXPECT_EQ((*quiet)["metadata"]["managedFields"], (*updated)["metadata"]["managedFields"]);
  // An empty list clears them.
  obj = *quiet;
  obj["metadata"]["managedFields"] = Json::array();
  auto cleared = reg_->Update(*jobs_, "default", "a", obj, false, WriteOptions{});
  ASSERT_TRUE(cleared.ok()) << cleared.status();
  EXPECT_FALSE((*cleared)["metadata"].contains("managedFields"));
  // Malformed ones are refused.
  obj = *cleared;
  obj["metadata"]["managedFields"] = Json::parse(R"([{"manager": "x", "operation": "Nope"}])");
  auto bad = reg_->Update(*jobs_, "default", "a", obj, false, WriteOptions{});
  EXPECT_EQ(GetPayload(bad.status()).reason, "BadRequest");
}

TEST_F(ServerSideApplyTest, BadRequests) {
  WriteOptions none;
  auto no_manager = ServerSideApply(*reg_, clock_, *jobs_, "default", "a", Config(1), false,
                                    false, none);
  EXPECT_EQ(GetPayload(no_manager.status()).reason, "BadRequest");
  Json other = Config(1);
  other["metadata"]["name"] = "b";
  auto wrong_name = ApplyAs("alice", other);
  EXPECT_EQ(GetPayload(wrong_name.status()).reason, "BadRequest");
  auto not_object = ApplyAs("alice", Json::array());
  EXPECT_EQ(GetPayload(not_object.status()).reason, "BadRequest");
  Json typed_wrong = Config(1);
  typed_wrong["spec"]["backoffLimit"] = "many";
  auto bad_type = ApplyAs("alice", typed_wrong);
  EXPECT_EQ(GetPayload(bad_type.status()).reason, "BadRequest");
  EXPECT_FALSE(reg_->Get(*jobs_, "default", "a").ok());  // Nothing was created.
}

}  // namespace
}  // namespace batchd::registry
