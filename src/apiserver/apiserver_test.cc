#include "apiserver/apiserver.h"

#include "apiserver/internal/negotiate.h"

#include "api/testing/builders.h"
#include "common/testing/fake_clock.h"
#include "gtest/gtest.h"
#include "store/memory/memory_store.h"

namespace batchd::apiserver {
namespace {

using api::Json;

class ApiServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    reg_ = std::make_unique<registry::Registry>(store_, api::BuiltinScheme(), clock_);
    ASSERT_TRUE(reg_->Start().ok());
    api_ = std::make_unique<ApiServer>(*reg_, clock_);
  }

  // `max_chunks`: the client hangs up after that many chunks (how a watch
  // test ends its stream: the fake clock never reaches a watch's deadline).
  BufferWriter Do(std::string method, std::string target, std::string body = "",
                  std::map<std::string, std::string> headers = {}, int max_chunks = 3) {
    HttpRequest r;
    r.method = std::move(method);
    size_t q = target.find('?');
    r.path = target.substr(0, q);
    if (q != std::string::npos) r.query = ParseQuery(target.substr(q + 1));
    r.headers = std::move(headers);
    if (!body.empty() && !r.headers.count("content-type")) {
      r.headers["content-type"] = "application/json";
    }
    r.body = std::move(body);
    BufferWriter w;
    w.set_max_chunks(max_chunks);
    api_->Handle(r, w);
    return w;
  }

  Json Body(const BufferWriter& w) { return Json::parse(w.body(), nullptr, false); }

  FakeClock clock_;
  store::MemoryStore store_;
  std::unique_ptr<registry::Registry> reg_;
  std::unique_ptr<ApiServer> api_;
};

TEST_F(ApiServerTest, Discovery) {
  auto api = Do("GET", "/api");
  EXPECT_EQ(api.code(), 200);
  EXPECT_EQ(Body(api)["versions"], Json::array({"v1"}));
  Json groups = Body(Do("GET", "/apis"));
  bool batch = false;
  for (const auto& g : groups["groups"]) batch |= g["name"] == "batch";
  EXPECT_TRUE(batch);
  auto res = Body(Do("GET", "/apis/batch/v1"));
  bool jobs = false, status = false;
  for (const auto& r : res["resources"]) {
    jobs |= r["name"] == "jobs" && r["namespaced"] == true;
    status |= r["name"] == "jobs/status";
  }
  EXPECT_TRUE(jobs && status);
  EXPECT_EQ(Do("GET", "/version").code(), 200);
  EXPECT_EQ(Do("GET", "/healthz").body(), "ok");
  EXPECT_EQ(Do("GET", "/openapi/v3").code(), 200);
}

TEST_F(ApiServerTest, CreateGetAndErrors) {
  std::string job = api::testing::MakeJob("a").Obj().dump();
  auto c = Do("POST", "/apis/batch/v1/namespaces/default/jobs", job);
  EXPECT_EQ(c.code(), 201) << c.body();
  auto g = Do("GET", "/apis/batch/v1/namespaces/default/jobs/a");
  EXPECT_EQ(g.code(), 200);
  EXPECT_EQ(Body(g)["metadata"]["name"], "a");
  auto dup = Do("POST", "/apis/batch/v1/namespaces/default/jobs", job);
  EXPECT_EQ(dup.code(), 409);
  EXPECT_EQ(Body(dup)["reason"], "AlreadyExists");
  auto missing = Do("GET", "/apis/batch/v1/namespaces/default/jobs/zz");
  EXPECT_EQ(missing.code(), 404);
  EXPECT_EQ(Body(missing)["message"], "jobs.batch \"zz\" not found");
  EXPECT_EQ(Body(missing)["details"]["kind"], "jobs");
  EXPECT_EQ(Do("POST", "/apis/batch/v1/namespaces/default/jobs", "{not json").code(), 400);
  EXPECT_EQ(Do("POST", "/apis/batch/v1/namespaces/default/jobs", job,
               {{"content-type", "application/cbor"}})
                .code(),
            415);
  // Protobuf bodies are decoded (kubectl's typed create); JSON bytes are not protobuf.
  EXPECT_EQ(Do("POST", "/apis/batch/v1/namespaces/default/jobs", job,
               {{"content-type", "application/vnd.kubernetes.protobuf"}})
                .code(),
            400);
  auto unknown = Do("GET", "/apis/batch/v1/namespaces/default/widgets");
  EXPECT_EQ(unknown.code(), 404);
  EXPECT_EQ(Body(unknown)["message"], "the server could not find the requested resource");
  Json bad = api::testing::MakeJob("b").Obj();
  bad["spec"]["parallelism"] = -1;
  auto inv = Do("POST", "/apis/batch/v1/namespaces/default/jobs", bad.dump());
  EXPECT_EQ(inv.code(), 422) << inv.body();
  EXPECT_EQ(Body(inv)["details"]["causes"][0]["field"], "spec.parallelism");
}

TEST_F(ApiServerTest, TableAndYaml) {
  Do("POST", "/apis/batch/v1/namespaces/default/jobs", api::testing::MakeJob("a").Obj().dump());
  auto t = Do("GET", "/apis/batch/v1/namespaces/default/jobs", "",
              {{"accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}});
  Json table = Body(t);
  EXPECT_EQ(table["kind"], "Table");
  ASSERT_GE(table["columnDefinitions"].size(), 5u);
  EXPECT_EQ(table["columnDefinitions"][0]["name"], "Name");
  EXPECT_EQ(table["columnDefinitions"][1]["name"], "Status");
  ASSERT_EQ(table["rows"].size(), 1u);
  EXPECT_EQ(table["rows"][0]["cells"][0], "a");
  auto y = Do("GET", "/apis/batch/v1/namespaces/default/jobs/a", "",
              {{"accept", "application/yaml"}});
  EXPECT_NE(y.body().find("kind: Job"), std::string::npos) << y.body();
}

TEST_F(ApiServerTest, WatchStreamsEvents) {
  auto c = Do("POST", "/apis/batch/v1/namespaces/default/jobs",
              api::testing::MakeJob("a").Obj().dump());
  std::string rv = Body(c)["metadata"]["resourceVersion"];
  Do("PATCH", "/apis/batch/v1/namespaces/default/jobs/a", R"({"metadata":{"labels":{"x":"1"}}})",
     {{"content-type", "application/merge-patch+json"}});
  auto w = Do("GET",
              "/apis/batch/v1/namespaces/default/jobs?watch=true&timeoutSeconds=1&resourceVersion=" +
                  rv,
              "", {}, /*max_chunks=*/1);
  EXPECT_EQ(w.code(), 200);
  Json ev = Json::parse(w.body().substr(0, w.body().find('\n')), nullptr, false);
  EXPECT_EQ(ev["type"], "MODIFIED");
  EXPECT_EQ(ev["object"]["metadata"]["labels"]["x"], "1");
  auto old = Do("GET",
                "/apis/batch/v1/namespaces/default/jobs?watch=1&resourceVersion=0&timeoutSeconds=1",
                "", {}, /*max_chunks=*/1);
  EXPECT_NE(old.body().find("\"ADDED\""), std::string::npos);
}

TEST_F(ApiServerTest, MetricsCountRequests) {
  Do("GET", "/apis/batch/v1/namespaces/default/jobs");
  auto m = Do("GET", "/metrics");
  EXPECT_NE(m.body().find("apiserver_request_total{verb=\"LIST\",resource=\"jobs\",code=\"200\"} 1"),
            std::string::npos)
      << m.body();
  EXPECT_NE(m.body().find("apiserver_request_duration_seconds_bucket"), std::string::npos);
}

// Invalid UTF-8 is decoded as kube-apiserver does (each bad byte becomes
// U+FFFD), then validated: never a 500.
TEST_F(ApiServerTest, InvalidUtf8IsReplacedThenValidated) {
  auto name = Do("POST", "/api/v1/namespaces",
                 "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"a\xff\"}}");
  EXPECT_EQ(name.code(), 422) << name.body();
  EXPECT_EQ(Body(name)["details"]["causes"][0]["field"], "metadata.name") << name.body();
  EXPECT_NE(name.body().find("a\xEF\xBF\xBD"), std::string::npos) << name.body();
  auto label = Do("POST", "/api/v1/namespaces",
                  "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"l\","
                  "\"labels\":{\"x\":\"b\xc3\"}}}");
  EXPECT_EQ(label.code(), 422) << label.body();
  EXPECT_NE(label.body().find("metadata.labels"), std::string::npos) << label.body();
  // A free-text field keeps the replacement character.
  auto ann = Do("POST", "/api/v1/namespaces",
                "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"n\","
                "\"annotations\":{\"x\":\"\xe2\x82 ok \xe2\x82\xac\"}}}");
  ASSERT_EQ(ann.code(), 201) << ann.body();
  Json got = Body(Do("GET", "/api/v1/namespaces/n"));
  EXPECT_EQ(got["metadata"]["annotations"]["x"], "\xEF\xBF\xBD\xEF\xBF\xBD ok \xe2\x82\xac");
  // A patch body too.
  auto patch = Do("PATCH", "/api/v1/namespaces/n",
                  "{\"metadata\":{\"labels\":{\"y\":\"\x80\"}}}",
                  {{"content-type", "application/merge-patch+json"}});
  EXPECT_EQ(patch.code(), 422) << patch.body();
  // A selector echoed in an error message.
  auto sel = Do("GET", "/api/v1/namespaces?labelSelector=a%FF%3D%3D%3D");
  EXPECT_GE(sel.code(), 400);
  EXPECT_LT(sel.code(), 500) << sel.body();
}

TEST(Utf8Test, ReplacesEachInvalidByte) {
  EXPECT_TRUE(internal::IsValidUtf8("plain \xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_FALSE(internal::IsValidUtf8("\xc0\xaf"));          // Overlong.
  EXPECT_FALSE(internal::IsValidUtf8("\xed\xa0\x80"));      // A surrogate.
  EXPECT_FALSE(internal::IsValidUtf8("\xf4\x90\x80\x80"));  // Past U+10FFFF.
  EXPECT_EQ(internal::ReplaceInvalidUtf8("a\xff" "b"), "a\xEF\xBF\xBD" "b");
  EXPECT_EQ(internal::ReplaceInvalidUtf8("\xe2\x82"), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(internal::ReplaceInvalidUtf8("\xed\xa0\x80"),
            "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

}  // namespace
}  // namespace batchd::apiserver

namespace batchd::apiserver {
namespace {

// /readyz as kube-apiserver: ok while every check passes; 500 and the list
// of checks ([+] / [-]) otherwise; ?verbose lists them either way.
TEST_F(ApiServerTest, ReadyzReportsEveryCheck) {
  bool synced = false;
  ApiServerOptions o;
  o.ready_checks = [&synced]() {
    return std::vector<std::pair<std::string, absl::Status>>{
        {"etcd", absl::OkStatus()},
        {"informer-sync", synced ? absl::OkStatus() : absl::UnavailableError("not yet")}};
  };
  api_ = std::make_unique<ApiServer>(*reg_, clock_, o);
  BufferWriter not_ready = Do("GET", "/readyz");
  EXPECT_EQ(not_ready.code(), 500);
  EXPECT_EQ(not_ready.body(),
            "[+]ping ok\n[+]etcd ok\n[-]informer-sync failed: reason withheld\n"
            "readyz check failed\n");
  EXPECT_EQ(Do("GET", "/readyz/etcd").code(), 200);
  EXPECT_EQ(Do("GET", "/readyz/informer-sync").code(), 500);
  EXPECT_EQ(Do("GET", "/readyz/nope").code(), 404);
  EXPECT_EQ(Do("GET", "/livez").body(), "ok");  // liveness does not wait for caches
  synced = true;
  EXPECT_EQ(Do("GET", "/readyz").body(), "ok");
  BufferWriter verbose = Do("GET", "/readyz?verbose");
  EXPECT_EQ(verbose.code(), 200);
  EXPECT_EQ(verbose.body(),
            "[+]ping ok\n[+]etcd ok\n[+]informer-sync ok\nreadyz check passed\n");
}

}  // namespace
}  // namespace batchd::apiserver
