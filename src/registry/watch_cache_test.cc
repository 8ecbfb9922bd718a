#include "registry/watch_cache.h"

#include <memory>
#include <string>

#include "api/kind.h"
#include "gtest/gtest.h"
#include "store/memory/memory_store.h"

namespace batchd::registry {
namespace {

using api::Json;

const char kPodKey[] = "/registry/core/pods/default/p";

std::string PodJson(const std::string& phase) {
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "p"}, {"namespace", "default"}, {"labels", {{"app", "x"}}}}},
              {"spec", {{"nodeName", "n1"}}},
              {"status", {{"phase", phase}}}};
  return pod.dump();
}

class WatchCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_ = std::make_unique<WatchCache>(store_, api::BuiltinScheme());
    ASSERT_TRUE(cache_->Start().ok());
  }
  store::MemoryStore store_;
  std::unique_ptr<WatchCache> cache_;
};

// Storing a write does not parse it: the first reader decodes the object
// (resourceVersion included), readers share that decoding while one holds it,
// and labels and selectable fields are extracted when first asked for.
TEST_F(WatchCacheTest, ObjectsAreDecodedOnFirstUseAndShared) {
  auto sub = cache_->Watch("/registry/core/pods/", -1);
  ASSERT_TRUE(sub.ok());
  auto kv = store_.Create(kPodKey, PodJson("Running"));
  ASSERT_TRUE(kv.ok());
  CacheEvent ev;
  ASSERT_TRUE((*sub)->Next(&ev, absl::Seconds(5)));
  std::shared_ptr<const Json> d = ev.object->Shared();
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(ev.object->Shared().get(), d.get());
  EXPECT_EQ((*d)["metadata"]["resourceVersion"], std::to_string(kv->mod_revision));
  EXPECT_EQ(*d, Json::parse(ev.object->json));
  EXPECT_EQ(ev.object->labels().at("app"), "x");
  EXPECT_EQ(ev.object->fields().at("spec.nodeName"), "n1");
  EXPECT_EQ(ev.object->fields().at("status.phase"), "Running");
  EXPECT_EQ(ev.object->fields().at("metadata.namespace"), "default");
  EXPECT_EQ(cache_->Get(kPodKey)->Shared().get(), d.get());  // the cached version too
}

// The replay ring keeps objects, not their decodings: a replayed event has
// none, and Shared() still decodes the object on demand.
TEST_F(WatchCacheTest, ReplayRingDoesNotRetainDecodings) {
  auto kv = store_.Create(kPodKey, PodJson("Pending"));
  ASSERT_TRUE(kv.ok());
  ASSERT_TRUE(store_.Update(kPodKey, PodJson("Succeeded"), kv->mod_revision).ok());
  auto sub = cache_->Watch("/registry/core/pods/", 0);
  ASSERT_TRUE(sub.ok());
  struct Case {
    const char* phase;
  };
  for (const Case& c : {Case{"Pending"}, Case{"Succeeded"}}) {
    SCOPED_TRACE(c.phase);
    CacheEvent ev;
    ASSERT_TRUE((*sub)->Next(&ev, absl::Seconds(5)));
    EXPECT_EQ(ev.object->fields().at("status.phase"), c.phase);
    std::shared_ptr<const Json> d = ev.object->Shared();
    ASSERT_NE(d, nullptr);
    EXPECT_EQ((*d)["status"]["phase"], c.phase);
    EXPECT_EQ(ev.object->Shared().get(), d.get());  // shared while held
  }
}

}  // namespace
}  // namespace batchd::registry
