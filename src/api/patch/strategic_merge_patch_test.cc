#include <string>
#include <vector>

#include "api/patch/patch.h"
#include "gtest/gtest.h"

namespace batchd::api {
namespace {

// A slice of the Job schema with the patch metadata Kubernetes declares.
SchemaPtr JobSchema() {
  SchemaPtr env = Object("EnvVar", "").Field("name", Str()).Field("value", Str()).Build();
  SchemaPtr container = Object("Container", "")
                            .Field("name", Str())
                            .Field("image", Str())
                            .Field("args", ArrayOf(Str()))
                            .Field("env", ArrayOf(env).MergeKey("name"))
                            .Build();
  SchemaPtr volume = Object("Volume", "")
                         .Field("name", Str())
                         .Field("emptyDir", AnyValue())
                         .Field("hostPath", AnyValue())
                         .PatchStrategy("retainKeys")
                         .Build();
  SchemaPtr pod_spec =
      Object("PodSpec", "")
          .Field("containers", ArrayOf(container).MergeKey("name"))
          .Field("volumes", ArrayOf(volume).MergeKey("name").PatchStrategy("merge,retainKeys"))
          .Field("finalizers", ArrayOf(Str()).PatchStrategy("merge"))
          .Build();
  SchemaPtr meta = Object("ObjectMeta", "")
                       .Field("name", Str())
                       .Field("labels", MapOf(Str()))
                       .Field("annotations", MapOf(Str()))
                       .Build();
  SchemaPtr templ = Object("PodTemplateSpec", "").Field("metadata", meta).Field("spec", pod_spec);
  SchemaPtr job_spec = Object("JobSpec", "").Field("template", templ).Build();
  return Object("Job", "").Field("metadata", meta).Field("spec", job_spec).Build();
}

struct Case {
  std::string name;
  std::string original;
  std::string patch;
  std::string want;
};

// Wraps a pod-spec fragment as a Job.
std::string InPod(const std::string& spec) {
  return R"({"spec":{"template":{"spec":)" + spec + "}}}";
}

void RunCases(const std::vector<Case>& cases, const Schema* schema) {
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = ApplyStrategicMergePatch(Json::parse(c.original), Json::parse(c.patch), schema);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, Json::parse(c.want)) << got->dump();
  }
}

TEST(ApplyStrategicMergePatch, Maps) {
  SchemaPtr job = JobSchema();
  RunCases(
      {
          {"merge and delete", R"({"metadata":{"labels":{"a":"1","b":"2"}}})",
           R"({"metadata":{"labels":{"a":null,"c":"3"}}})",
           R"({"metadata":{"labels":{"b":"2","c":"3"}}})"},
          {"$patch replace on map", R"({"metadata":{"labels":{"a":"1"},"name":"x"}})",
           R"({"metadata":{"labels":{"$patch":"replace","b":"2"}}})",
           R"({"metadata":{"labels":{"b":"2"},"name":"x"}})"},
          {"$patch delete on map", R"({"metadata":{"labels":{"a":"1"},"name":"x"}})",
           R"({"metadata":{"labels":{"$patch":"delete"}}})",
           R"({"metadata":{"labels":{},"name":"x"}})"},
          {"$patch merge is the default", R"({"metadata":{"labels":{"a":"1"}}})",
           R"({"metadata":{"labels":{"$patch":"merge","b":"2"}}})",
           R"({"metadata":{"labels":{"a":"1","b":"2"}}})"},
          {"new subtree has nulls dropped", "{}", R"({"metadata":{"labels":{"a":null,"b":"1"}}})",
           R"({"metadata":{"labels":{"b":"1"}}})"},
          {"scalar replaces map", R"({"metadata":{"name":{"x":1}}})", R"({"metadata":{"name":"n"}})",
           R"({"metadata":{"name":"n"}})"},
      },
      job.get());
}

TEST(ApplyStrategicMergePatch, Lists) {
  SchemaPtr job = JobSchema();
  const std::string two = InPod(R"({"containers":[{"name":"a","image":"x"},{"name":"b","image":"y"}]})");
  RunCases(
      {
          {"merge by key, append new", two,
           InPod(R"({"containers":[{"name":"b","image":"z"},{"name":"c","image":"w"}]})"),
           InPod(R"({"containers":[{"name":"a","image":"x"},{"name":"b","image":"z"},
                                   {"name":"c","image":"w"}]})")},
          {"$patch delete element", two, InPod(R"({"containers":[{"$patch":"delete","name":"a"}]})"),
           InPod(R"({"containers":[{"name":"b","image":"y"}]})")},
          {"$patch replace list", two,
           InPod(R"({"containers":[{"$patch":"replace"},{"name":"c","image":"w"}]})"),
           InPod(R"({"containers":[{"name":"c","image":"w"}]})")},
          {"bare $patch merge element ignored", two,
           InPod(R"({"containers":[{"$patch":"merge"},{"name":"a","image":"q"}]})"),
           InPod(R"({"containers":[{"name":"a","image":"q"},{"name":"b","image":"y"}]})")},
          {"null in element deletes field", two,
           InPod(R"({"containers":[{"name":"a","image":null}]})"),
           InPod(R"({"containers":[{"name":"a"},{"name":"b","image":"y"}]})")},
          {"nested merge list", InPod(R"({"containers":[{"name":"a","env":[{"name":"A","value":"1"},
                                                                      {"name":"B","value":"2"}]}]})"),
           InPod(R"({"containers":[{"name":"a","env":[{"name":"B","value":"3"}]}]})"),
           InPod(R"({"containers":[{"name":"a","env":[{"name":"A","value":"1"},
                                                       {"name":"B","value":"3"}]}]})")},
          {"list without strategy is replaced", InPod(R"({"containers":[{"name":"a","args":["1","2"]}]})"),
           InPod(R"({"containers":[{"name":"a","args":["3"]}]})"),
           InPod(R"({"containers":[{"name":"a","args":["3"]}]})")},
          {"primitive merge list is a union", InPod(R"({"finalizers":["a","b"]})"),
           InPod(R"({"finalizers":["b","c"]})"), InPod(R"({"finalizers":["a","b","c"]})")},
          {"$deleteFromPrimitiveList", InPod(R"({"finalizers":["a","b","a"]})"),
           InPod(R"({"$deleteFromPrimitiveList/finalizers":["a"]})"), InPod(R"({"finalizers":["b"]})")},
          {"delete list field", two, InPod(R"({"containers":null})"), InPod("{}")},
          {"directives in new list do not leak", "{}",
           InPod(R"({"containers":[{"name":"a","env":[{"name":"E","value":"1"},
                                                       {"$patch":"delete","name":"F"}]}]})"),
           InPod(R"({"containers":[{"name":"a","env":[{"name":"E","value":"1"}]}]})")},
      },
      job.get());
}

TEST(ApplyStrategicMergePatch, ElementOrderAndRetainKeys) {
  SchemaPtr job = JobSchema();
  const std::string abc =
      InPod(R"({"containers":[{"name":"a"},{"name":"b"},{"name":"c"}]})");
  RunCases(
      {
          {"reorder only", abc,
           InPod(R"({"$setElementOrder/containers":[{"name":"c"},{"name":"b"},{"name":"a"}]})"),
           InPod(R"({"containers":[{"name":"c"},{"name":"b"},{"name":"a"}]})")},
          {"server-only element keeps its place", abc,
           InPod(R"({"$setElementOrder/containers":[{"name":"c"},{"name":"a"}]})"),
           InPod(R"({"containers":[{"name":"b"},{"name":"c"},{"name":"a"}]})")},
          {"new element placed by order", abc,
           InPod(R"({"$setElementOrder/containers":[{"name":"a"},{"name":"d"},{"name":"b"},{"name":"c"}],
                     "containers":[{"name":"d"}]})"),
           InPod(R"({"containers":[{"name":"a"},{"name":"d"},{"name":"b"},{"name":"c"}]})")},
          {"primitive order", InPod(R"({"finalizers":["x","y"]})"),
           InPod(R"({"$setElementOrder/finalizers":["z","y","x"],"finalizers":["z"]})"),
           InPod(R"({"finalizers":["z","y","x"]})")},
          {"$retainKeys", InPod(R"({"volumes":[{"name":"v","emptyDir":{}}]})"),
           InPod(R"({"volumes":[{"name":"v","hostPath":{"path":"/x"},"$retainKeys":["hostPath","name"]}]})"),
           InPod(R"({"volumes":[{"name":"v","hostPath":{"path":"/x"}}]})")},
      },
      job.get());
}

TEST(ApplyStrategicMergePatch, KubectlApplyPatch) {
  SchemaPtr job = JobSchema();
  Json original = Json::parse(R"({"apiVersion":"batch/v1","kind":"Job",
    "metadata":{"name":"j","labels":{"x":"1","other":"keep"},
                "annotations":{"kubectl.kubernetes.io/last-applied-configuration":"old"}},
    "spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox",
      "env":[{"name":"A","value":"1"}],"imagePullPolicy":"Always"}]}}},
    "status":{"active":1}})");
  Json patch = Json::parse(R"({"metadata":{"annotations":{
      "kubectl.kubernetes.io/last-applied-configuration":"new"},"labels":{"x":"2"}},
    "spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"c"}],
      "containers":[{"$setElementOrder/env":[{"name":"A"}],"env":[{"name":"A","value":"2"}],
                     "name":"c"}]}}}})");
  Json want = original;
  want["metadata"]["labels"]["x"] = "2";
  want["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] = "new";
  want["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"] = "2";
  auto got = ApplyStrategicMergePatch(original, patch, job.get());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, want) << got->dump();
}

TEST(ApplyStrategicMergePatch, WithoutSchemaActsLikeMergePatch) {
  RunCases(
      {
          {"lists replaced", R"({"l":[{"name":"a"}],"m":{"k":1}})",
           R"({"l":[{"name":"b"}],"m":{"k":null,"j":2}})", R"({"l":[{"name":"b"}],"m":{"j":2}})"},
          {"directives still honoured", R"({"m":{"k":1}})", R"({"m":{"$patch":"replace","j":2}})",
           R"({"m":{"j":2}})"},
      },
      nullptr);
  SchemaPtr job = JobSchema();
  RunCases({{"unknown field", R"({"spec":{"custom":[1,2]}})", R"({"spec":{"custom":[3]}})",
             R"({"spec":{"custom":[3]}})"}},
           job.get());
}

TEST(ApplyStrategicMergePatch, Errors) {
  SchemaPtr job = JobSchema();
  struct ErrCase {
    std::string name;
    std::string patch;
  };
  std::vector<ErrCase> cases = {
      {"patch not an object", "[1]"},
      {"unknown $patch", R"({"metadata":{"$patch":"frob"}})"},
      {"$patch not a string", R"({"metadata":{"$patch":1}})"},
      {"missing merge key", InPod(R"({"containers":[{"image":"x"}]})")},
      {"delete without merge key", InPod(R"({"containers":[{"$patch":"delete"}]})")},
      {"mixed list", InPod(R"({"containers":[{"name":"a"},"b"]})")},
      {"bad $retainKeys", InPod(R"({"volumes":[{"name":"v","$retainKeys":"x"}]})")},
      {"bad $setElementOrder", InPod(R"({"$setElementOrder/containers":"x"})")},
      {"bad $deleteFromPrimitiveList", InPod(R"({"$deleteFromPrimitiveList/finalizers":"a"})")},
  };
  Json original = Json::parse(InPod(R"({"containers":[{"name":"a"}],"finalizers":["a"]})"));
  for (const ErrCase& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = ApplyStrategicMergePatch(original, Json::parse(c.patch), job.get());
    ASSERT_FALSE(got.ok()) << got->dump();
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  }
  Json deep = 1;
  for (int i = 0; i < kMaxPatchDepth + 5; ++i) deep = Json{{"a", std::move(deep)}};
  EXPECT_FALSE(ApplyStrategicMergePatch(Json::object(), deep, nullptr).ok());
}

}  // namespace
}  // namespace batchd::api
