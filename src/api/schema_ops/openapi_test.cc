#include "api/schema_ops/openapi.h"

#include <gtest/gtest.h>

#include <functional>

#include "absl/strings/match.h"
#include "api/core/v1/core_v1.h"

namespace batchd::api::schema_ops {
namespace {

Scheme TestScheme() {
  Scheme s;
  core_v1::RegisterKinds(s);
  coordination_v1::RegisterKinds(s);
  KindDef job;
  job.group = "batch";
  job.version = "v1";
  job.kind = "Job";
  job.plural = "jobs";
  job.singular = "job";
  job.subresources = {"status"};
  job.schema = Object("io.k8s.api.batch.v1.Job", "Job represents a job.")
                   .Field("metadata", core_v1::ObjectMetaSchema())
                   .Field("spec", Object("io.k8s.api.batch.v1.JobSpec", "spec")
                                      .Field("parallelism", Int32("parallelism"))
                                      .Field("template", core_v1::PodTemplateSpecSchema()))
                   .Build();
  s.Add(job);
  return s;
}

// Every "$ref" in `node` names an existing component.
void CheckRefs(const Json& doc, const Json& node, int* count) {
  if (node.is_object()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (it.key() == "$ref") {
        ++*count;
        std::string ref = it->get<std::string>();
        const std::string prefix = "#/components/schemas/";
        ASSERT_EQ(ref.rfind(prefix, 0), 0u) << ref;
        EXPECT_TRUE(doc["components"]["schemas"].contains(ref.substr(prefix.size()))) << ref;
      } else {
        CheckRefs(doc, *it, count);
      }
    }
  } else if (node.is_array()) {
    for (const Json& e : node) CheckRefs(doc, e, count);
  }
}

TEST(OpenApiTest, IndexListsEveryGroupVersion) {
  Scheme s = TestScheme();
  Json index = OpenApiV3Index(s);
  for (const char* gv : {"api/v1", "apis/batch/v1", "apis/coordination.k8s.io/v1"}) {
    SCOPED_TRACE(gv);
    ASSERT_TRUE(index["paths"].contains(gv));
    std::string url = index["paths"][gv]["serverRelativeURL"];
    EXPECT_EQ(url.rfind(std::string("/openapi/v3/") + gv + "?hash=", 0), 0u) << url;
  }
  EXPECT_EQ(OpenApiV3Index(s), index);  // Deterministic.
}

TEST(OpenApiTest, DocumentsCarryKindsMergeKeysAndFieldValidation) {
  Scheme s = TestScheme();
  struct Case {
    std::string group, version, kind, component, patch_path;
  };
  const std::vector<Case> cases = {
      {"", "v1", "Pod", "io.k8s.api.core.v1.Pod", "/api/v1/namespaces/{namespace}/pods/{name}"},
      {"", "v1", "Node", "io.k8s.api.core.v1.Node", "/api/v1/nodes/{name}"},
      {"", "v1", "Namespace", "io.k8s.api.core.v1.Namespace", "/api/v1/namespaces/{name}"},
      {"batch", "v1", "Job", "io.k8s.api.batch.v1.Job",
       "/apis/batch/v1/namespaces/{namespace}/jobs/{name}"},
      {"coordination.k8s.io", "v1", "Lease", "io.k8s.api.coordination.v1.Lease",
       "/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.kind);
    Json doc = OpenApiV3Document(s, c.group, c.version);
    const Json& schemas = doc["components"]["schemas"];
    ASSERT_TRUE(schemas.contains(c.component));
    Json gvk = {{"group", c.group}, {"kind", c.kind}, {"version", c.version}};
    EXPECT_EQ(schemas[c.component]["x-kubernetes-group-version-kind"], Json::array({gvk}));
    ASSERT_TRUE(schemas.contains(c.component + "List"));
    ASSERT_TRUE(doc["paths"].contains(c.patch_path));
    const Json& patch = doc["paths"][c.patch_path]["patch"];
    EXPECT_EQ(patch["x-kubernetes-group-version-kind"], gvk);
    EXPECT_EQ(patch["x-kubernetes-action"], "patch");
    // Every PATCH for this kind (main resource and subresources) declares
    // fieldValidation in the query: kubectl checks whichever it finds first.
    int patches = 0;
    for (auto& [path, item] : doc["paths"].items()) {
      if (!item.contains("patch") || item["patch"]["x-kubernetes-group-version-kind"] != gvk) continue;
      ++patches;
      bool found = false;
      for (const Json& p : item["patch"]["parameters"]) {
        if (p["name"] == "fieldValidation" && p["in"] == "query") found = true;
      }
      EXPECT_TRUE(found) << path;
    }
    EXPECT_GE(patches, 1);
    int refs = 0;
    CheckRefs(doc, doc, &refs);
    EXPECT_GT(refs, 10);
  }
}

TEST(OpenApiTest, ListExtensionsAndExplainPath) {
  Scheme s = TestScheme();
  Json doc = OpenApiV3Document(s, "", "v1");
  const Json& schemas = doc["components"]["schemas"];
  const Json& spec = schemas["io.k8s.api.core.v1.PodSpec"]["properties"];
  EXPECT_EQ(spec["containers"]["x-kubernetes-patch-merge-key"], "name");
  EXPECT_EQ(spec["containers"]["x-kubernetes-patch-strategy"], "merge");
  EXPECT_EQ(spec["containers"]["x-kubernetes-list-type"], "map");
  EXPECT_EQ(spec["containers"]["x-kubernetes-list-map-keys"], Json::array({"name"}));
  const Json& container = schemas["io.k8s.api.core.v1.Container"]["properties"];
  EXPECT_EQ(container["ports"]["x-kubernetes-list-map-keys"],
            Json::array({"containerPort", "protocol"}));
  EXPECT_EQ(container["env"]["items"]["allOf"][0]["$ref"],
            "#/components/schemas/io.k8s.api.core.v1.EnvVar");
  EXPECT_EQ(schemas["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["x-kubernetes-int-or-string"],
            true);
  EXPECT_EQ(schemas["io.k8s.api.core.v1.Volume"]["x-kubernetes-preserve-unknown-fields"], true);
  // kubectl explain pod.spec: Pod -> spec -> allOf[0].$ref -> PodSpec.
  const Json& pod_spec = schemas["io.k8s.api.core.v1.Pod"]["properties"]["spec"];
  EXPECT_EQ(pod_spec["allOf"][0]["$ref"], "#/components/schemas/io.k8s.api.core.v1.PodSpec");
  // Pods serve log/binding/eviction/status subresources.
  for (const char* sub : {"status", "log", "binding", "eviction"}) {
    EXPECT_TRUE(doc["paths"].contains(std::string("/api/v1/namespaces/{namespace}/pods/{name}/") +
                                      sub)) << sub;
  }
  EXPECT_TRUE(doc["paths"].contains("/api/v1/pods"));  // All-namespaces list.
}

// Every "$ref" of a v2 document names one of its definitions; kubectl's
// parser also needs `items` on every array and no `allOf`.
void CheckV2(const Json& defs, const Json& node, int* refs) {
  if (node.is_object()) {
    EXPECT_FALSE(node.contains("allOf"));
    auto type = node.find("type");
    if (type != node.end() && *type == "array") {
      EXPECT_TRUE(node.contains("items"));
    }
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (it.key() == "$ref") {
        ++*refs;
        std::string ref = it->get<std::string>();
        ASSERT_EQ(ref.rfind("#/definitions/", 0), 0u) << ref;
        EXPECT_TRUE(defs.contains(ref.substr(14))) << ref;
      } else if (!absl::StartsWith(it.key(), "x-")) {
        CheckV2(defs, *it, refs);
      }
    }
  } else if (node.is_array()) {
    for (const Json& e : node) CheckV2(defs, e, refs);
  }
}

TEST(OpenApiV2Test, DefinitionsForEveryKindWithResolvableRefs) {
  Scheme s = TestScheme();
  Json doc = OpenApiV2Document(s);
  EXPECT_EQ(doc["swagger"], "2.0");
  const Json& defs = doc["definitions"];
  for (const char* name : {"io.k8s.api.core.v1.Pod", "io.k8s.api.batch.v1.Job",
                           "io.k8s.api.batch.v1.JobList", "io.k8s.api.coordination.v1.Lease"}) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(defs.contains(name));
    EXPECT_TRUE(defs[name]["x-kubernetes-group-version-kind"].is_array());
  }
  EXPECT_EQ(defs["io.k8s.api.batch.v1.Job"]["x-kubernetes-group-version-kind"],
            Json::array({{{"group", "batch"}, {"kind", "Job"}, {"version", "v1"}}}));
  // Properties that name a component are plain references in v2.
  EXPECT_EQ(defs["io.k8s.api.core.v1.Pod"]["properties"]["spec"]["$ref"],
            "#/definitions/io.k8s.api.core.v1.PodSpec");
  EXPECT_EQ(defs["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
                ["x-kubernetes-patch-merge-key"], "name");
  // A schema that keeps unknown fields lists no properties (kubectl would
  // call the others unknown).
  EXPECT_FALSE(defs["io.k8s.api.core.v1.Volume"].contains("properties"));
  int refs = 0;
  CheckV2(defs, doc, &refs);
  EXPECT_GT(refs, 20);
  EXPECT_EQ(OpenApiV2Document(s), doc);  // Deterministic.
}

TEST(OpenApiV2Test, ProtobufEncodingOfTheDocument) {
  Json doc = Json::parse(R"({"swagger": "2.0", "info": {"title": "T", "version": "v"},
    "definitions": {"A": {"type": "object", "properties": {"n": {"type": "string"}}, "x-k": 1}}})");
  std::string pb = OpenApiV2Protobuf(doc);
  // Document{swagger=1:"2.0", info=2:{title=1:"T", version=2:"v"}, paths=8:{},
  //   definitions=9:{NamedSchema{name=1:"A", value=2:Schema{type=22:{"object"},
  //   properties=25:{NamedSchema{"n", Schema{type=22:{"string"}}}},
  //   vendor_extension=31:{name "x-k", value Any{yaml=2:"1"}}}}}}
  std::string want;
  want += std::string("\x0a\x03" "2.0", 5);
  want += std::string("\x12\x06\x0a\x01T\x12\x01v", 8);
  want += std::string("\x42\x00", 2);
  std::string str_type = std::string("\xb2\x01\x08\x0a\x06string", 11);
  std::string n_schema = std::string("\x0a\x01n\x12", 4) + static_cast<char>(str_type.size()) + str_type;
  std::string props = std::string("\x0a", 1) + static_cast<char>(n_schema.size()) + n_schema;
  std::string ext_any = std::string("\x12\x01" "1", 3);
  std::string ext = std::string("\x0a\x03x-k\x12", 6) + static_cast<char>(ext_any.size()) + ext_any;
  std::string a_schema = std::string("\xb2\x01\x08\x0a\x06object", 11) +
                         std::string("\xca\x01", 2) + static_cast<char>(props.size()) + props +
                         std::string("\xfa\x01", 2) + static_cast<char>(ext.size()) + ext;
  std::string named = std::string("\x0a\x01" "A\x12", 4) + static_cast<char>(a_schema.size()) + a_schema;
  std::string defs = std::string("\x0a", 1) + static_cast<char>(named.size()) + named;
  want += std::string("\x4a", 1) + static_cast<char>(defs.size()) + defs;
  EXPECT_EQ(pb, want);
}

}  // namespace
}  // namespace batchd::api::schema_ops
