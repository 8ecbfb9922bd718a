#include "api/patch/managed_fields.h"

#include <gtest/gtest.h>

#include <cstdio>

namespace batchd::api::fieldmanager {
namespace {

SchemaPtr TestSchema() {
  static const SchemaPtr s = [] {
    SchemaPtr container = Object("t.Container", "c")
                              .Field("name", Str())
                              .Field("image", Str())
                              .Field("args", ArrayOf(Str()))
                              .Build();
    SchemaPtr port = Object("t.Port", "p")
                         .Field("containerPort", Int32())
                         .Field("protocol", Str())
                         .Build();
    return Object("t.Thing", "thing")
        .Field("apiVersion", Str())
        .Field("kind", Str())
        .Field("metadata", InlineObject("meta")
                               .Field("name", Str())
                               .Field("labels", MapOf(Str()))
                               .Field("finalizers", ArrayOf(Str()).ListType("set"))
                               .Field("managedFields", ArrayOf(AnyValue())))
        .Field("spec", Object("t.Spec", "spec")
                           .Field("replicas", Int32())
                           .Field("containers", ArrayOf(container).MergeKey("name"))
                           .Field("ports", ArrayOf(port).ListType("map").ListMapKeys(
                                               {"containerPort", "protocol"})))
        .Field("status", Object("t.Status", "status").Field("ready", Int32()))
        .Build();
  }();
  return s;
}

Operation Op(const std::string& manager, const std::string& time = "2026-12-06T10:00:00Z") {
  Operation op;
  op.manager = manager;
  op.api_version = "t/v1";
  op.time = time;
  op.ignored = IgnoredPaths(/*status=*/false, /*has_status=*/true);
  return op;
}

TEST(FieldSetTest, FieldsOfFollowsListSemantics) {
  Json obj = Json::parse(R"({
    "metadata": {"labels": {"app": "x"}, "finalizers": ["a", "b"]},
    "spec": {"replicas": 2, "containers": [{"name": "c", "image": "i", "args": ["1", "2"]}],
             "ports": [{"containerPort": 80, "protocol": "TCP"}]},
    "empty": {}})");
  Json want = Json::parse(R"({
    "f:metadata": {"f:labels": {"f:app": {}},
                   "f:finalizers": {"v:\"a\"": {}, "v:\"b\"": {}}},
    "f:spec": {"f:replicas": {},
               "f:containers": {"k:{\"name\":\"c\"}": {".": {}, "f:name": {}, "f:image": {},
                                                       "f:args": {}}},
               "f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":
                               {".": {}, "f:containerPort": {}, "f:protocol": {}}}}})");
  EXPECT_EQ(ToFieldsV1(FieldsOf(obj, TestSchema().get())), want);
  // FieldsV1 round-trips.
  EXPECT_EQ(*FromFieldsV1(want), FieldsOf(obj, TestSchema().get()));
}

TEST(FieldSetTest, MalformedFieldsV1Refused) {
  EXPECT_FALSE(FromFieldsV1(Json::parse(R"({"x:bad": {}})")).ok());
  EXPECT_FALSE(FromFieldsV1(Json::parse(R"({"f:a": 1})")).ok());
  EXPECT_FALSE(FromFieldsV1(Json::parse(R"({"f:a": {".": {"f:b": {}}}})")).ok());
  EXPECT_FALSE(FromFieldsV1(Json::array()).ok());
  EXPECT_FALSE(ParseManagedFields(Json::parse(R"([{"manager": "m", "operation": "Merge"}])")).ok());
}

TEST(FieldSetTest, PathStrings) {
  EXPECT_EQ(PathString({"f:spec", "f:containers", "k:{\"name\":\"c\"}", "f:image"}),
            ".spec.containers[name=\"c\"].image");
  EXPECT_EQ(PathString({"f:spec", "f:ports", "k:{\"containerPort\":80,\"protocol\":\"TCP\"}"}),
            ".spec.ports[containerPort=80,protocol=\"TCP\"]");
  EXPECT_EQ(PathString({"f:metadata", "f:finalizers", "v:\"a\""}), ".metadata.finalizers[=\"a\"]");
  EXPECT_EQ(PathString({"f:items", "i:2"}), ".items[2]");
}

TEST(FieldSetTest, CompareFindsAddedModifiedRemoved) {
  Json a = Json::parse(R"({"spec": {"replicas": 1, "containers": [{"name": "c", "image": "i"}]},
                           "metadata": {"labels": {"x": "1", "y": "2"}}})");
  Json b = Json::parse(R"({"spec": {"replicas": 2, "containers": [{"name": "c", "image": "i"},
                                                                  {"name": "d"}]},
                           "metadata": {"labels": {"x": "1"}}})");
  Comparison c = Compare(a, b, TestSchema().get());
  EXPECT_EQ(c.modified, (FieldSet{{"f:spec", "f:replicas"}}));
  EXPECT_EQ(c.added, (FieldSet{{"f:spec", "f:containers", "k:{\"name\":\"d\"}"},
                               {"f:spec", "f:containers", "k:{\"name\":\"d\"}", "f:name"}}));
  EXPECT_EQ(c.removed, (FieldSet{{"f:metadata", "f:labels", "f:y"}}));
  EXPECT_TRUE(Compare(a, a, TestSchema().get()).Empty());
}

TEST(ApplyTest, CreateOwnsTheConfigurationButNotServerFields) {
  Json config = Json::parse(R"({"apiVersion": "t/v1", "kind": "Thing",
                                "metadata": {"name": "n", "labels": {"a": "1"}},
                                "spec": {"replicas": 1}, "status": {"ready": 1}})");
  ApplyResult r = Apply({}, nullptr, config, TestSchema().get(), Op("a"), false);
  ASSERT_TRUE(r.conflicts.empty());
  ASSERT_EQ(r.entries.size(), 1u);
  EXPECT_EQ(r.entries[0].manager, "a");
  EXPECT_EQ(r.entries[0].operation, "Apply");
  EXPECT_EQ(ToFieldsV1(r.entries[0].fields),
            Json::parse(R"({"f:metadata": {"f:labels": {"f:a": {}}}, "f:spec": {"f:replicas": {}}})"));
  Json encoded = EncodeManagedFields(r.entries);
  EXPECT_EQ(encoded[0]["fieldsType"], "FieldsV1");
  EXPECT_EQ(encoded[0]["time"], "2026-12-06T10:00:00Z");
  EXPECT_EQ(*ParseManagedFields(encoded).value()[0].fields.begin(),
            *r.entries[0].fields.begin());
}

TEST(ApplyTest, SecondManagerConflictsAndForceTransfersOwnership) {
  const Schema* s = TestSchema().get();
  Json a_cfg = Json::parse(R"({"metadata": {"labels": {"team": "x"}}, "spec": {"replicas": 1}})");
  ApplyResult a = Apply({}, nullptr, a_cfg, s, Op("a"), false);
  // Same value: shared ownership, no conflict.
  Json same = Json::parse(R"({"spec": {"replicas": 1}})");
  ApplyResult shared = Apply(a.entries, &a.object, same, s, Op("b"), false);
  ASSERT_TRUE(shared.conflicts.empty());
  ASSERT_EQ(shared.entries.size(), 2u);
  EXPECT_TRUE(shared.entries[0].fields.count({"f:spec", "f:replicas"}));
  EXPECT_TRUE(shared.entries[1].fields.count({"f:spec", "f:replicas"}));
  // A different value conflicts with the owner.
  Json b_cfg = Json::parse(R"({"spec": {"replicas": 3}, "metadata": {"labels": {"team": "y"}}})");
  ApplyResult refused = Apply(a.entries, &a.object, b_cfg, s, Op("b"), false);
  ASSERT_EQ(refused.conflicts.size(), 2u);
  EXPECT_EQ(ConflictMessage(refused.conflicts),
            "Apply failed with 2 conflicts: conflicts with \"a\":\n- .metadata.labels.team\n"
            "- .spec.replicas");
  EXPECT_EQ(ConflictMessage({refused.conflicts[1]}),
            "Apply failed with 1 conflict: conflict with \"a\": .spec.replicas");
  // Forced: b owns them, a keeps nothing.
  ApplyResult forced = Apply(a.entries, &a.object, b_cfg, s, Op("b"), true);
  ASSERT_TRUE(forced.conflicts.empty());
  EXPECT_EQ(forced.object["spec"]["replicas"], 3);
  EXPECT_EQ(forced.object["metadata"]["labels"]["team"], "y");
  ASSERT_EQ(forced.entries.size(), 1u);
  EXPECT_EQ(forced.entries[0].manager, "b");
}

TEST(ApplyTest, DroppedFieldsAreRemovedUnlessSomeoneElseOwnsThem) {
  const Schema* s = TestSchema().get();
  Json v1 = Json::parse(R"({"metadata": {"labels": {"a": "1", "b": "2"}},
                            "spec": {"containers": [{"name": "c", "image": "i"},
                                                    {"name": "d", "image": "j"}]}})");
  ApplyResult first = Apply({}, nullptr, v1, s, Op("m"), false);
  // Another manager updates container d's image (Update operation).
  Json edited = first.object;
  edited["spec"]["containers"][1]["image"] = "k";
  std::vector<Entry> entries = first.entries;
  RecordUpdate(entries, &first.object, edited, s, Op("editor"));
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[1].operation, "Update");
  EXPECT_EQ(entries[1].fields,
            (FieldSet{{"f:spec", "f:containers", "k:{\"name\":\"d\"}", "f:image"}}));
  // The image moved away from m.
  EXPECT_FALSE(entries[0].fields.count({"f:spec", "f:containers", "k:{\"name\":\"d\"}", "f:image"}));
  // m drops label b and container d.
  Json v2 = Json::parse(R"({"metadata": {"labels": {"a": "1"}},
                            "spec": {"containers": [{"name": "c", "image": "i"}]}})");
  ApplyResult second = Apply(entries, &edited, v2, s, Op("m"), false);
  ASSERT_TRUE(second.conflicts.empty());
  EXPECT_EQ(second.object["metadata"]["labels"], Json::parse(R"({"a": "1"})"));
  // Container d stays (the editor owns its image) with only what others own.
  ASSERT_EQ(second.object["spec"]["containers"].size(), 2u);
  EXPECT_EQ(second.object["spec"]["containers"][1], Json::parse(R"({"name": "d", "image": "k"})"));
  // Once nobody else owns anything in it, it goes.
  Json v3 = Json::parse(R"({"spec": {"containers": [{"name": "c", "image": "i"}]}})");
  ApplyResult third = Apply(first.entries, &first.object, v3, s, Op("m"), false);
  EXPECT_EQ(third.object["spec"]["containers"].size(), 1u);
  EXPECT_FALSE(third.object["metadata"].contains("labels") &&
               !third.object["metadata"]["labels"].empty());
}

TEST(ApplyTest, ObjectsWithoutOwnersBelongToBeforeFirstApply) {
  const Schema* s = TestSchema().get();
  Json live = Json::parse(R"({"metadata": {"name": "n"}, "spec": {"replicas": 1}})");
  ApplyResult r = Apply({}, &live, Json::parse(R"({"spec": {"replicas": 2}})"), s, Op("a"), false);
  ASSERT_EQ(r.conflicts.size(), 1u);
  EXPECT_EQ(ConflictMessage(r.conflicts),
            "Apply failed with 1 conflict: conflict with \"before-first-apply\" using t/v1: "
            ".spec.replicas");
}

TEST(UpdateTest, UpdatesTakeOwnershipAndNoOpsChangeNothing) {
  const Schema* s = TestSchema().get();
  Json old = Json::parse(R"({"spec": {"replicas": 1}, "metadata": {"name": "n"}})");
  std::vector<Entry> entries;
  RecordUpdate(entries, nullptr, old, s, Op("creator"));
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].fields, (FieldSet{{"f:spec", "f:replicas"}}));
  std::vector<Entry> before = entries;
  RecordUpdate(entries, &old, old, s, Op("other", "2026-12-06T11:00:00Z"));
  EXPECT_EQ(EncodeManagedFields(entries), EncodeManagedFields(before));
  Json next = old;
  next["spec"]["replicas"] = 5;
  next["status"] = {{"ready", 1}};  // Ignored on the main resource.
  RecordUpdate(entries, &old, next, s, Op("other", "2026-12-06T11:00:00Z"));
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].manager, "other");
  EXPECT_EQ(entries[0].time, "2026-12-06T11:00:00Z");
}

TEST(UpdateTest, UpdateManagersAreBounded) {
  const Schema* s = TestSchema().get();
  Json obj = Json::parse(R"({"metadata": {"labels": {}}})");
  std::vector<Entry> entries;
  for (int i = 0; i < 25; ++i) {
    Json next = obj;
    next["metadata"]["labels"]["l" + std::to_string(i)] = "v";
    char time[32];
    std::snprintf(time, sizeof(time), "2026-12-06T10:%02d:00Z", i);
    RecordUpdate(entries, &obj, next, s, Op("writer-" + std::to_string(i), time));
    obj = next;
    EXPECT_LE(entries.size(), kMaxUpdateManagers);
  }
  ASSERT_EQ(entries.size(), kMaxUpdateManagers);
  // The newest writers keep their entries; the oldest share "ancient-changes".
  EXPECT_EQ(entries.back().manager, "ancient-changes");
  EXPECT_EQ(entries.back().fields.size(), 16u);
  EXPECT_TRUE(entries.back().fields.count({"f:metadata", "f:labels", "f:l0"}));
  EXPECT_EQ(entries[entries.size() - 2].manager, "writer-24");
  size_t owned = 0;
  for (const Entry& e : entries) owned += e.fields.size();
  EXPECT_EQ(owned, 25u);  // Nothing lost, nothing owned twice.
}

TEST(MergeTest, AssociativeListsMergeByKeyAndAtomicListsReplace) {
  const Schema* s = TestSchema().get();
  Json live = Json::parse(R"({"spec": {"containers": [{"name": "c", "image": "i", "args": ["x"]}]},
                              "metadata": {"finalizers": ["a"]}})");
  Json cfg = Json::parse(R"({"spec": {"containers": [{"name": "c", "args": ["y"]},
                                                     {"name": "d"}]},
                             "metadata": {"finalizers": ["b"]}})");
  Json m = MergeApplied(live, cfg, s);
  EXPECT_EQ(m["spec"]["containers"],
            Json::parse(R"([{"name": "c", "image": "i", "args": ["y"]}, {"name": "d"}])"));
  EXPECT_EQ(m["metadata"]["finalizers"], Json::parse(R"(["a", "b"])"));
}

}  // namespace
}  // namespace batchd::api::fieldmanager
