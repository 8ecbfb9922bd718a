#include "api/meta/object_writers.h"

#include <string_view>

#include "gtest/gtest.h"

namespace batchd::api::meta {
namespace {

TEST(ObjectWritersTest, EnsureTypeMetaKeepsWhatIsThere) {
  Json obj = {{"kind", "Custom"}};
  EnsureTypeMeta(obj, "batch/v1", "Job");
  EXPECT_EQ(obj["apiVersion"], "batch/v1");
  EXPECT_EQ(obj["kind"], "Custom");
  SetTypeMeta(obj, "v1", "Pod");
  EXPECT_EQ(obj["apiVersion"], "v1");
  EXPECT_EQ(obj["kind"], "Pod");
}

TEST(ObjectWritersTest, RemoveOwnerReferencesDropsObjectsByUid) {
  Json obj = Json::parse(R"({"metadata": {"name": "d", "ownerReferences": [
    {"uid": "a", "kind": "Job"}, "junk", {"uid": "b"}, {"uid": "a"}]}})");
  EXPECT_TRUE(RemoveOwnerReferences(obj, [](std::string_view uid) { return uid == "a"; }));
  EXPECT_EQ(obj["metadata"]["ownerReferences"], Json::parse(R"(["junk", {"uid": "b"}])"));
  EXPECT_FALSE(RemoveOwnerReferences(obj, [](std::string_view uid) { return uid == "a"; }));
  EXPECT_EQ(obj["metadata"]["ownerReferences"].size(), 2u);
}

TEST(ObjectWritersTest, RemoveOwnerReferencesRemovesAnEmptiedOrMistypedList) {
  Json obj = Json::parse(R"({"metadata": {"ownerReferences": [{"uid": "a"}]}})");
  EXPECT_TRUE(RemoveOwnerReferences(obj, [](std::string_view) { return true; }));
  EXPECT_EQ(obj["metadata"], Json::object());
  Json empty = Json::parse(R"({"metadata": {"ownerReferences": []}})");
  EXPECT_FALSE(RemoveOwnerReferences(empty, [](std::string_view) { return true; }));
  EXPECT_EQ(empty["metadata"], Json::object());
  Json none = Json::object();
  EXPECT_FALSE(RemoveOwnerReferences(none, [](std::string_view) { return true; }));
  EXPECT_EQ(none, Json::parse(R"({"metadata": {}})"));
}

}  // namespace
}  // namespace batchd::api::meta
