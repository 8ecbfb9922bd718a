#include "api/meta/object_meta.h"

#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/random/random.h"
#include "gtest/gtest.h"

namespace batchd::api::meta {
namespace {

Json Job() {
  return Json::parse(R"({
    "apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "pi", "namespace": "default", "uid": "u-1", "resourceVersion": "7",
                 "generation": 3, "creationTimestamp": "2024-05-01T12:00:00Z",
                 "labels": {"app": "pi", "bad": 1}, "annotations": {"a": "b"},
                 "finalizers": ["batch.kubernetes.io/job-tracking"]}
  })");
}

TEST(ObjectMetaTest, Getters) {
  Json j = Job();
  EXPECT_EQ(GetName(j), "pi");
  EXPECT_EQ(GetNamespace(j), "default");
  EXPECT_EQ(GetUid(j), "u-1");
  EXPECT_EQ(GetResourceVersion(j), "7");
  EXPECT_EQ(GetGeneration(j), 3);
  EXPECT_EQ(GetCreationTimestamp(j), absl::FromUnixSeconds(1714564800));
  EXPECT_EQ(GetDeletionTimestamp(j), std::nullopt);
  EXPECT_FALSE(IsBeingDeleted(j));
  EXPECT_EQ(Labels(j), (std::map<std::string, std::string>{{"app", "pi"}}));  // Skips non-strings.
  EXPECT_EQ(GetLabel(j, "app"), "pi");
  EXPECT_EQ(GetLabel(j, "missing"), std::nullopt);
  EXPECT_EQ(GetAnnotation(j, "a"), "b");

  struct Case {
    std::string name;
    Json obj;
  };
  std::vector<Case> empties = {{"null", nullptr},
                               {"no metadata", Json::object()},
                               {"metadata not object", {{"metadata", 5}}},
                               {"wrong types", {{"metadata", {{"name", 1}, {"labels", "x"}}}}}};
  for (const Case& c : empties) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(GetName(c.obj), "");
    EXPECT_EQ(GetGeneration(c.obj), 0);
    EXPECT_TRUE(Labels(c.obj).empty());
    EXPECT_TRUE(Finalizers(c.obj).empty());
    EXPECT_EQ(GetControllerRef(c.obj), std::nullopt);
  }
}

TEST(ObjectMetaTest, SettersCreateMetadata) {
  Json j = Json::object();
  SetLabel(j, "kueue.x-k8s.io/queue-name", "lq");
  SetAnnotation(j, "note", "x");
  SetName(j, "n");
  EXPECT_EQ(j["metadata"]["labels"]["kueue.x-k8s.io/queue-name"], "lq");
  EXPECT_EQ(GetAnnotation(j, "note"), "x");
  EXPECT_EQ(GetName(j), "n");
  EXPECT_TRUE(RemoveLabel(j, "kueue.x-k8s.io/queue-name"));
  EXPECT_FALSE(RemoveLabel(j, "kueue.x-k8s.io/queue-name"));
  EXPECT_FALSE(j["metadata"].contains("labels"));  // Emptied map removed.
  Json null_obj;
  MutableMetadata(null_obj);
  EXPECT_TRUE(null_obj.is_object());
  EXPECT_TRUE(null_obj["metadata"].is_object());
}

TEST(ObjectMetaTest, Finalizers) {
  Json j = Job();
  EXPECT_TRUE(HasFinalizer(j, "batch.kubernetes.io/job-tracking"));
  EXPECT_FALSE(AddFinalizer(j, "batch.kubernetes.io/job-tracking"));
  EXPECT_TRUE(AddFinalizer(j, "x.io/f"));
  EXPECT_EQ(Finalizers(j),
            (std::vector<std::string>{"batch.kubernetes.io/job-tracking", "x.io/f"}));
  EXPECT_TRUE(RemoveFinalizer(j, "batch.kubernetes.io/job-tracking"));
  EXPECT_FALSE(RemoveFinalizer(j, "batch.kubernetes.io/job-tracking"));
  EXPECT_TRUE(RemoveFinalizer(j, "x.io/f"));
  EXPECT_FALSE(j["metadata"].contains("finalizers"));
  Json fresh;
  EXPECT_TRUE(AddFinalizer(fresh, "a"));
  EXPECT_EQ(Finalizers(fresh), std::vector<std::string>{"a"});
}

TEST(ObjectMetaTest, OwnerReferences) {
  Json job = Job();
  Json pod = Json::object();
  OwnerReference ref = NewControllerRef(job);
  EXPECT_EQ(ref.api_version, "batch/v1");
  EXPECT_EQ(ref.kind, "Job");
  EXPECT_EQ(ref.name, "pi");
  EXPECT_EQ(ref.uid, "u-1");
  EXPECT_TRUE(ref.controller);
  EXPECT_TRUE(ref.block_owner_deletion);
  SetOwnerReference(pod, OwnerReference{"v1", "ConfigMap", "cm", "u-2", false, false});
  SetOwnerReference(pod, ref);
  SetOwnerReference(pod, ref);  // Same uid: replaced, not duplicated.
  EXPECT_EQ(GetOwnerReferences(pod).size(), 2u);
  EXPECT_EQ(pod["metadata"]["ownerReferences"][0],
            Json::parse(R"({"apiVersion":"v1","kind":"ConfigMap","name":"cm","uid":"u-2"})"));
  std::optional<OwnerReference> ctrl = GetControllerRef(pod);
  ASSERT_TRUE(ctrl.has_value());
  EXPECT_EQ(ctrl->uid, "u-1");
  EXPECT_TRUE(IsControlledBy(pod, "u-1"));
  EXPECT_FALSE(IsControlledBy(pod, "u-2"));
  EXPECT_EQ(ref.ToJson()["controller"], true);
  EXPECT_EQ(OwnerReference::FromJson(ref.ToJson()), std::optional<OwnerReference>(ref));
}

TEST(ObjectMetaTest, ControllerRefIsTheFirstWithControllerTrue) {
  // Entries that are not objects, or whose controller is not the boolean
  // true, are passed over; of two controllers the first is returned.
  Json pod = Json::parse(R"({"metadata":{"ownerReferences":[
      5,
      {"apiVersion":"v1","kind":"ConfigMap","name":"cm","uid":"u-0","controller":"true"},
      {"apiVersion":"batch/v1","kind":"Job","name":"a","uid":"u-1","controller":true},
      {"apiVersion":"batch/v1","kind":"Job","name":"b","uid":"u-2","controller":true}]}})");
  std::optional<OwnerReference> ctrl = GetControllerRef(pod);
  ASSERT_TRUE(ctrl.has_value());
  EXPECT_EQ(*ctrl, (OwnerReference{"batch/v1", "Job", "a", "u-1", true, false}));
  EXPECT_EQ(GetOwnerReferences(pod).size(), 3u);
  std::optional<OwnerRefView> view = ControllerRefView(pod);
  ASSERT_TRUE(view.has_value());
  EXPECT_EQ(view->uid, "u-1");
  EXPECT_EQ(view->name, "a");
  EXPECT_TRUE(IsControlledBy(pod, "u-1"));
  EXPECT_FALSE(IsControlledBy(pod, "u-2"));
  pod["metadata"]["namespace"] = "ns";
  EXPECT_EQ(ControllerKey(pod, "batch/v1", "Job"), "ns/a");
  EXPECT_EQ(ControllerKey(pod, "batch/v1", "CronJob"), "");
  EXPECT_EQ(ControllerKey(pod, "v1", "Job"), "");
  pod["metadata"]["ownerReferences"].erase(2);
  pod["metadata"]["ownerReferences"].erase(2);
  EXPECT_EQ(GetControllerRef(pod), std::nullopt);
  EXPECT_EQ(ControllerRefView(pod), std::nullopt);
  EXPECT_EQ(ControllerKey(pod, "v1", "ConfigMap"), "");
  pod["metadata"]["ownerReferences"] = "not a list";
  EXPECT_EQ(GetControllerRef(pod), std::nullopt);
  EXPECT_TRUE(GetOwnerReferences(pod).empty());
}

TEST(ObjectMetaTest, NewUidIsV4AndDeterministicPerSeed) {
  std::mt19937_64 gen_a(42), gen_b(42);
  std::string a = NewUid(gen_a);
  EXPECT_EQ(a, NewUid(gen_b));
  ASSERT_EQ(a.size(), 36u);
  for (size_t i : {8u, 13u, 18u, 23u}) EXPECT_EQ(a[i], '-');
  EXPECT_EQ(a[14], '4');
  EXPECT_TRUE(std::string("89ab").find(a[19]) != std::string::npos) << a;
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) seen.insert(NewUid(gen_a));
  EXPECT_EQ(seen.size(), 100u);
}

}  // namespace
}  // namespace batchd::api::meta
