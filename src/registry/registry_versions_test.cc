// Registry: admission mutators, and a resource served in two versions
// (kueue.x-k8s.io v1beta2 stored, v1beta1 converted).
#include "api/testing/builders.h"
#include "common/testing/fake_clock.h"
#include "gtest/gtest.h"
#include "registry/errors.h"
#include "registry/registry.h"
#include "store/memory/memory_store.h"

namespace batchd::registry {
namespace {

using api::Json;
using api::testing::MakeJob;

class RegistryVersionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    reg_ = std::make_unique<Registry>(store_, api::BuiltinScheme(), clock_);
    ASSERT_TRUE(reg_->Start().ok());
    jobs_ = reg_->scheme().ByResource("batch", "v1", "jobs");
    cq2_ = reg_->scheme().ByResource("kueue.x-k8s.io", "v1beta2", "clusterqueues");
    cq1_ = reg_->scheme().ByResource("kueue.x-k8s.io", "v1beta1", "clusterqueues");
    wl1_ = reg_->scheme().ByResource("kueue.x-k8s.io", "v1beta1", "workloads");
    wl2_ = reg_->scheme().ByResource("kueue.x-k8s.io", "v1beta2", "workloads");
    ASSERT_TRUE(jobs_ && cq2_ && cq1_ && wl1_ && wl2_);
    ASSERT_EQ(cq1_->storage, cq2_);
  }
  static Json V1beta1Cq(const std::string& name, const std::string& cohort) {
    return Json::parse(R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ClusterQueue",
      "metadata":{"name":")" + name + R"("},
      "spec":{"cohort":")" + cohort + R"(","namespaceSelector":{},
        "flavorFungibility":{"whenCanBorrow":"Borrow"},
        "resourceGroups":[{"coveredResources":["cpu"],"flavors":[{"name":"default",
          "resources":[{"name":"cpu","nominalQuota":"9","borrowingLimit":"1"}]}]}]}})");
  }
  Json Stored(const api::KindDef& k, const std::string& ns, const std::string& name) {
    auto got = reg_->Get(k, ns, name);
    EXPECT_TRUE(got.ok()) << got.status();
    return got.ok() ? (*got)->Decode() : Json();
  }

  FakeClock clock_;
  store::MemoryStore store_;
  std::unique_ptr<Registry> reg_;
  const api::KindDef* jobs_ = nullptr;
  const api::KindDef* cq2_ = nullptr;
  const api::KindDef* cq1_ = nullptr;
  const api::KindDef* wl1_ = nullptr;
  const api::KindDef* wl2_ = nullptr;
};

TEST_F(RegistryVersionsTest, MutatorRunsOnCreateAndUpdateNotStatus) {
  int calls = 0;
  bool saw_old = false;
  reg_->AddMutator("jobs.batch", [&](Json& obj, const Json* old) {
    ++calls;
    saw_old = old != nullptr;
    if (obj["metadata"].value("labels", Json::object()).contains("kueue.x-k8s.io/queue-name")) {
      obj["spec"]["suspend"] = true;
    }
    return absl::OkStatus();
  });
  Json job = MakeJob("a").Obj();
  job["metadata"]["labels"] = {{"kueue.x-k8s.io/queue-name", "q"}};
  auto created = reg_->Create(*jobs_, "default", job, WriteOptions{});
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ((*created)["spec"]["suspend"], true);
  EXPECT_EQ(Stored(*jobs_, "default", "a")["spec"]["suspend"], true);
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(saw_old);

  Json update = *created;
  update["spec"]["suspend"] = false;
  auto updated = reg_->Update(*jobs_, "default", "a", update, false, WriteOptions{});
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ((*updated)["spec"]["suspend"], true);
  EXPECT_EQ(calls, 2);
  EXPECT_TRUE(saw_old);

  Json status = *updated;
  status["status"] = {{"active", 1}};
  ASSERT_TRUE(reg_->Update(*jobs_, "default", "a", status, true, WriteOptions{}).ok());
  EXPECT_EQ(calls, 2);

  WriteOptions dry;
  dry.dry_run = true;
  Json other = job;
  other["metadata"]["name"] = "b";
  auto dry_created = reg_->Create(*jobs_, "default", other, dry);
  ASSERT_TRUE(dry_created.ok());
  EXPECT_EQ((*dry_created)["spec"]["suspend"], true);
  EXPECT_EQ(calls, 3);
}

TEST_F(RegistryVersionsTest, MutatorErrorRejectsAndWritesNothing) {
  reg_->AddMutator("jobs.batch", [this](Json& obj, const Json*) {
    obj["spec"]["suspend"] = true;
    return Invalid(*jobs_, "a",
                   {api::Forbidden(api::Path("spec").Child("suspend"), "no")});
  });
  int other_calls = 0;
  reg_->AddMutator("pods", [&](Json&, const Json*) {
    ++other_calls;
    return absl::OkStatus();
  });
  auto created = reg_->Create(*jobs_, "default", MakeJob("a").Obj(), WriteOptions{});
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(GetPayload(created.status()).reason, "Invalid");
  EXPECT_NE(std::string(created.status().message()).find("spec.suspend: Forbidden: no"),
            std::string::npos);
  EXPECT_FALSE(reg_->Get(*jobs_, "default", "a").ok());
  EXPECT_EQ(other_calls, 0);
}

TEST_F(RegistryVersionsTest, CreateInV1beta1ReadInBoth) {
  Json cq = V1beta1Cq("cq", "team");
  cq["spec"]["admissionChecks"] = {"check-a"};
  auto created = reg_->Create(*cq1_, "", cq, WriteOptions{});
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ((*created)["apiVersion"], "kueue.x-k8s.io/v1beta1");
  EXPECT_EQ((*created)["spec"]["cohort"], "team");
  EXPECT_FALSE((*created)["spec"].contains("cohortName"));

  Json v2 = Stored(*cq2_, "", "cq");
  EXPECT_EQ(v2["apiVersion"], "kueue.x-k8s.io/v1beta2");
  EXPECT_EQ(v2["spec"]["cohortName"], "team");
  EXPECT_FALSE(v2["spec"].contains("cohort"));
  EXPECT_EQ(v2["spec"]["flavorFungibility"]["whenCanBorrow"], "MayStopSearch");
  EXPECT_EQ(v2["spec"]["queueingStrategy"], "BestEffortFIFO");  // Defaults ran on v1beta2.
  EXPECT_EQ(v2["spec"]["admissionChecksStrategy"]["admissionChecks"][0]["name"], "check-a");

  Json v1 = Stored(*cq1_, "", "cq");
  EXPECT_EQ(v1["apiVersion"], "kueue.x-k8s.io/v1beta1");
  EXPECT_EQ(v1["spec"]["cohort"], "team");
  EXPECT_EQ(v1["metadata"]["resourceVersion"], v2["metadata"]["resourceVersion"]);

  auto list = reg_->List(*cq1_, "", ListOptions{});
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->items.size(), 1u);
  EXPECT_EQ(list->items[0]->Decode()["spec"]["cohort"], "team");
}

TEST_F(RegistryVersionsTest, UpdatePatchDeleteInV1beta1) {
  ASSERT_TRUE(reg_->Create(*cq1_, "", V1beta1Cq("cq", "team"), WriteOptions{}).ok());
  Json v1 = Stored(*cq1_, "", "cq");
  v1["spec"]["cohort"] = "other";
  auto updated = reg_->Update(*cq1_, "", "cq", v1, false, WriteOptions{});
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ((*updated)["spec"]["cohort"], "other");
  EXPECT_EQ(Stored(*cq2_, "", "cq")["spec"]["cohortName"], "other");

  auto patched = reg_->Patch(*cq1_, "", "cq", PatchType::kMerge,
                             Json::parse(R"({"spec":{"cohort":"third"}})"), false, WriteOptions{});
  ASSERT_TRUE(patched.ok()) << patched.status();
  EXPECT_EQ((*patched)["spec"]["cohort"], "third");
  EXPECT_EQ(Stored(*cq2_, "", "cq")["spec"]["cohortName"], "third");

  // Removing the cohort through v1beta1 leaves a borrowingLimit without one.
  auto bad = reg_->Patch(*cq1_, "", "cq", PatchType::kMerge,
                         Json::parse(R"({"spec":{"cohort":null}})"), false, WriteOptions{});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(GetPayload(bad.status()).reason, "Invalid");
  EXPECT_NE(std::string(bad.status().message())
                .find("spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit"),
            std::string::npos)
      << bad.status();

  auto deleted = reg_->Delete(*cq1_, "", "cq", DeleteOptions{});
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(deleted->object["apiVersion"], "kueue.x-k8s.io/v1beta1");
  EXPECT_EQ(deleted->object["spec"]["cohort"], "third");
}

TEST_F(RegistryVersionsTest, StrictDecodingUsesTheRequestVersion) {
  WriteOptions strict;
  strict.field_validation = FieldValidation::kStrict;
  Json cq = V1beta1Cq("cq", "team");
  cq["spec"]["cohortName"] = "team";  // A v1beta2 field is unknown in v1beta1.
  auto created = reg_->Create(*cq1_, "", cq, strict);
  ASSERT_FALSE(created.ok());
  EXPECT_NE(std::string(created.status().message()).find("unknown field \"spec.cohortName\""),
            std::string::npos)
      << created.status();
}

TEST_F(RegistryVersionsTest, WatchInV1beta1ConvertsEvents) {
  ListOptions opts;
  auto w = reg_->Watch(*wl1_, "default", opts);
  ASSERT_TRUE(w.ok()) << w.status();
  Json wl = Json::parse(R"({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"Workload",
    "metadata":{"name":"w","namespace":"default"},
    "spec":{"queueName":"lq","priority":7,
      "priorityClassRef":{"group":"kueue.x-k8s.io","kind":"WorkloadPriorityClass","name":"hi"},
      "podSets":[{"name":"main","count":2,"template":{"spec":{"containers":[
        {"name":"c","image":"busybox"}]}}}]}})");
  ASSERT_TRUE(reg_->Create(*wl2_, "default", wl, WriteOptions{}).ok());
  Watcher::Event ev;
  ASSERT_TRUE((*w)->Next(&ev, absl::Seconds(5)));
  EXPECT_EQ(ev.type, "ADDED");
  Json got = ev.object->Decode();
  EXPECT_EQ(got["apiVersion"], "kueue.x-k8s.io/v1beta1");
  EXPECT_EQ(got["spec"]["priorityClassSource"], "kueue.x-k8s.io/workloadpriorityclass");
  EXPECT_EQ(got["spec"]["priorityClassName"], "hi");
  EXPECT_FALSE(got["spec"].contains("priorityClassRef"));
  EXPECT_FALSE(got["metadata"]["resourceVersion"].get<std::string>().empty());
}

}  // namespace
}  // namespace batchd::registry
