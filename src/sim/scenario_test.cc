#include "sim/scenario.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace batchd::sim {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<std::vector<ScenarioObject>> Parse(const std::string& text) {
  return ParseScenario(text, "s.yaml", *api::BuiltinScheme());
}

TEST(ScenarioTest, DocumentsCreateAtAndEmptyDocuments) {
  auto r = Parse(R"(
apiVersion: v1
kind: Namespace
metadata: {name: a}
---
# only a comment
---
apiVersion: batch/v1
kind: Job
metadata:
  name: j
  annotations: {batchd.io/sim-create-at: "1h30m"}
spec:
  template:
    metadata: {annotations: {batchd.io/sim-duration: "90s", batchd.io/sim-exit-code: "3"}}
    spec: {restartPolicy: Never, containers: [{name: c, image: x}]}
)");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].document, 1);
  EXPECT_EQ((*r)[0].create_at, absl::ZeroDuration());
  EXPECT_EQ((*r)[1].document, 2);
  EXPECT_EQ((*r)[1].create_at, absl::Minutes(90));
  EXPECT_EQ((*r)[1].Where(), "document 2 (Job j)");
}

TEST(ScenarioTest, UnknownKindNamesTheDocument) {
  auto r = Parse("apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n"
                 "apiVersion: v1\nkind: Frobnicator\nmetadata: {name: b}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("s.yaml: document 2 (Frobnicator b): kind: "));
  EXPECT_THAT(r.status().message(), HasSubstr("Frobnicator"));
}

TEST(ScenarioTest, MalformedDurationAnnotations) {
  auto r = Parse("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n"
                 "  annotations: {batchd.io/sim-create-at: 1d}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr("document 1 (Namespace a): metadata.annotations[batchd.io/sim-create-at]: "
                        "Invalid value: \"1d\": time: unknown unit \"d\" in duration \"1d\""));
  r = Parse(R"(
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  template:
    metadata: {annotations: {batchd.io/sim-duration: "ten seconds"}}
    spec: {restartPolicy: Never, containers: [{name: c, image: x}]}
)");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr("document 1 (Job j): spec.template.metadata.annotations[batchd.io/"
                        "sim-duration]: Invalid value: \"ten seconds\""));
  r = Parse("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
            "  annotations: {batchd.io/sim-duration: \"-5s\"}\n"
            "spec: {containers: [{name: c, image: x}]}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("must be greater than or equal to 0"));
  r = Parse("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
            "  annotations: {batchd.io/sim-exit-code: \"300\"}\n"
            "spec: {containers: [{name: c, image: x}]}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr("metadata.annotations[batchd.io/sim-exit-code]: Invalid value"));
}

TEST(ScenarioTest, SyntaxErrorNamesTheDocument) {
  auto r = Parse("apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\nkind: [\n");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("s.yaml: document 2: "));
}

TEST(TraceTest, CsvRowsBecomeQueuedJobs) {
  auto r = ParseTrace(
      "submit,queue,namespace,pods,cpu,memory,gpu,duration,priority,exit_code\n"
      "0,team-a,ns1,4,2,1Gi,,1h,,\n"
      "90,team-b,,1,500m,,1,30,100,1\n",
      "t.csv");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 3u);  // Two jobs and the priority class of value 100.
  const api::Json& j = (*r)[0].object;
  EXPECT_EQ(j["metadata"]["name"], "trace-2");
  EXPECT_EQ(j["metadata"]["namespace"], "ns1");
  EXPECT_EQ(j["metadata"]["labels"]["kueue.x-k8s.io/queue-name"], "team-a");
  EXPECT_EQ(j["spec"]["parallelism"], 4);
  EXPECT_EQ(j["spec"]["template"]["metadata"]["annotations"]["batchd.io/sim-duration"], "1h");
  EXPECT_EQ(j["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["memory"],
            "1Gi");
  EXPECT_EQ((*r)[1].object["kind"], "WorkloadPriorityClass");
  EXPECT_EQ((*r)[1].object["value"], 100);
  const api::Json& k = (*r)[2].object;
  EXPECT_EQ((*r)[2].create_at, absl::Seconds(90));
  EXPECT_EQ(k["metadata"]["namespace"], "default");
  EXPECT_EQ(k["metadata"]["labels"]["kueue.x-k8s.io/priority-class"], "trace-priority-100");
  EXPECT_EQ(k["spec"]["template"]["metadata"]["annotations"]["batchd.io/sim-exit-code"], "1");
  EXPECT_EQ(k["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]
             ["nvidia.com/gpu"],
            "1");
}

TEST(TraceTest, JsonLines) {
  auto r = ParseTrace(
      "{\"submit\": \"5m\", \"queue\": \"q\", \"pods\": 2, \"requests\": {\"cpu\": \"1\"}, "
      "\"duration\": 60, \"name\": \"x\"}\n",
      "t.jsonl");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].create_at, absl::Minutes(5));
  EXPECT_EQ((*r)[0].object["metadata"]["name"], "x");
  EXPECT_EQ((*r)[0].object["spec"]["completions"], 2);
}

TEST(TraceTest, BadRowsNameLineAndColumn) {
  auto r = ParseTrace("submit,queue,cpu,duration\n0,q,1,10\n5,q,1,-3\n", "t.csv");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr("t.csv: line 3: duration: Invalid value: \"-3\": must be greater than "
                        "or equal to 0"));
  r = ParseTrace("submit,cpu,duration\n0,1,10\n", "t.csv");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("t.csv: line 1: queue: Required value"));
  r = ParseTrace("submit,queue,cpu,duration\n0,q,1\n", "t.csv");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("t.csv: line 2: has 3 columns, the header 4"));
  r = ParseTrace("{\"submit\": 0, \"queue\": \"q\", \"duration\": 1}\n", "t.jsonl");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("line 1: cpu: Required value"));
  r = ParseTrace("{\"submit\": 0, \"queue\": \"q\", \"cpu\": \"x\", \"duration\": 1}\n", "t.jsonl");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("line 1: cpu: Invalid value: \"x\""));
}

}  // namespace
}  // namespace batchd::sim
