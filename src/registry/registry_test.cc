#include "registry/registry.h"

#include <map>
#include <random>
#include <utility>

#include "api/testing/builders.h"
#include "common/testing/fake_clock.h"
#include "gtest/gtest.h"
#include "registry/errors.h"
#include "store/errors.h"
#include "store/memory/memory_store.h"

namespace batchd::registry {
namespace {

using api::Json;
using api::testing::MakeJob;
using api::testing::MakeNamespace;

// Counts UpdateMany calls (one call: one commit on SqliteStore).
class CountingStore : public store::MemoryStore {
 public:
  std::vector<absl::StatusOr<store::KeyValue>> UpdateMany(std::vector<UpdateOp> ops) override {
    ++update_many;
    return MemoryStore::UpdateMany(std::move(ops));
  }
  // When set, the next Update finds its key rewritten by another writer
  // first: a race lost between the registry's read and its write.
  absl::StatusOr<store::KeyValue> Update(std::string_view key, std::string value,
                                         int64_t expected_mod_revision) override {
    if (race_next_update) {
      race_next_update = false;
      auto cur = MemoryStore::Get(key);
      if (cur.ok()) (void)MemoryStore::Update(key, cur->value, cur->mod_revision);
    }
    return MemoryStore::Update(key, std::move(value), expected_mod_revision);
  }
  int update_many = 0;
  bool race_next_update = false;
};

class RegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    reg_ = std::make_unique<Registry>(store_, api::BuiltinScheme(), clock_);
    ASSERT_TRUE(reg_->Start().ok());
    jobs_ = reg_->scheme().ByResource("batch", "v1", "jobs");
    namespaces_ = reg_->scheme().ByResource("", "v1", "namespaces");
    ASSERT_NE(jobs_, nullptr);
  }
  Json MustCreate(Json obj, const std::string& ns = "default") {
    auto r = reg_->Create(*jobs_, ns, std::move(obj), WriteOptions{});
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : Json();
  }
  std::string Reason(const absl::Status& s) { return GetPayload(s).reason; }

  FakeClock clock_;
  CountingStore store_;
  std::unique_ptr<Registry> reg_;
  const api::KindDef* jobs_ = nullptr;
  const api::KindDef* namespaces_ = nullptr;
};

TEST_F(RegistryTest, DefaultNamespacesExist) {
  for (const char* ns : {"default", "kube-system", "kube-public"}) {
    EXPECT_TRUE(reg_->Get(*namespaces_, "", ns).ok()) << ns;
  }
}

TEST_F(RegistryTest, CreateSetsSystemMetadataAndDefaults) {
  Json j = MustCreate(MakeJob("a").Obj());
  const Json& m = j["metadata"];
  EXPECT_EQ(m["namespace"], "default");
  EXPECT_EQ(m["uid"].get<std::string>().size(), 36u);
  EXPECT_EQ(m["generation"], 1);
  EXPECT_FALSE(m["resourceVersion"].get<std::string>().empty());
  EXPECT_EQ(m["creationTimestamp"], "2026-01-01T00:00:00Z");
  EXPECT_EQ(j["spec"]["backoffLimit"], 6);
  auto got = reg_->Get(*jobs_, "default", "a");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)->Decode()["metadata"]["uid"], m["uid"]);
}

TEST_F(RegistryTest, CreateErrors) {
  MustCreate(MakeJob("a").Obj());
  auto dup = reg_->Create(*jobs_, "default", MakeJob("a").Obj(), WriteOptions{});
  EXPECT_EQ(Reason(dup.status()), "AlreadyExists");
  EXPECT_EQ(dup.status().message(), "jobs.batch \"a\" already exists");

  EXPECT_TRUE(IsReason(dup.status(), "AlreadyExists"));
  EXPECT_FALSE(IsReason(dup.status(), "Conflict"));
  EXPECT_FALSE(IsGone(dup.status()));

  auto no_ns = reg_->Create(*jobs_, "nope", MakeJob("b", "nope").Obj(), WriteOptions{});
  EXPECT_EQ(Reason(no_ns.status()), "NotFound");
  EXPECT_EQ(no_ns.status().message(), "namespaces \"nope\" not found");
  EXPECT_TRUE(IsGone(no_ns.status()));
  EXPECT_TRUE(IsGone(absl::NotFoundError("no reason attached")));
  EXPECT_FALSE(IsReason(absl::NotFoundError("no reason attached"), "NotFound"));

  Json bad = MakeJob("c").Obj();
  bad["spec"]["template"]["spec"]["containers"][0].erase("name");
  auto invalid = reg_->Create(*jobs_, "default", bad, WriteOptions{});
  EXPECT_EQ(Reason(invalid.status()), "Invalid");
  EXPECT_NE(std::string(invalid.status().message())
                .find("spec.template.spec.containers[0].name: Required value"),
            std::string::npos)
      << invalid.status();
  EXPECT_FALSE(reg_->Get(*jobs_, "default", "c").ok());

  WriteOptions strict;
  strict.field_validation = FieldValidation::kStrict;
  Json unknown = MakeJob("d").Obj();
  unknown["spec"]["bogus"] = 1;
  auto u = reg_->Create(*jobs_, "default", unknown, strict);
  EXPECT_EQ(Reason(u.status()), "BadRequest");
  EXPECT_NE(std::string(u.status().message()).find("unknown field \"spec.bogus\""),
            std::string::npos)
      << u.status();
  std::vector<std::string> warnings;
  WriteOptions warn;
  warn.warnings = &warnings;
  EXPECT_TRUE(reg_->Create(*jobs_, "default", unknown, warn).ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "unknown field \"spec.bogus\"");
}

// CreateMany: one result per object, each as Create would give it.
TEST_F(RegistryTest, CreateManyEachAsCreate) {
  MustCreate(MakeJob("taken").Obj());
  Json bad = MakeJob("bad").Obj();
  bad["spec"]["template"]["spec"]["containers"][0].erase("name");
  std::vector<std::pair<std::string, Json>> objs = {
      {"default", MakeJob("one").Obj()},
      {"default", MakeJob("taken").Obj()},
      {"default", bad},
      {"nope", MakeJob("x", "nope").Obj()},
      {"default", MakeJob("").GenerateName("gen-").Obj()},
      {"default", MakeJob("one").Obj()}};
  std::vector<absl::StatusOr<Json>> r = reg_->CreateMany(*jobs_, std::move(objs), WriteOptions{});
  ASSERT_EQ(r.size(), 6u);
  ASSERT_TRUE(r[0].ok()) << r[0].status();
  EXPECT_FALSE((*r[0])["metadata"].value("uid", "").empty());
  EXPECT_EQ((*r[0])["metadata"].value("resourceVersion", ""),
            (*reg_->Get(*jobs_, "default", "one"))->Decode()["metadata"].value("resourceVersion",
                                                                                  "-"));
  EXPECT_EQ(Reason(r[1].status()), "AlreadyExists");
  EXPECT_EQ(r[1].status().message(), "jobs.batch \"taken\" already exists");
  EXPECT_EQ(Reason(r[2].status()), "Invalid");
  EXPECT_EQ(Reason(r[3].status()), "NotFound");
  ASSERT_TRUE(r[4].ok()) << r[4].status();
  EXPECT_EQ((*r[4])["metadata"].value("name", "").rfind("gen-", 0), 0u);
  EXPECT_EQ(Reason(r[5].status()), "AlreadyExists");
  EXPECT_FALSE(reg_->Get(*jobs_, "default", "bad").ok());
}

// BindMany: each pod bound as Bind binds it (PodScheduled, resourceVersion),
// each failing on its own (already bound, missing, no target), all the
// writes in one store UpdateMany.
TEST_F(RegistryTest, BindManyEachAsBind) {
  const api::KindDef* pods = reg_->scheme().ByResource("", "v1", "pods");
  for (const char* name : {"a", "b", "bound"}) {
    ASSERT_TRUE(reg_->Create(*pods, "default", api::testing::MakePod(name).Obj(), WriteOptions{}).ok());
  }
  auto target = [](const std::string& node) {
    return Json{{"target", {{"kind", "Node"}, {"name", node}}}};
  };
  ASSERT_TRUE(reg_->Bind("default", "bound", target("n0"), WriteOptions{}).ok());
  const int64_t rev0 = store_.Revision();
  std::vector<Registry::BindRequest> binds = {{"default", "a", target("n1")},
                                              {"default", "bound", target("n2")},
                                              {"default", "missing", target("n1")},
                                              {"default", "b", Json::object()},
                                              {"default", "b", target("n2")}};
  std::vector<absl::StatusOr<Json>> r = reg_->BindMany(binds, WriteOptions{});
  ASSERT_EQ(r.size(), 5u);
  ASSERT_TRUE(r[0].ok()) << r[0].status();
  EXPECT_EQ((*r[0])["spec"].value("nodeName", ""), "n1");
  EXPECT_EQ(Reason(r[1].status()), "Conflict");
  EXPECT_EQ(Reason(r[2].status()), "NotFound");
  EXPECT_EQ(Reason(r[3].status()), "Invalid");
  ASSERT_TRUE(r[4].ok()) << r[4].status();
  EXPECT_EQ(store_.Revision(), rev0 + 2);
  for (const auto& [name, node] : std::vector<std::pair<std::string, std::string>>{
           {"a", "n1"}, {"b", "n2"}, {"bound", "n0"}}) {
    Json pod = (*reg_->Get(*pods, "default", name))->Decode();
    EXPECT_EQ(pod["spec"].value("nodeName", ""), node) << name;
    const Json* cond = nullptr;
    for (const Json& c : pod["status"]["conditions"]) {
      if (c.value("type", "") == "PodScheduled") cond = &c;
    }
    ASSERT_NE(cond, nullptr) << name;
    EXPECT_EQ(cond->value("status", ""), "True");
  }
  EXPECT_EQ((*r[4])["metadata"].value("resourceVersion", ""), std::to_string(rev0 + 2));
}

// WriteChain: a Job's status and pods' finalizer removals as Update would
// write them, in one store UpdateMany; a stale or refused update stops the
// chain (nothing after it written), a no-op keeps its resourceVersion.
TEST_F(RegistryTest, WriteChainWritesInOrderAndStopsAtTheFirstFailure) {
  const api::KindDef* pods = reg_->scheme().ByResource("", "v1", "pods");
  Json job = MustCreate(MakeJob("j").Obj());
  std::map<std::string, Json> pod;
  for (const char* name : {"p", "q", "r"}) {
    Json obj = api::testing::MakePod(name).Obj();
    obj["metadata"]["finalizers"] = Json::array({"batch.kubernetes.io/job-tracking"});
    auto c = reg_->Create(*pods, "default", std::move(obj), WriteOptions{});
    ASSERT_TRUE(c.ok()) << c.status();
    pod[name] = *c;
  }
  auto release = [&](const std::string& name) {
    Json p = pod[name];
    p["metadata"]["finalizers"] = Json::array();
    return Registry::ChainedWrite{pods, std::move(p), false};
  };
  {
    Json j = job;
    j["status"]["active"] = 1;
    const int64_t rev0 = store_.Revision();
    const int calls0 = store_.update_many;
    std::vector<Registry::ChainedWrite> chain;
    chain.push_back({jobs_, std::move(j), true});
    chain.push_back(release("p"));
    std::vector<absl::StatusOr<Json>> r = reg_->WriteChain(std::move(chain), WriteOptions{});
    ASSERT_EQ(r.size(), 2u);
    ASSERT_TRUE(r[0].ok()) << r[0].status();
    ASSERT_TRUE(r[1].ok()) << r[1].status();
    EXPECT_EQ(store_.update_many, calls0 + 1);
    EXPECT_EQ(store_.Revision(), rev0 + 2);
    EXPECT_EQ((*r[0])["metadata"].value("resourceVersion", ""), std::to_string(rev0 + 1));
    EXPECT_EQ((*r[1])["metadata"].value("resourceVersion", ""), std::to_string(rev0 + 2));
    EXPECT_EQ((*reg_->Get(*jobs_, "default", "j"))->Decode()["status"].value("active", 0), 1);
    EXPECT_TRUE((*reg_->Get(*pods, "default", "p"))->Decode()["metadata"].value("finalizers", Json::array()).empty());
    job = *r[0];
  }
  {
    // A no-op status, a stale pod, then one that would have been written.
    Json stale = pod["q"];
    stale["metadata"]["resourceVersion"] = "1";
    stale["metadata"]["finalizers"] = Json::array();
    const int64_t rev0 = store_.Revision();
    std::vector<Registry::ChainedWrite> chain;
    chain.push_back({jobs_, job, true});
    chain.push_back({pods, std::move(stale), false});
    chain.push_back(release("r"));
    std::vector<absl::StatusOr<Json>> r = reg_->WriteChain(std::move(chain), WriteOptions{});
    ASSERT_EQ(r.size(), 3u);
    ASSERT_TRUE(r[0].ok()) << r[0].status();
    EXPECT_EQ((*r[0])["metadata"]["resourceVersion"], job["metadata"]["resourceVersion"]);
    EXPECT_EQ(Reason(r[1].status()), "Conflict");
    EXPECT_EQ(Reason(r[2].status()), "Conflict");
    EXPECT_EQ(store_.Revision(), rev0);
    EXPECT_FALSE((*reg_->Get(*pods, "default", "r"))->Decode()["metadata"].value("finalizers", Json::array()).empty());
  }
  {
    // A refused update (an invalid label) writes nothing after it, but what
    // came before it lands.
    Json q = pod["q"];
    q["metadata"]["finalizers"] = Json::array();
    Json bad = pod["r"];
    bad["metadata"]["labels"]["not a label!"] = "x";
    const int64_t rev0 = store_.Revision();
    std::vector<Registry::ChainedWrite> chain;
    chain.push_back({pods, std::move(q), false});
    chain.push_back({pods, std::move(bad), false});
    chain.push_back({jobs_, job, true});
    std::vector<absl::StatusOr<Json>> r = reg_->WriteChain(std::move(chain), WriteOptions{});
    ASSERT_EQ(r.size(), 3u);
    ASSERT_TRUE(r[0].ok()) << r[0].status();
    EXPECT_EQ(Reason(r[1].status()), "Invalid");
    EXPECT_EQ(Reason(r[2].status()), "Conflict");
    EXPECT_EQ(store_.Revision(), rev0 + 1);
    EXPECT_TRUE((*reg_->Get(*pods, "default", "q"))->Decode()["metadata"].value("finalizers", Json::array()).empty());
  }
  {
    // Creates (a generated name) and then a status, in one UpdateMany; a
    // create that fails validation writes nothing after it.
    Json gen = api::testing::MakePod("").Obj();
    gen["metadata"].erase("name");
    gen["metadata"]["generateName"] = "j-";
    gen["metadata"]["namespace"] = "default";
    Json j = job;
    j["status"]["active"] = 2;
    const int64_t rev0 = store_.Revision();
    const int calls0 = store_.update_many;
    std::vector<Registry::ChainedWrite> chain;
    chain.push_back({pods, gen, false, /*create=*/true});
    chain.push_back({jobs_, std::move(j), true});
    std::vector<absl::StatusOr<Json>> r = reg_->WriteChain(std::move(chain), WriteOptions{});
    ASSERT_EQ(r.size(), 2u);
    ASSERT_TRUE(r[0].ok()) << r[0].status();
    ASSERT_TRUE(r[1].ok()) << r[1].status();
    EXPECT_EQ(store_.update_many, calls0 + 1);
    EXPECT_EQ(store_.Revision(), rev0 + 2);
    const std::string name = (*r[0])["metadata"].value("name", "");
    EXPECT_EQ(name.rfind("j-", 0), 0u);
    EXPECT_EQ((*r[0])["metadata"].value("resourceVersion", ""), std::to_string(rev0 + 1));
    ASSERT_TRUE(reg_->Get(*pods, "default", name).ok());
    EXPECT_EQ((*reg_->Get(*jobs_, "default", "j"))->Decode()["status"].value("active", 0), 2);
    job = *r[1];

    Json bad = gen;
    bad["spec"]["containers"] = Json::array();
    Json j3 = job;
    j3["status"]["active"] = 3;
    chain.clear();
    chain.push_back({pods, gen, false, true});
    chain.push_back({pods, std::move(bad), false, true});
    chain.push_back({jobs_, std::move(j3), true});
    r = reg_->WriteChain(std::move(chain), WriteOptions{});
    ASSERT_EQ(r.size(), 3u);
    ASSERT_TRUE(r[0].ok()) << r[0].status();
    EXPECT_EQ(Reason(r[1].status()), "Invalid");
    EXPECT_EQ(Reason(r[2].status()), "Conflict");
    EXPECT_EQ(store_.Revision(), rev0 + 3);
    EXPECT_EQ((*reg_->Get(*jobs_, "default", "j"))->Decode()["status"].value("active", 0), 2);
  }
}

// UpdateStatusMany: each edit runs on the object's latest version and only
// its status is kept; an edit's error, a missing object, each on its own;
// two edits of one object both land (the second, having lost the race in the
// batch, runs again on the first's result).
TEST_F(RegistryTest, UpdateStatusManyEachOnItsOwn) {
  for (const char* name : {"a", "b", "c"}) MustCreate(MakeJob(name).Obj());
  auto set = [](const char* field, int v) {
    return [field, v](Json& job) -> absl::Status {
      job["status"][field] = v;
      job["metadata"]["labels"]["ignored"] = "yes";  // not the status: not kept
      return absl::OkStatus();
    };
  };
  const int64_t rev0 = store_.Revision();
  std::vector<Registry::StatusEdit> edits;
  edits.push_back({"default", "a", set("active", 1)});
  edits.push_back({"default", "b", [](Json&) { return absl::FailedPreconditionError("no"); }});
  edits.push_back({"default", "missing", set("active", 1)});
  edits.push_back({"default", "c", set("active", 2)});
  edits.push_back({"default", "c", set("ready", 1)});
  std::vector<absl::StatusOr<Json>> r = reg_->UpdateStatusMany(*jobs_, std::move(edits), WriteOptions{});
  ASSERT_EQ(r.size(), 5u);
  ASSERT_TRUE(r[0].ok()) << r[0].status();
  EXPECT_EQ((*r[0])["status"]["active"], 1);
  EXPECT_EQ(r[1].status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(Reason(r[2].status()), "NotFound");
  ASSERT_TRUE(r[3].ok()) << r[3].status();
  ASSERT_TRUE(r[4].ok()) << r[4].status();
  Json a = (*reg_->Get(*jobs_, "default", "a"))->Decode();
  EXPECT_EQ(a["status"]["active"], 1);
  EXPECT_FALSE(a["metadata"].contains("labels") && a["metadata"]["labels"].contains("ignored"));
  EXPECT_EQ(a["metadata"]["resourceVersion"], (*r[0])["metadata"]["resourceVersion"]);
  Json c = (*reg_->Get(*jobs_, "default", "c"))->Decode();
  EXPECT_EQ(c["status"]["active"], 2);
  EXPECT_EQ(c["status"]["ready"], 1);
  EXPECT_EQ(store_.Revision(), rev0 + 3);  // a, c, c again
  Json b = (*reg_->Get(*jobs_, "default", "b"))->Decode();
  EXPECT_FALSE(b["status"].contains("active"));
}

TEST_F(RegistryTest, GenerateNameAndDryRun) {
  Json j = MustCreate(MakeJob("").GenerateName("gen-").Obj());
  std::string name = j["metadata"]["name"];
  EXPECT_EQ(name.rfind("gen-", 0), 0u);
  EXPECT_EQ(name.size(), 9u);
  WriteOptions dry;
  dry.dry_run = true;
  auto r = reg_->Create(*jobs_, "default", MakeJob("dry").Obj(), dry);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(reg_->Get(*jobs_, "default", "dry").ok());
}

// The generator is the caller's: the same seed gives the same generated
// names and UIDs, another seed others.
TEST(RegistryRandomTest, InjectedGeneratorMakesNamesAndUidsReproducible) {
  auto create = [](uint32_t seed) {
    std::mt19937 random(seed);
    FakeClock clock;
    store::MemoryStore store;
    Registry reg(store, api::BuiltinScheme(), clock, random);
    EXPECT_TRUE(reg.Start().ok());
    const api::KindDef* jobs = reg.scheme().ByResource("batch", "v1", "jobs");
    auto r = reg.Create(*jobs, "default", MakeJob("").GenerateName("gen-").Obj(), WriteOptions{});
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? std::make_pair(std::string((*r)["metadata"]["name"]),
                                   std::string((*r)["metadata"]["uid"]))
                  : std::make_pair(std::string(), std::string());
  };
  auto first = create(7);
  EXPECT_EQ(first.first.rfind("gen-", 0), 0u);
  EXPECT_EQ(create(7), first);
  EXPECT_NE(create(8).first, first.first);
}

TEST_F(RegistryTest, UpdateConcurrencyAndGeneration) {
  Json j = MustCreate(MakeJob("a").Obj());
  std::string rv1 = j["metadata"]["resourceVersion"];
  Json labeled = j;
  labeled["metadata"]["labels"]["x"] = "1";
  auto u1 = reg_->Update(*jobs_, "default", "a", labeled, false, WriteOptions{});
  ASSERT_TRUE(u1.ok()) << u1.status();
  EXPECT_EQ((*u1)["metadata"]["generation"], 1);  // Metadata only.
  EXPECT_NE((*u1)["metadata"]["resourceVersion"], rv1);

  auto stale = reg_->Update(*jobs_, "default", "a", labeled, false, WriteOptions{});
  EXPECT_EQ(Reason(stale.status()), "Conflict");
  EXPECT_EQ(stale.status().message(),
            "Operation cannot be fulfilled on jobs.batch \"a\": the object has been modified; "
            "please apply your changes to the latest version and try again");

  Json spec = *u1;
  spec["spec"]["suspend"] = true;
  auto u2 = reg_->Update(*jobs_, "default", "a", spec, false, WriteOptions{});
  ASSERT_TRUE(u2.ok()) << u2.status();
  EXPECT_EQ((*u2)["metadata"]["generation"], 2);

  // A no-op update writes nothing.
  auto u3 = reg_->Update(*jobs_, "default", "a", *u2, false, WriteOptions{});
  ASSERT_TRUE(u3.ok());
  EXPECT_EQ((*u3)["metadata"]["resourceVersion"], (*u2)["metadata"]["resourceVersion"]);
}

TEST_F(RegistryTest, StatusSubresourceIsSeparate) {
  Json j = MustCreate(MakeJob("a").Obj());
  Json with_status = j;
  with_status["status"]["active"] = 3;
  with_status["spec"]["suspend"] = true;
  auto s = reg_->Update(*jobs_, "default", "a", with_status, true, WriteOptions{});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)["status"]["active"], 3);
  EXPECT_FALSE((*s)["spec"].value("suspend", false));  // Spec ignored on /status.
  Json main = *s;
  main["status"]["active"] = 9;
  auto m = reg_->Update(*jobs_, "default", "a", main, false, WriteOptions{});
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ((*m)["status"]["active"], 3);  // Status ignored on the main resource.
}

TEST_F(RegistryTest, StatusBodyOnlyDecodesTheStatusAndMetadata) {
  const Json created = MustCreate(MakeJob("a").Obj());
  auto body = [this] {
    Json j = (*reg_->Get(*jobs_, "default", "a"))->Decode();
    j["status"]["active"] = 2.0;         // Integral float: decoded to 2.
    j["status"]["bogus"] = 1;            // Unknown: pruned.
    j["spec"]["parallelism"] = "many";   // Malformed, outside the status.
    return j;
  };
  // Over HTTP the whole body is decoded: the malformed spec refuses the write.
  auto full = reg_->Update(*jobs_, "default", "a", body(), true, WriteOptions{});
  ASSERT_FALSE(full.ok());
  EXPECT_NE(full.status().message().find("spec.parallelism"), std::string::npos) << full.status();
  // An in-process writer's body: only metadata and status are decoded, and
  // the spec written is the stored one either way.
  WriteOptions in_process;
  in_process.status_body_only = true;
  auto s = reg_->Update(*jobs_, "default", "a", body(), true, in_process);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)["status"]["active"], 2);
  EXPECT_TRUE((*s)["status"]["active"].is_number_integer());
  EXPECT_FALSE((*s)["status"].contains("bogus"));
  EXPECT_EQ((*s)["spec"], created["spec"]);
  EXPECT_EQ((*reg_->Get(*jobs_, "default", "a"))->Decode()["spec"], created["spec"]);
}

// A writer that reads only the new resourceVersion (WriteOptions::
// version_only): the update, a chained update and a bind return
// {"metadata": {"resourceVersion"}}, while what is stored, and what an
// in-process (decoding) watcher receives, is the whole object.
TEST_F(RegistryTest, VersionOnlyWritesReturnTheVersionAndStoreTheWholeObject) {
  const api::KindDef* pods = reg_->scheme().ByResource("", "v1", "pods");
  const Json created = MustCreate(MakeJob("a").Obj());
  Json pod_obj = api::testing::MakePod("p").Obj();
  pod_obj["metadata"]["finalizers"] = Json::array({"batch.kubernetes.io/job-tracking"});
  ASSERT_TRUE(reg_->Create(*pods, "default", std::move(pod_obj), WriteOptions{}).ok());
  ListOptions decoding;
  decoding.resource_version = std::to_string(reg_->cache().Revision());
  decoding.decodes = true;
  auto jw = reg_->Watch(*jobs_, "default", decoding);
  auto pw = reg_->Watch(*pods, "default", decoding);
  ASSERT_TRUE(jw.ok() && pw.ok());
  auto next = [](Watcher& w) {
    Watcher::Event ev;
    EXPECT_TRUE(w.Next(&ev, absl::ZeroDuration()));
    return ev.object ? *ev.object->Shared() : Json();
  };
  auto version_only = [](const absl::StatusOr<Json>& r, int64_t rev) {
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(*r, (Json{{"metadata", {{"resourceVersion", std::to_string(rev)}}}})) << r->dump();
  };
  WriteOptions vo;
  vo.version_only = true;

  Json j = created;
  j["status"]["active"] = 2;
  auto u = reg_->Update(*jobs_, "default", "a", j, true, vo);
  version_only(u, store_.Revision());
  const Json stored = (*reg_->Get(*jobs_, "default", "a"))->Decode();
  EXPECT_EQ(stored["status"].value("active", 0), 2);
  EXPECT_EQ(stored["spec"], created["spec"]);
  EXPECT_EQ(next(**jw), stored);
  // Nothing to write: the whole object, at the version it has.
  auto same = reg_->Update(*jobs_, "default", "a", stored, true, vo);
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(*same, stored);

  // In a chain, after the Job's status write (a whole object).
  Json pod = (*reg_->Get(*pods, "default", "p"))->Decode();
  pod["metadata"]["finalizers"] = Json::array();
  Json j2 = stored;
  j2["status"]["active"] = 1;
  std::vector<Registry::ChainedWrite> chain;
  chain.push_back({jobs_, std::move(j2), true});
  chain.push_back({pods, std::move(pod), false, false, /*version_only=*/true});
  std::vector<absl::StatusOr<Json>> r = reg_->WriteChain(std::move(chain), WriteOptions{});
  ASSERT_EQ(r.size(), 2u);
  ASSERT_TRUE(r[0].ok()) << r[0].status();
  EXPECT_EQ((*r[0])["status"].value("active", 0), 1);
  version_only(r[1], store_.Revision());
  const Json released = (*reg_->Get(*pods, "default", "p"))->Decode();
  EXPECT_FALSE(released["metadata"].contains("finalizers") &&
               !released["metadata"]["finalizers"].empty());
  EXPECT_EQ(next(**pw), released);

  // A bind.
  std::vector<Registry::BindRequest> binds = {
      {"default", "p", Json{{"target", {{"kind", "Node"}, {"name", "n1"}}}}}};
  std::vector<absl::StatusOr<Json>> b = reg_->BindMany(binds, vo);
  ASSERT_EQ(b.size(), 1u);
  version_only(b[0], store_.Revision());
  const Json bound = (*reg_->Get(*pods, "default", "p"))->Decode();
  EXPECT_EQ(bound["spec"].value("nodeName", ""), "n1");
  EXPECT_EQ(next(**pw), bound);
}

TEST_F(RegistryTest, PatchTypes) {
  MustCreate(MakeJob("a").Label("keep", "1").Obj());
  auto merge = reg_->Patch(*jobs_, "default", "a", PatchType::kMerge,
                           Json::parse(R"({"metadata":{"labels":{"x":"y"}}})"), false, {});
  ASSERT_TRUE(merge.ok()) << merge.status();
  EXPECT_EQ((*merge)["metadata"]["labels"]["keep"], "1");
  EXPECT_EQ((*merge)["metadata"]["labels"]["x"], "y");
  auto jp = reg_->Patch(*jobs_, "default", "a", PatchType::kJson,
                        Json::parse(R"([{"op":"remove","path":"/metadata/labels/x"}])"), false,
                        {});
  ASSERT_TRUE(jp.ok()) << jp.status();
  EXPECT_FALSE((*jp)["metadata"]["labels"].contains("x"));
  auto smp = reg_->Patch(
      *jobs_, "default", "a", PatchType::kStrategic,
      Json::parse(R"({"spec":{"template":{"spec":{"containers":[{"name":"main","env":[{"name":"A","value":"1"}]}]}}}})"),
      false, {});
  EXPECT_EQ(Reason(smp.status()), "Invalid");  // Template is immutable on a Job.
  auto bad = reg_->Patch(*jobs_, "default", "missing", PatchType::kMerge, Json::object(), false,
                         {});
  EXPECT_EQ(Reason(bad.status()), "NotFound");
}

// As kube-apiserver's GuaranteedUpdate: a patch that names no
// resourceVersion and loses a race with another writer is applied again on
// the newer object; one that names a resourceVersion gets the Conflict.
TEST_F(RegistryTest, PatchThatLosesARaceAppliesAgainUnlessItNamesAVersion) {
  MustCreate(MakeJob("a").Obj());
  for (bool status : {false, true}) {
    SCOPED_TRACE(status ? "status" : "main");
    store_.race_next_update = true;
    Json patch = status ? Json::parse(R"({"status":{"conditions":[]}})")
                        : Json::parse(R"({"metadata":{"labels":{"x":"y"}}})");
    auto r = reg_->Patch(*jobs_, "default", "a", PatchType::kMerge, patch, status, {});
    EXPECT_FALSE(store_.race_next_update);  // The race happened.
    ASSERT_TRUE(r.ok()) << r.status();
  }
  auto live = reg_->Get(*jobs_, "default", "a");
  ASSERT_TRUE(live.ok());
  EXPECT_EQ((*live)->Decode()["metadata"]["labels"]["x"], "y");
  const std::string rv = std::to_string((*live)->revision);
  store_.race_next_update = true;
  auto c = reg_->Patch(*jobs_, "default", "a", PatchType::kMerge,
                       Json::parse(R"({"metadata":{"resourceVersion":")" + rv +
                                   R"(","labels":{"x":"z"}}})"),
                       false, {});
  EXPECT_EQ(Reason(c.status()), "Conflict");
  EXPECT_EQ(reg_->Get(*jobs_, "default", "a").value()->Decode()["metadata"]["labels"]["x"], "y");
}

TEST_F(RegistryTest, DeleteWithFinalizersIsGraceful) {
  MustCreate(MakeJob("a").Finalizer("example.com/hold").Obj());
  DeleteOptions opts;
  opts.propagation_policy = "Background";
  auto d = reg_->Delete(*jobs_, "default", "a", opts);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_FALSE(d->deleted);
  auto got = reg_->Get(*jobs_, "default", "a");
  ASSERT_TRUE(got.ok());
  Json live = (*got)->Decode();
  EXPECT_TRUE(live["metadata"].contains("deletionTimestamp"));
  live["metadata"]["finalizers"] = Json::array();
  auto u = reg_->Update(*jobs_, "default", "a", live, false, {});
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_FALSE(reg_->Get(*jobs_, "default", "a").ok());
}

TEST_F(RegistryTest, DeletedEventCarriesTheFinalState) {
  MustCreate(MakeJob("a").Finalizer("example.com/hold").Obj());
  DeleteOptions bg;
  bg.propagation_policy = "Background";
  ASSERT_TRUE(reg_->Delete(*jobs_, "default", "a", bg).ok());
  ListOptions from_now;
  from_now.resource_version = std::to_string(reg_->cache().Revision());
  auto w = reg_->Watch(*jobs_, "default", from_now);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(reg_->Patch(*jobs_, "default", "a", PatchType::kMerge,
                          Json::parse(R"({"metadata":{"finalizers":null}})"), false, {})
                  .ok());
  Watcher::Event ev;
  std::string last_type;
  Json last;
  while ((*w)->Next(&ev, absl::Milliseconds(50))) {
    last_type = ev.type;
    last = ev.object->Decode();
  }
  EXPECT_EQ(last_type, "DELETED");
  EXPECT_FALSE(last["metadata"].contains("finalizers") &&
               !last["metadata"]["finalizers"].empty())
      << last.dump();
}

TEST_F(RegistryTest, DeletePreconditionsAndPolicies) {
  MustCreate(MakeJob("a").Obj());
  DeleteOptions wrong_uid;
  wrong_uid.precondition_uid = "nope";
  EXPECT_EQ(Reason(reg_->Delete(*jobs_, "default", "a", wrong_uid).status()), "Conflict");
  DeleteOptions orphan;  // Jobs default to Orphan: recorded as a finalizer for the GC.
  auto d = reg_->Delete(*jobs_, "default", "a", orphan);
  ASSERT_TRUE(d.ok());
  Json live = (*reg_->Get(*jobs_, "default", "a"))->Decode();
  EXPECT_EQ(live["metadata"]["finalizers"], Json::array({"orphan"}));
  MustCreate(MakeJob("b").Obj());
  DeleteOptions bg;
  bg.propagation_policy = "Background";
  auto d2 = reg_->Delete(*jobs_, "default", "b", bg);
  ASSERT_TRUE(d2.ok());
  EXPECT_TRUE(d2->deleted);
  EXPECT_EQ(Reason(reg_->Delete(*jobs_, "default", "b", bg).status()), "NotFound");
}

TEST_F(RegistryTest, ListSelectorsAndPaging) {
  for (int i = 0; i < 5; ++i) {
    MustCreate(MakeJob("j" + std::to_string(i)).Label("parity", i % 2 ? "odd" : "even").Obj());
  }
  ListOptions sel;
  sel.label_selector = "parity=even";
  auto even = reg_->List(*jobs_, "default", sel);
  ASSERT_TRUE(even.ok()) << even.status();
  EXPECT_EQ(even->items.size(), 3u);
  ListOptions fs;
  fs.field_selector = "metadata.name=j3";
  auto one = reg_->List(*jobs_, "", fs);
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->items.size(), 1u);
  ListOptions page;
  page.limit = 2;
  std::vector<std::string> names;
  for (int guard = 0; guard < 10; ++guard) {
    auto r = reg_->List(*jobs_, "default", page);
    ASSERT_TRUE(r.ok());
    for (const auto& o : r->items) names.push_back(o->fields().at("metadata.name"));
    if (r->continue_token.empty()) break;
    page.continue_token = r->continue_token;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"j0", "j1", "j2", "j3", "j4"}));
  ListOptions bad;
  bad.label_selector = "a in (";
  EXPECT_EQ(Reason(reg_->List(*jobs_, "default", bad).status()), "BadRequest");
}

TEST_F(RegistryTest, WatchFromRevisionAndSelectorTransitions) {
  Json a = MustCreate(MakeJob("a").Obj());
  ListOptions opts;
  opts.resource_version = a["metadata"]["resourceVersion"];
  opts.label_selector = "team=x";
  auto w = reg_->Watch(*jobs_, "default", opts);
  ASSERT_TRUE(w.ok()) << w.status();
  Json labeled = a;
  labeled["metadata"]["labels"]["team"] = "x";
  labeled["metadata"].erase("resourceVersion");
  ASSERT_TRUE(reg_->Update(*jobs_, "default", "a", labeled, false, {}).ok());
  auto un = reg_->Patch(*jobs_, "default", "a", PatchType::kMerge,
                        Json::parse(R"({"metadata":{"labels":{"team":null}}})"), false, {});
  ASSERT_TRUE(un.ok());
  Watcher::Event ev;
  ASSERT_TRUE((*w)->Next(&ev, absl::Seconds(5)));
  EXPECT_EQ(ev.type, "ADDED");  // Entered the selection.
  ASSERT_TRUE((*w)->Next(&ev, absl::Seconds(5)));
  EXPECT_EQ(ev.type, "DELETED");  // Left it.
  EXPECT_FALSE((*w)->Next(&ev, absl::Milliseconds(10)));
}

TEST_F(RegistryTest, NamespaceDeletionRemovesContents) {
  ASSERT_TRUE(reg_->Create(*namespaces_, "", MakeNamespace("team"), {}).ok());
  MustCreate(MakeJob("a", "team").Obj(), "team");
  // A finalizer holds "held" (and so the namespace) until it is removed.
  MustCreate(MakeJob("held", "team").Finalizer("example.com/hold").Obj(), "team");
  ListOptions w;
  w.field_selector = "metadata.name=team";
  auto watch = reg_->Watch(*namespaces_, "", w);
  ASSERT_TRUE(watch.ok());
  DeleteOptions opts;
  auto d = reg_->Delete(*namespaces_, "", "team", opts);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->object["status"]["phase"], "Terminating");
  auto blocked = reg_->Create(*jobs_, "team", MakeJob("b", "team").Obj(), {});
  EXPECT_EQ(Reason(blocked.status()), "Forbidden");
  // The namespace worker (its own thread) deletes "a" and marks "held".
  ListOptions jw;
  jw.field_selector = "metadata.name=held";
  auto held_watch = reg_->Watch(*jobs_, "team", jw);
  ASSERT_TRUE(held_watch.ok());
  Watcher::Event ev;
  bool marked = false;
  while (!marked && (*held_watch)->Next(&ev, absl::Seconds(10))) {
    marked = ev.object->Decode()["metadata"].contains("deletionTimestamp");
  }
  ASSERT_TRUE(marked);
  EXPECT_FALSE(reg_->Get(*jobs_, "team", "a").ok());
  EXPECT_TRUE(reg_->Get(*namespaces_, "", "team").ok());  // Still held.
  ASSERT_TRUE(reg_->Patch(*jobs_, "team", "held", PatchType::kMerge,
                          Json::parse(R"({"metadata":{"finalizers":null}})"), false, {})
                  .ok());
  // The worker retries on the injected clock; advancing it lets it finish.
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    clock_.Advance(absl::Seconds(1));
    while (!gone && (*watch)->Next(&ev, absl::Milliseconds(100))) gone = ev.type == "DELETED";
  }
  EXPECT_TRUE(gone);
  EXPECT_FALSE(reg_->Get(*namespaces_, "", "team").ok());
  EXPECT_EQ(Reason(reg_->Delete(*namespaces_, "", "default", opts).status()), "Forbidden");
}

TEST_F(RegistryTest, StoreWriteErrorsMapToApiErrors) {
  struct Case {
    absl::Status store;
    std::string reason;
    absl::StatusCode code;
  };
  for (const Case& c : std::vector<Case>{
           {absl::AbortedError("revision moved"), "Conflict", absl::StatusCode::kAborted},
           {absl::NotFoundError("gone"), "NotFound", absl::StatusCode::kNotFound},
           {absl::UnavailableError("disk"), "InternalError", absl::StatusCode::kInternal},
           // etcd out of reach, a fenced-off replica, a deadline (docs/ha.md).
           {store::UnreachableError("etcd: connection refused"), "ServiceUnavailable",
            absl::StatusCode::kUnavailable},
           {absl::FailedPreconditionError("fenced"), "ServiceUnavailable",
            absl::StatusCode::kUnavailable},
           {absl::DeadlineExceededError("etcd: no answer"), "Timeout",
            absl::StatusCode::kDeadlineExceeded},
       }) {
    SCOPED_TRACE(c.store.ToString());
    absl::Status st = StoreWriteError(*jobs_, "j", c.store);
    EXPECT_EQ(Reason(st), c.reason);
    EXPECT_EQ(st.code(), c.code);
  }
  EXPECT_NE(StoreWriteError(*jobs_, "j", absl::AbortedError("x")).message().find("jobs.batch \"j\""),
            std::string::npos);
  EXPECT_NE(StoreWriteError(*jobs_, "j", absl::UnavailableError("disk full")).message().find("disk full"),
            std::string::npos);
}

TEST_F(RegistryTest, AnErrorFoundTwiceIsReportedOnce) {
  api::FieldError e;
  e.type = api::FieldError::Type::kRequired;
  e.field = "spec.x";
  api::FieldError other = e;
  other.field = "spec.y";
  absl::Status st = Invalid(*jobs_, "j", {e, other, e});
  EXPECT_EQ(GetPayload(st).details["causes"].size(), 2u);
  EXPECT_EQ(st.message(),
            "Job.batch \"j\" is invalid: [spec.x: Required value, spec.y: Required value]");
  st = Invalid(*jobs_, "j", {e, e});
  EXPECT_EQ(GetPayload(st).details["causes"].size(), 1u);
  EXPECT_EQ(st.message(), "Job.batch \"j\" is invalid: spec.x: Required value");
}

}  // namespace
}  // namespace batchd::registry
