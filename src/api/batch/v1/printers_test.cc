#include <string>
#include <vector>

#include "absl/time/time.h"
#include "api/batch/v1/batch_v1.h"
#include "api/batch/v1/internal/test_fixtures.h"
#include "gtest/gtest.h"

namespace batchd::api::batch_v1 {
namespace {

absl::Time Now() {
  absl::Time t;
  std::string err;
  EXPECT_TRUE(absl::ParseTime(absl::RFC3339_full, "2024-01-01T01:00:00Z", &t, &err));
  return t;
}

std::vector<std::string> Names(const std::vector<TableColumn>& cols) {
  std::vector<std::string> out;
  for (const TableColumn& c : cols) out.push_back(c.name + (c.priority ? "*" : ""));
  return out;
}

TEST(JobTableTest, Columns) {
  EXPECT_EQ(Names(JobColumns()), (std::vector<std::string>{"Status", "Completions", "Duration", "Age",
                                                           "Containers*", "Images*", "Selector*"}));
}

TEST(JobTableTest, Cells) {
  struct Case {
    std::string name;
    Json spec_patch;
    Json status;
    Json meta_patch;
    std::vector<Json> want;  // Status, Completions, Duration, Age.
  };
  const char* kSucceeded = R"({"startTime":"2024-01-01T00:10:00Z","completionTime":"2024-01-01T00:12:05Z",
      "succeeded":1,"conditions":[{"type":"SuccessCriteriaMet","status":"True"},
                                  {"type":"Complete","status":"True"}]})";
  const Case cases[] = {
      {"complete", Json::object(), Json::parse(kSucceeded), Json::object(),
       {"Complete", "1/1", "2m5s", "60m"}},
      {"failed", Json::object(),
       Json::parse(R"({"startTime":"2024-01-01T00:00:00Z","failed":7,
          "conditions":[{"type":"FailureTarget","status":"True"},{"type":"Failed","status":"True"}]})"),
       Json::object(), {"Failed", "0/1", "60m", "60m"}},
      {"running", {{"completions", 5}, {"parallelism", 2}},
       Json::parse(R"({"startTime":"2024-01-01T00:59:30Z","succeeded":2,"active":2})"),
       Json::object(), {"Running", "2/5", "30s", "60m"}},
      {"suspended", Json::object(),
       Json::parse(R"({"conditions":[{"type":"Suspended","status":"True"}]})"), Json::object(),
       {"Suspended", "0/1", "", "60m"}},
      {"suspension lifted (False) is running", Json::object(),
       Json::parse(R"({"conditions":[{"type":"Suspended","status":"False"}]})"), Json::object(),
       {"Running", "0/1", "", "60m"}},
      {"terminating beats suspended", Json::object(),
       Json::parse(R"({"conditions":[{"type":"Suspended","status":"True"}]})"),
       {{"deletionTimestamp", "2024-01-01T00:59:00Z"}}, {"Terminating", "0/1", "", "60m"}},
      {"failure target", Json::object(),
       Json::parse(R"({"conditions":[{"type":"FailureTarget","status":"True"}]})"), Json::object(),
       {"FailureTarget", "0/1", "", "60m"}},
      {"success criteria met", Json::object(),
       Json::parse(R"({"conditions":[{"type":"SuccessCriteriaMet","status":"True"}]})"), Json::object(),
       {"SuccessCriteriaMet", "0/1", "", "60m"}},
      {"work queue", {{"parallelism", 3}, {"completions", nullptr}}, Json::parse(R"({"succeeded":1})"),
       Json::object(), {"Running", "1/1 of 3", "", "60m"}},
      {"no creation timestamp", Json::object(), Json::object(), {{"creationTimestamp", nullptr}},
       {"Running", "0/1", "", "<unknown>"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Json raw = testing::RawJob();
    raw["spec"].update(c.spec_patch);
    if (raw["spec"].contains("completions") && raw["spec"]["completions"].is_null()) {
      raw["spec"].erase("completions");
    }
    Json job = testing::Created(raw);
    job["metadata"]["creationTimestamp"] = "2024-01-01T00:00:00Z";
    job["metadata"].update(c.meta_patch);
    job["status"] = c.status;
    const std::vector<Json> cells = JobRowCells(job, Now());
    ASSERT_EQ(cells.size(), 7u);
    EXPECT_EQ(std::vector<Json>(cells.begin(), cells.begin() + 4), c.want);
  }
}

TEST(JobTableTest, WideCells) {
  Json job = testing::Created(testing::RawJob());
  job["spec"]["template"]["spec"]["containers"].push_back({{"name", "side"}, {"image", "busybox"}});
  std::vector<Json> cells = JobRowCells(job, Now());
  EXPECT_EQ(cells[4], "pi,side");
  EXPECT_EQ(cells[5], "perl:5.34,busybox");
  EXPECT_EQ(cells[6], "batch.kubernetes.io/controller-uid=uid-1");

  job["spec"]["selector"] = Json::parse(R"({"matchLabels":{"b":"1"},"matchExpressions":[
      {"key":"a","operator":"In","values":["y","x"]},{"key":"c","operator":"DoesNotExist"},
      {"key":"d","operator":"Exists"},{"key":"e","operator":"NotIn","values":["z"]}]})");
  EXPECT_EQ(JobRowCells(job, Now())[6], "a in (x,y),b=1,!c,d,e notin (z)");
  job["spec"]["selector"] = Json::object();
  EXPECT_EQ(JobRowCells(job, Now())[6], "<none>");
}

TEST(CronJobTableTest, Cells) {
  EXPECT_EQ(Names(CronJobColumns()),
            (std::vector<std::string>{"Schedule", "Timezone", "Suspend", "Active", "Last Schedule",
                                      "Age", "Containers*", "Images*", "Selector*"}));
  struct Case {
    std::string name;
    Json spec_patch;
    Json status;
    std::vector<Json> want;
  };
  const Case cases[] = {
      {"fresh", Json::object(), Json::object(),
       {"*/5 * * * *", "<none>", "False", 0, "<none>", "3h", "hello", "busybox", "<none>"}},
      {"scheduled in a zone, suspended", {{"timeZone", "Europe/Paris"}, {"suspend", true}},
       Json::parse(R"({"active":[{"name":"a"},{"name":"b"}],"lastScheduleTime":"2024-01-01T00:55:00Z"})"),
       {"*/5 * * * *", "Europe/Paris", "True", 2, "5m", "3h", "hello", "busybox", "<none>"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Json cj = testing::RawCronJob();
    SetDefaultsCronJob(cj);
    cj["spec"].update(c.spec_patch);
    cj["metadata"]["creationTimestamp"] = "2023-12-31T22:00:00Z";
    cj["status"] = c.status;
    EXPECT_EQ(CronJobRowCells(cj, Now()), c.want);
  }
  Json unset = testing::RawCronJob();
  EXPECT_EQ(CronJobRowCells(unset, Now())[2], "<unset>");
}

}  // namespace
}  // namespace batchd::api::batch_v1
