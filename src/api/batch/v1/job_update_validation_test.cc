#include <functional>
#include <string>
#include <vector>

#include "api/batch/v1/batch_v1.h"
#include "api/batch/v1/internal/test_fixtures.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace batchd::api::batch_v1 {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::Created;
using testing::Messages;
using testing::RawJob;

// Messages reduced to "field: detail" so long template values stay out.
std::vector<std::string> FieldsAndDetails(const ErrorList& errs) {
  std::vector<std::string> out;
  for (const FieldError& e : errs) out.push_back(e.field + ": " + e.detail);
  return out;
}

TEST(ValidateJobUpdateTest, Table) {
  struct Case {
    std::string name;
    std::function<void(Json&)> old_mutate;  // Before defaulting.
    std::function<void(Json&)> update;      // On the stored (defaulted) object.
    std::vector<std::string> want;          // "field: detail".
  };
  const auto none = [](Json&) {};
  const auto suspended = [](Json& j) { j["spec"]["suspend"] = true; };
  const auto indexed = [](Json& j) {
    j["spec"]["completionMode"] = "Indexed";
    j["spec"]["completions"] = 3;
    j["spec"]["parallelism"] = 3;
  };
  const Case cases[] = {
      {"no change", none, [](Json&) {}, {}},
      {"parallelism is mutable", none, [](Json& j) { j["spec"]["parallelism"] = 4; }, {}},
      {"completions immutable for NonIndexed", none, [](Json& j) { j["spec"]["completions"] = 3; },
       {"spec.completions: field is immutable"}},
      {"elastic indexed scale up", indexed,
       [](Json& j) {
         j["spec"]["completions"] = 5;
         j["spec"]["parallelism"] = 5;
       },
       {}},
      {"indexed completions alone", indexed, [](Json& j) { j["spec"]["completions"] = 5; },
       {"spec.completions: can only be modified in tandem with spec.parallelism"}},
      {"selector immutable", none,
       [](Json& j) {
         j["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"] = "other";
       },
       {"spec.selector: `selector` not auto-generated",
        "spec.template.metadata.labels: `selector` does not match template `labels`",
        "spec.selector: field is immutable"}},
      {"image immutable", none,
       [](Json& j) { j["spec"]["template"]["spec"]["containers"][0]["image"] = "perl:6"; },
       {"spec.template: field is immutable"}},
      {"suspended, never started: scheduling directives mutable", suspended,
       [](Json& j) {
         j["spec"]["template"]["spec"]["nodeSelector"] = {{"zone", "a"}};
         j["spec"]["template"]["spec"]["tolerations"] = Json::parse(R"([{"key":"gpu","operator":"Exists"}])");
         j["spec"]["template"]["spec"]["affinity"] = Json::parse(R"({"nodeAffinity":{}})");
         j["spec"]["template"]["metadata"]["labels"]["kueue.x-k8s.io/podset"] = "main";
         j["spec"]["template"]["metadata"]["annotations"] = {{"a", "b"}};
         j["spec"]["template"]["spec"]["schedulingGates"] = Json::parse(R"([{"name":"g"}])");
       },
       {}},
      {"suspended, never started: image still immutable", suspended,
       [](Json& j) { j["spec"]["template"]["spec"]["containers"][0]["image"] = "perl:6"; },
       {"spec.template: field is immutable"}},
      {"suspended but started: nodeSelector immutable",
       [](Json& j) {
         j["spec"]["suspend"] = true;
         j["status"] = {{"startTime", "2024-01-01T00:00:00Z"}};
       },
       [](Json& j) { j["spec"]["template"]["spec"]["nodeSelector"] = {{"zone", "a"}}; },
       {"spec.template: field is immutable"}},
      {"running: nodeSelector immutable", none,
       [](Json& j) { j["spec"]["template"]["spec"]["nodeSelector"] = {{"zone", "a"}}; },
       {"spec.template: field is immutable"}},
      {"completionMode immutable", none,
       [](Json& j) {
         j["spec"]["completionMode"] = "Indexed";
       },
       {"spec.completionMode: field is immutable"}},
      {"managedBy immutable", none, [](Json& j) { j["spec"]["managedBy"] = "example.com/ctl"; },
       {"spec.managedBy: field is immutable"}},
      {"podFailurePolicy immutable", none,
       [](Json& j) {
         j["spec"]["podFailurePolicy"] = Json::parse(
             R"({"rules":[{"action":"Ignore","onPodConditions":[{"type":"X","status":"True"}]}]})");
         j["spec"]["podReplacementPolicy"] = "Failed";
       },
       {"spec.podFailurePolicy: field is immutable"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Json raw = RawJob();
    c.old_mutate(raw);
    Json old = Created(raw);
    if (raw.contains("status")) old["status"] = raw["status"];
    Json now = old;
    c.update(now);
    std::vector<std::string> got = FieldsAndDetails(ValidateJobUpdate(now, old));
    // Drop errors from ValidateJob that restate the template/name change.
    std::erase_if(got, [](const std::string& s) {
      return s.rfind("spec.template.metadata.labels[", 0) == 0;
    });
    EXPECT_EQ(got, c.want);
  }
}

Json Status(const char* json) { return Json::parse(json); }

TEST(ValidateJobStatusUpdateTest, Table) {
  struct Case {
    std::string name;
    Json old_status;
    Json new_status;
    std::vector<std::string> want;
  };
  const Case cases[] = {
      {"start running", Json::object(),
       Status(R"({"startTime":"2024-01-01T00:00:00Z","active":1,"ready":0})"), {}},
      {"complete properly", Status(R"({"startTime":"2024-01-01T00:00:00Z","active":1})"),
       Status(R"({"startTime":"2024-01-01T00:00:00Z","completionTime":"2024-01-01T00:01:00Z",
                  "succeeded":1,"conditions":[{"type":"SuccessCriteriaMet","status":"True"},
                                              {"type":"Complete","status":"True"}]})"),
       {}},
      {"negative counters", Json::object(), Status(R"({"active":-1,"ready":-2})"),
       {"status.active: Invalid value: -1: must be greater than or equal to 0",
        "status.ready: Invalid value: -2: must be greater than or equal to 0"}},
      {"duplicate uncounted uid", Json::object(),
       Status(R"({"uncountedTerminatedPods":{"succeeded":["a",""],"failed":["a"]}})"),
       {"status.uncountedTerminatedPods.succeeded[1]: Invalid value: \"\": must not be empty",
        "status.uncountedTerminatedPods.failed[0]: Duplicate value: \"a\""}},
      {"complete and failed", Status(R"({"startTime":"2024-01-01T00:00:00Z"})"),
       Status(R"({"startTime":"2024-01-01T00:00:00Z","completionTime":"2024-01-01T00:01:00Z",
                  "conditions":[{"type":"Complete","status":"True"},{"type":"Failed","status":"True"}]})"),
       {"status.conditions: Invalid value: null: cannot set Complete=True and Failed=true conditions"}},
      {"cannot leave Failed",
       Status(R"({"startTime":"2024-01-01T00:00:00Z","failed":7,
                  "conditions":[{"type":"FailureTarget","status":"True"},{"type":"Failed","status":"True"}]})"),
       Status(R"({"startTime":"2024-01-01T00:00:00Z","failed":7})"),
       {"status.conditions: Invalid value: null: cannot disable the terminal Failed=True condition",
        "status.conditions: Invalid value: null: cannot disable the terminal FailureTarget=True condition"}},
      {"failed counter may not drop", Status(R"({"failed":3})"), Status(R"({"failed":2})"),
       {"status.failed: Invalid value: 2: cannot decrease the failed counter"}},
      {"succeeded counter may not drop", Status(R"({"succeeded":3})"), Status(R"({"succeeded":2})"),
       {"status.succeeded: Invalid value: 2: cannot decrease the succeeded counter"}},
      {"completionTime needs Complete", Json::object(),
       Status(R"({"startTime":"2024-01-01T00:00:00Z","completionTime":"2024-01-01T00:01:00Z"})"),
       {"status.completionTime: Invalid value: \"2024-01-01T00:01:00Z\": cannot set completionTime "
        "when there is no Complete=True condition"}},
      {"Complete needs completionTime and startTime", Json::object(),
       Status(R"({"conditions":[{"type":"SuccessCriteriaMet","status":"True"},
                                {"type":"Complete","status":"True"}]})"),
       {"status.completionTime: Required value: completionTime is required for Complete jobs",
        "status.startTime: Required value: startTime is required for finished job"}},
      {"completion before start", Json::object(),
       Status(R"({"startTime":"2024-01-01T00:01:00Z","completionTime":"2024-01-01T00:00:00Z",
                  "conditions":[{"type":"Complete","status":"True"}]})"),
       {"status.completionTime: Invalid value: \"2024-01-01T00:00:00Z\": completionTime cannot be "
        "set before startTime"}},
      {"finished with active pods", Status(R"({"startTime":"2024-01-01T00:00:00Z","active":1})"),
       Status(R"({"startTime":"2024-01-01T00:00:00Z","active":1,"failed":1,
                  "conditions":[{"type":"FailureTarget","status":"True"},{"type":"Failed","status":"True"}]})"),
       {"status.active: Invalid value: 1: active>0 is invalid for finished job"}},
      {"startTime removed while running", Status(R"({"startTime":"2024-01-01T00:00:00Z"})"),
       Json::object(),
       {"status.startTime: Required value: startTime cannot be removed for unsuspended job"}},
      {"completedIndexes on NonIndexed", Json::object(), Status(R"({"completedIndexes":"0"})"),
       {"status.completedIndexes: Invalid value: \"0\": cannot set non-empty completedIndexes when "
        "non-indexed completion mode"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Json old = Created(RawJob());
    old["status"] = c.old_status;
    Json now = old;
    now["status"] = c.new_status;
    EXPECT_EQ(Messages(ValidateJobStatusUpdate(now, old)), c.want);
  }
}

TEST(ValidateJobStatusUpdateTest, IndexedIndexes) {
  struct Case {
    std::string name;
    Json status;
    std::vector<std::string> want;
  };
  const Case cases[] = {
      {"valid", Status(R"({"completedIndexes":"0,2-3","failedIndexes":"1"})"), {}},
      {"index too large", Status(R"({"completedIndexes":"4"})"),
       {"status.completedIndexes: Invalid value: \"4\": error parsing completedIndexes: too large "
        "index: \"4\""}},
      {"not increasing", Status(R"({"completedIndexes":"2,1"})"),
       {"status.completedIndexes: Invalid value: \"2,1\": error parsing completedIndexes: "
        "non-increasing order, previous: 2, current: 1"}},
      {"garbage", Status(R"({"completedIndexes":"a"})"),
       {"status.completedIndexes: Invalid value: \"a\": error parsing completedIndexes: cannot "
        "convert string to integer for index: \"a\""}},
      {"overlap", Status(R"({"completedIndexes":"0-2","failedIndexes":"2"})"),
       {"status.failedIndexes: Invalid value: \"2\": failedIndexes and completedIndexes overlap at "
        "index: 2"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Json raw = RawJob();
    raw["spec"]["completionMode"] = "Indexed";
    raw["spec"]["completions"] = 4;
    raw["spec"]["backoffLimitPerIndex"] = 1;
    Json old = Created(raw);
    Json now = old;
    now["status"] = c.status;
    EXPECT_EQ(Messages(ValidateJobStatusUpdate(now, old)), c.want);
  }
}

TEST(JobConditionsTest, FinishedAndConditionTrue) {
  Json job = Created(RawJob());
  EXPECT_FALSE(IsJobFinished(job));
  job["status"]["conditions"] = Json::parse(R"([{"type":"Complete","status":"False"}])");
  EXPECT_FALSE(IsJobFinished(job));
  EXPECT_FALSE(JobConditionTrue(job, "Complete"));
  job["status"]["conditions"] = Json::parse(R"([{"type":"Failed","status":"True"}])");
  EXPECT_TRUE(IsJobFinished(job));
  EXPECT_TRUE(JobConditionTrue(job, "Failed"));
}

}  // namespace
}  // namespace batchd::api::batch_v1
