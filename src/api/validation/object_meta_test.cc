#include "api/validation/object_meta.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace batchd::api::validation {
namespace {

std::vector<std::string> Messages(const ErrorList& errs) {
  std::vector<std::string> out;
  for (const FieldError& e : errs) out.push_back(e.Message());
  return out;
}

struct CreateCase {
  std::string name;
  Json meta;
  bool namespaced;
  std::vector<std::string> want;  // Exact messages, in order.
};

TEST(ValidateObjectMetaTest, Create) {
  const std::string kLabelValueMsg =
      "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
      "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
      "'my_value',  or '12345', regex used for validation is "
      "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
  std::vector<CreateCase> cases = {
      {"valid namespaced", {{"name", "pi"}, {"namespace", "default"}}, true, {}},
      {"valid cluster scoped", {{"name", "node-1"}}, false, {}},
      {"generateName only", {{"generateName", "pi-"}, {"namespace", "ns"}}, true, {}},
      {"missing name",
       {{"namespace", "ns"}},
       true,
       {"metadata.name: Required value: name or generateName is required"}},
      {"null metadata",
       nullptr,
       true,
       {"metadata.name: Required value: name or generateName is required",
        "metadata.namespace: Required value"}},
      {"bad name",
       {{"name", "Bad"}, {"namespace", "ns"}},
       true,
       {"metadata.name: Invalid value: \"Bad\": a lowercase RFC 1123 subdomain must consist of "
        "lower case alphanumeric characters, '-' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"}},
      {"namespace forbidden",
       {{"name", "n"}, {"namespace", "ns"}},
       false,
       {"metadata.namespace: Forbidden: not allowed on this type"}},
      {"negative generation",
       {{"name", "n"}, {"generation", -1}},
       false,
       {"metadata.generation: Invalid value: -1: must be greater than or equal to 0"}},
      {"bad label value",
       {{"name", "n"}, {"labels", {{"app", "-x"}}}},
       false,
       {"metadata.labels: Invalid value: \"-x\": " + kLabelValueMsg}},
      {"bad label key",
       {{"name", "n"}, {"labels", {{"/x", "y"}}}},
       false,
       {"metadata.labels: Invalid value: \"/x\": prefix part must be non-empty"}},
      {"annotation keys are lower-cased before checking",
       {{"name", "n"}, {"annotations", {{"Example.COM/Key", "anything goes here!"}}}},
       false,
       {}},
      {"owner reference fields required",
       {{"name", "n"}, {"ownerReferences", {{{"apiVersion", "batch/"}, {"kind", "Job"}}}}},
       false,
       {"metadata.ownerReferences.apiVersion: Invalid value: \"batch/\": version must not be "
        "empty",
        "metadata.ownerReferences.name: Invalid value: \"\": must not be empty",
        "metadata.ownerReferences.uid: Invalid value: \"\": must not be empty"}},
      {"finalizer duplicate and conflict",
       {{"name", "n"}, {"finalizers", {"orphan", "foregroundDeletion", "orphan"}}},
       false,
       {"metadata.finalizers[2]: Duplicate value: \"orphan\"",
        "metadata.finalizers: Invalid value: [\"orphan\",\"foregroundDeletion\",\"orphan\"]: "
        "finalizer orphan and foregroundDeletion cannot be both set"}},
      {"bad finalizer",
       {{"name", "n"}, {"finalizers", {"a/b/c"}}},
       false,
       {"metadata.finalizers: Invalid value: \"a/b/c\": a qualified name must consist of "
        "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
        "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and "
        "'/' (e.g. 'example.com/MyName')"}},
  };
  for (const CreateCase& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(
        Messages(ValidateObjectMeta(c.meta, c.namespaced, NameIsDNSSubdomain, Path("metadata"))),
        c.want);
  }
}

TEST(ValidateObjectMetaTest, AnnotationsTooLarge) {
  Json meta = {{"name", "n"},
               {"annotations", {{"a", std::string(kTotalAnnotationSizeLimitBytes, 'x')}}}};
  EXPECT_THAT(
      Messages(ValidateObjectMeta(meta, false, NameIsDNSSubdomain, Path("metadata"))),
      ::testing::ElementsAre("metadata.annotations: Too long: may not be more than 262144 bytes"));
  meta["annotations"]["a"] = std::string(kTotalAnnotationSizeLimitBytes - 1, 'x');
  EXPECT_TRUE(ValidateObjectMeta(meta, false, NameIsDNSSubdomain, Path("metadata")).empty());
}

TEST(ValidateObjectMetaTest, OneControllerOnly) {
  Json ref1 = {{"apiVersion", "batch/v1"},
               {"kind", "Job"},
               {"name", "a"},
               {"uid", "1"},
               {"controller", true}};
  Json ref2 = {{"apiVersion", "batch/v1"},
               {"kind", "Job"},
               {"name", "b"},
               {"uid", "2"},
               {"controller", true}};
  ErrorList errs = ValidateOwnerReferences(Json::array({ref1, ref2}), Path("m").Child("o"));
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_THAT(errs[0].CauseMessage(),
              ::testing::EndsWith("Only one reference can have Controller set to true. Found "
                                  "\"true\" in references for Job/a and Job/b"));
  ref2["controller"] = false;
  EXPECT_TRUE(ValidateOwnerReferences(Json::array({ref1, ref2}), Path("o")).empty());
  Json event = {{"apiVersion", "v1"}, {"kind", "Event"}, {"name", "e"}, {"uid", "3"}};
  EXPECT_EQ(ValidateOwnerReferences(Json::array({event}), Path("o")).size(), 1u);
}

struct UpdateCase {
  std::string name;
  Json new_meta;
  Json old_meta;
  std::vector<std::string> want;
};

TEST(ValidateObjectMetaTest, Update) {
  Json base = {{"name", "a"},
               {"namespace", "ns"},
               {"uid", "u1"},
               {"generation", 2},
               {"creationTimestamp", "2024-01-01T00:00:00Z"}};
  auto with = [&base](const char* key, Json v) {
    Json m = base;
    m[key] = std::move(v);
    return m;
  };
  Json deleting = with("deletionTimestamp", "2024-01-02T00:00:00Z");
  deleting["finalizers"] = {"x.io/keep"};
  Json deleting_more = deleting;
  deleting_more["finalizers"] = {"x.io/keep", "x.io/new"};
  std::vector<UpdateCase> cases = {
      {"unchanged", base, base, {}},
      {"labels may change", with("labels", {{"a", "b"}}), base, {}},
      {"name immutable",
       with("name", "b"),
       base,
       {"metadata.name: Invalid value: \"b\": field is immutable"}},
      {"namespace immutable",
       with("namespace", "other"),
       base,
       {"metadata.namespace: Invalid value: \"other\": field is immutable"}},
      {"uid immutable",
       with("uid", "u2"),
       base,
       {"metadata.uid: Invalid value: \"u2\": field is immutable"}},
      {"creationTimestamp immutable",
       with("creationTimestamp", "2025-01-01T00:00:00Z"),
       base,
       {"metadata.creationTimestamp: Invalid value: \"2025-01-01T00:00:00Z\": field is "
        "immutable"}},
      {"deletionTimestamp not settable",
       with("deletionTimestamp", "2024-01-02T00:00:00Z"),
       base,
       {"metadata.deletionTimestamp: Invalid value: \"2024-01-02T00:00:00Z\": field is "
        "immutable"}},
      {"generation not decremented",
       with("generation", 1),
       base,
       {"metadata.generation: Invalid value: 1: must not be decremented"}},
      {"no new finalizers while deleting",
       deleting_more,
       deleting,
       {"metadata.finalizers: Forbidden: no new finalizers can be added if the object is being "
        "deleted, found new finalizers []string{\"x.io/new\"}"}},
      {"removing finalizers while deleting is fine",
       with("deletionTimestamp", "2024-01-02T00:00:00Z"),
       deleting,
       {}},
  };
  for (const UpdateCase& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(Messages(ValidateObjectMetaUpdate(c.new_meta, c.old_meta, Path("metadata"))), c.want);
  }
}

}  // namespace
}  // namespace batchd::api::validation
