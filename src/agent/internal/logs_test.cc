#include "agent/internal/logs.h"

#include "agent/testing/fake_pod_runtime.h"
#include "common/testing/fake_clock.h"
#include "gtest/gtest.h"
#include "registry/errors.h"

namespace batchd::agent::internal {
namespace {

using api::Json;
using Options = apiserver::PodLogSource::Options;

TEST(TailOffsetTest, Lines) {
  struct Case {
    std::string name, data;
    int64_t n;
    std::string want;
  };
  for (const Case& c : std::vector<Case>{
           {"last one", "a\nb\nc\n", 1, "c\n"},
           {"last two", "a\nb\nc\n", 2, "b\nc\n"},
           {"more than there are", "a\nb\n", 5, "a\nb\n"},
           {"no final newline", "a\nb\nc", 1, "c"},
           {"zero", "a\n", 0, ""},
           {"empty", "", 3, ""},
       }) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.data.substr(TailOffset(c.data, c.n)), c.want);
  }
}

class LogSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    rt_ = std::make_unique<testing::FakePodRuntime>();
    PodSandboxSpec spec;
    spec.uid = "u1";
    spec.containers.push_back({.name = "c"});
    ASSERT_TRUE(rt_->Start(spec).ok());
    PodSandboxStatus st = rt_->Get("u1");
    st.app[0].state = ContainerStatus::State::kTerminated;
    st.app[0].started_at = clock_.Now() - absl::Seconds(10);
    st.app[0].finished_at = clock_.Now() - absl::Seconds(5);
    st.app[0].last_terminated = TerminatedState{1, 0, "Error", "", clock_.Now() - absl::Hours(1),
                                                clock_.Now() - absl::Hours(1)};
    rt_->SetStatus("u1", st);
    rt_->WriteLog("u1", "c", false, "one\ntwo\nthree\n");
    rt_->WriteLog("u1", "c", true, "old run\n");
    src_ = NewLocalLogSource(*rt_, clock_);
  }
  absl::StatusOr<std::string> Read(Options o) {
    std::string out;
    absl::Status st = src_->StreamLog(pod_, o, [&](std::string_view d) {
      out.append(d);
      return true;
    });
    if (!st.ok()) return st;
    return out;
  }

  FakeClock clock_;
  Json pod_ = {{"metadata", {{"name", "p"}, {"namespace", "ns"}, {"uid", "u1"}}}};
  std::unique_ptr<testing::FakePodRuntime> rt_;
  std::unique_ptr<apiserver::PodLogSource> src_;
};

TEST_F(LogSourceTest, TailLimitPreviousSinceTimestamps) {
  struct Case {
    std::string name;
    Options o;
    std::string want;
  };
  auto opts = [](auto f) {
    Options o;
    o.container = "c";
    f(o);
    return o;
  };
  std::vector<Case> cases = {
      {"whole", opts([](Options&) {}), "one\ntwo\nthree\n"},
      {"tail 2", opts([](Options& o) { o.tail_lines = 2; }), "two\nthree\n"},
      {"tail 0", opts([](Options& o) { o.tail_lines = 0; }), ""},
      {"limit", opts([](Options& o) { o.limit_bytes = 5; }), "one\nt"},
      {"tail and limit", opts([](Options& o) {
         o.tail_lines = 1;
         o.limit_bytes = 3;
       }),
       "thr"},
      {"previous", opts([](Options& o) { o.previous = true; }), "old run\n"},
      {"since covers the run", opts([](Options& o) { o.since_seconds = 60; }),
       "one\ntwo\nthree\n"},
      {"since after the run ended", opts([](Options& o) { o.since_seconds = 2; }), ""},
      {"timestamps", opts([](Options& o) {
         o.timestamps = true;
         o.tail_lines = 1;
       }),
       "2025-12-31T23:59:50Z three\n"},
      {"follow of an ended container returns", opts([](Options& o) { o.follow = true; }),
       "one\ntwo\nthree\n"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = Read(c.o);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, c.want);
  }
}

TEST_F(LogSourceTest, MissingLogsAreBadRequests) {
  Options o;
  o.container = "other";
  auto st = Read(o).status();
  EXPECT_EQ(registry::GetPayload(st).reason, "BadRequest");
  EXPECT_NE(st.message().find("is waiting to start: ContainerCreating"), std::string::npos);
  o.previous = true;
  st = Read(o).status();
  EXPECT_NE(st.message().find("previous terminated container \"other\""), std::string::npos);
}

TEST_F(LogSourceTest, ServeContainerLogsEndpoint) {
  auto lookup = [&](const std::string& ns, const std::string& name) -> client::ObjectRef {
    if (ns == "ns" && name == "p") return std::make_shared<const Json>(pod_);
    return nullptr;
  };
  struct Case {
    std::string name, path, query;
    int want_code;
    std::string want_body;
  };
  for (const Case& c : std::vector<Case>{
           {"ok", "/containerLogs/ns/p/c", "tailLines=1", 200, "three\n"},
           {"no pod", "/containerLogs/ns/q/c", "", 404, ""},
           {"bad path", "/containerLogs/ns/p", "", 404, ""},
           {"no container", "/containerLogs/ns/p/x", "", 400, ""},
       }) {
    SCOPED_TRACE(c.name);
    apiserver::HttpRequest req;
    req.method = "GET";
    req.path = c.path;
    req.query = apiserver::ParseQuery(c.query);
    apiserver::BufferWriter w;
    ServeContainerLogs(req, w, lookup, *src_);
    EXPECT_EQ(w.code(), c.want_code);
    if (!c.want_body.empty()) {
      EXPECT_EQ(w.body(), c.want_body);
    }
  }
}

TEST(LogQueryTest, RoundTrip) {
  Options o;
  o.follow = true;
  o.tail_lines = 10;
  o.limit_bytes = 100;
  apiserver::HttpRequest req;
  req.query = apiserver::ParseQuery(LogQuery(o));
  Options back = ParseLogOptions(req);
  EXPECT_TRUE(back.follow);
  EXPECT_FALSE(back.previous);
  EXPECT_EQ(back.tail_lines, 10);
  EXPECT_EQ(back.limit_bytes, 100);
  EXPECT_FALSE(back.since_seconds.has_value());
}

}  // namespace
}  // namespace batchd::agent::internal
