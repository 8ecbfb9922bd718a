#include "client/http_client.h"

#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "api/testing/builders.h"
#include "apiserver/apiserver.h"
#include "apiserver/http_server.h"
#include "gtest/gtest.h"
#include "common/pki.h"
#include "common/testing/temp_dir.h"
#include "registry/errors.h"
#include "store/memory/memory_store.h"

namespace batchd::client {
namespace {

using api::Json;

// A real API server on a free loopback port.
class HttpClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    reg_ = std::make_unique<registry::Registry>(store_, api::BuiltinScheme(), clock_);
    ASSERT_TRUE(reg_->Start().ok());
    api_ = std::make_unique<apiserver::ApiServer>(*reg_, clock_);
    http_ = std::make_unique<apiserver::HttpServer>(
        apiserver::HttpServerOptions{"127.0.0.1", 0},
        [this](const apiserver::HttpRequest& r, apiserver::ResponseWriter& w) {
          api_->Handle(r, w);
        });
    auto port = http_->Start();
    ASSERT_TRUE(port.ok()) << port.status();
    port_ = *port;
    auto c = HttpClient::Create("http://127.0.0.1:" + std::to_string(*port), api::BuiltinScheme());
    ASSERT_TRUE(c.ok()) << c.status();
    client_ = std::move(*c);
  }
  void TearDown() override {
    client_.reset();
    if (http_) http_->Stop();
  }

  const api::KindDef& Jobs() { return client_->Kind("batch", "v1", "jobs"); }

  RealClock clock_;
  store::MemoryStore store_;
  std::unique_ptr<registry::Registry> reg_;
  std::unique_ptr<apiserver::ApiServer> api_;
  std::unique_ptr<apiserver::HttpServer> http_;
  std::unique_ptr<HttpClient> client_;
  int port_ = 0;
};

TEST_F(HttpClientTest, CreateGetListUpdateDelete) {
  auto created = client_->Create(Jobs(), "default", api::testing::MakeJob("a").Obj());
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ((*created)["metadata"]["name"], "a");
  EXPECT_FALSE((*created)["metadata"].value("uid", "").empty());

  auto got = client_->Get(Jobs(), "default", "a");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)["kind"], "Job");
  EXPECT_EQ((*got)["metadata"]["uid"], (*created)["metadata"]["uid"]);

  ASSERT_TRUE(
      client_->Create(Jobs(), "default", api::testing::MakeJob("b").Label("x", "1").Obj()).ok());
  struct Case {
    std::string name;
    Selector sel;
    size_t want;
  };
  for (const Case& c : std::vector<Case>{{"all", {}, 2},
                                         {"label", {"x=1", ""}, 1},
                                         {"field", {"", "metadata.name=a"}, 1},
                                         {"none", {"x=2", ""}, 0}}) {
    SCOPED_TRACE(c.name);
    auto list = client_->List(Jobs(), "default", c.sel);
    ASSERT_TRUE(list.ok()) << list.status();
    EXPECT_EQ(list->items.size(), c.want);
    EXPECT_FALSE(list->resource_version.empty());
    for (const auto& item : list->items) EXPECT_EQ(item["kind"], "Job");
  }

  Json upd = *got;
  upd["metadata"]["labels"]["y"] = "2";
  auto updated = client_->Update(Jobs(), upd);
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ((*updated)["metadata"]["labels"]["y"], "2");

  auto patched = client_->MergePatch(Jobs(), "default", "a",
                                     Json::parse(R"({"metadata":{"labels":{"z":"3"}}})"));
  ASSERT_TRUE(patched.ok()) << patched.status();
  EXPECT_EQ((*patched)["metadata"]["labels"]["z"], "3");

  DeleteOptions bg;
  bg.propagation_policy = "Background";
  ASSERT_TRUE(client_->Delete(Jobs(), "default", "a", bg).ok());
  auto gone = client_->Get(Jobs(), "default", "a");
  EXPECT_EQ(registry::GetPayload(gone.status()).reason, "NotFound");
}

TEST_F(HttpClientTest, ErrorsKeepTheirKubernetesReason) {
  auto created = client_->Create(Jobs(), "default", api::testing::MakeJob("a").Obj());
  ASSERT_TRUE(created.ok());
  Json stale = *created;
  ASSERT_TRUE(client_->MergePatch(Jobs(), "default", "a",
                                  Json::parse(R"({"metadata":{"labels":{"v":"1"}}})"))
                  .ok());
  Json bad = api::testing::MakeJob("bad").Obj();
  bad["spec"]["parallelism"] = -1;

  struct Case {
    std::string name;
    absl::Status st;
    std::string want_reason;
    absl::StatusCode want_code;
  };
  std::vector<Case> cases = {
      {"not found", client_->Get(Jobs(), "default", "nope").status(), "NotFound",
       absl::StatusCode::kNotFound},
      {"already exists",
       client_->Create(Jobs(), "default", api::testing::MakeJob("a").Obj()).status(),
       "AlreadyExists", absl::StatusCode::kAlreadyExists},
      {"conflict", client_->Update(Jobs(), stale).status(), "Conflict",
       absl::StatusCode::kAborted},
      {"invalid", client_->Create(Jobs(), "default", bad).status(), "Invalid",
       absl::StatusCode::kInvalidArgument},
      {"delete missing", client_->Delete(Jobs(), "default", "nope"), "NotFound",
       absl::StatusCode::kNotFound},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(registry::GetPayload(c.st).reason, c.want_reason) << c.st;
    EXPECT_EQ(c.st.code(), c.want_code) << c.st;
  }
}

TEST_F(HttpClientTest, WatchStreamsEventsInOrder) {
  ASSERT_TRUE(client_->Create(Jobs(), "default", api::testing::MakeJob("a").Obj()).ok());
  auto list = client_->List(Jobs(), "default");
  ASSERT_TRUE(list.ok());
  auto w = client_->Watch(Jobs(), "default", {}, list->resource_version);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_TRUE(client_->Create(Jobs(), "default", api::testing::MakeJob("b").Obj()).ok());
  ASSERT_TRUE(client_->MergePatch(Jobs(), "default", "b",
                                  Json::parse(R"({"metadata":{"labels":{"v":"1"}}})"))
                  .ok());
  std::vector<std::string> got;
  WatchEvent ev;
  while (got.size() < 2 && (*w)->Next(&ev, absl::Seconds(10))) {
    if (ev.type == "BOOKMARK") continue;
    got.push_back(ev.type + " " + ev.object["metadata"].value("name", ""));
  }
  EXPECT_EQ(got, (std::vector<std::string>{"ADDED b", "MODIFIED b"}));
  // Nothing more: a short wait times out without ending the stream.
  EXPECT_FALSE((*w)->Next(&ev, absl::Milliseconds(20)));
  EXPECT_FALSE((*w)->done());
}

TEST_F(HttpClientTest, WatchWithoutVersionStartsWithCurrentState) {
  ASSERT_TRUE(client_->Create(Jobs(), "default", api::testing::MakeJob("a").Obj()).ok());
  auto w = client_->Watch(Jobs(), "default", {"", "metadata.name=a"}, "");
  ASSERT_TRUE(w.ok()) << w.status();
  WatchEvent ev;
  ASSERT_TRUE((*w)->Next(&ev, absl::Seconds(10)));
  EXPECT_EQ(ev.type, "ADDED");
  EXPECT_EQ(ev.object["metadata"]["name"], "a");
}

// This process's sockets connected to 127.0.0.1:`port` (the client's ends:
// the server's accepted ends have `port` as their own).
std::vector<int> SocketsConnectedTo(int port) {
  std::vector<int> out;
  DIR* d = ::opendir("/proc/self/fd");
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    char* end = nullptr;
    const long fd = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || fd == ::dirfd(d)) continue;
    sockaddr_in peer{};
    socklen_t len = sizeof(peer);
    if (::getpeername(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&peer), &len) != 0 ||
        peer.sin_family != AF_INET || ntohs(peer.sin_port) != port) {
      continue;
    }
    out.push_back(static_cast<int>(fd));
  }
  ::closedir(d);
  return out;
}

int IntSockOpt(int fd, int level, int name) {
  int v = -1;
  socklen_t len = sizeof(v);
  if (::getsockopt(fd, level, name, &v, &len) != 0) return -1;
  return v;
}

// A watch may stay quiet for long, so it has no deadline; TCP keepalive is
// what notices a peer gone without a FIN (a half-open connection). Every
// connection, the watch's first, carries it with the client's parameters.
TEST_F(HttpClientTest, WatchConnectionsUseTcpKeepalive) {
  HttpClientOptions o;
  o.keepalive_idle = absl::Seconds(17);
  o.keepalive_interval = absl::Seconds(4);
  o.keepalive_count = 5;
  auto c = HttpClient::Create("http://127.0.0.1:" + std::to_string(port_), api::BuiltinScheme(), o);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE(SocketsConnectedTo(port_).empty()) << "no connection before the watch";
  auto w = (*c)->Watch(Jobs(), "default", {}, "");
  ASSERT_TRUE(w.ok()) << w.status();
  auto expect_keepalive = [&](size_t want_sockets) {
    const std::vector<int> fds = SocketsConnectedTo(port_);
    ASSERT_EQ(fds.size(), want_sockets);
    for (int fd : fds) {
      SCOPED_TRACE("fd " + std::to_string(fd));
      EXPECT_EQ(IntSockOpt(fd, SOL_SOCKET, SO_KEEPALIVE), 1);
      EXPECT_EQ(IntSockOpt(fd, IPPROTO_TCP, TCP_KEEPIDLE), 17);
      EXPECT_EQ(IntSockOpt(fd, IPPROTO_TCP, TCP_KEEPINTVL), 4);
      EXPECT_EQ(IntSockOpt(fd, IPPROTO_TCP, TCP_KEEPCNT), 5);
      // Unacknowledged writes give up after as long as the probes: 17 + 4 * 5 s.
      EXPECT_EQ(IntSockOpt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT), 37000);
    }
  };
  expect_keepalive(1);  // the watch's connection
  // A request's pooled connection has them too.
  ASSERT_TRUE((*c)->List(Jobs(), "default").ok());
  expect_keepalive(2);
  // The watch still works over it.
  ASSERT_TRUE(client_->Create(Jobs(), "default", api::testing::MakeJob("k").Obj()).ok());
  WatchEvent ev;
  bool added = false;
  while (!added && (*w)->Next(&ev, absl::Seconds(10))) added = ev.type == "ADDED";
  EXPECT_TRUE(added);
}

TEST_F(HttpClientTest, ConnectionFailureIsUnavailable) {
  auto c = HttpClient::Create("http://127.0.0.1:1", api::BuiltinScheme());
  ASSERT_TRUE(c.ok());
  auto r = (*c)->Get(Jobs(), "default", "a");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_FALSE(HttpClient::Create("ftp//nope", api::BuiltinScheme()).ok());
}

// Several servers (replicas of one cluster, docs/ha.md): requests move on
// past a dead one, and a watch that ended resumes from its last
// resourceVersion on another.
TEST_F(HttpClientTest, SeveralServersFailOver) {
  auto second = std::make_unique<apiserver::HttpServer>(
      apiserver::HttpServerOptions{"127.0.0.1", 0},
      [this](const apiserver::HttpRequest& r, apiserver::ResponseWriter& w) {
        api_->Handle(r, w);
      });
  auto port2 = second->Start();
  ASSERT_TRUE(port2.ok()) << port2.status();
  const int first = port_;
  // Port 1: nothing listens there.
  auto c = HttpClient::Create(absl::StrCat("http://127.0.0.1:1, http://127.0.0.1:", first,
                                           ",http://127.0.0.1:", *port2),
                              api::BuiltinScheme());
  ASSERT_TRUE(c.ok()) << c.status();
  HttpClient& cl = **c;
  ASSERT_TRUE(cl.Create(Jobs(), "default", api::testing::MakeJob("a").Obj()).ok());
  auto list = cl.List(Jobs(), "default");
  ASSERT_TRUE(list.ok()) << list.status();
  auto w = cl.Watch(Jobs(), "default", {}, list->resource_version);
  ASSERT_TRUE(w.ok()) << w.status();
  // The server the client uses now goes away: its watch ends.
  http_->Stop();
  http_.reset();
  WatchEvent ev;
  while (!(*w)->done()) (*w)->Next(&ev, absl::Milliseconds(50));
  // Requests go to the other server; the watch resumes there.
  ASSERT_TRUE(cl.Create(Jobs(), "default", api::testing::MakeJob("b").Obj()).ok());
  auto w2 = cl.Watch(Jobs(), "default", {}, list->resource_version);
  ASSERT_TRUE(w2.ok()) << w2.status();
  std::vector<std::string> got;
  while (got.empty() && (*w2)->Next(&ev, absl::Seconds(10))) {
    if (ev.type != "BOOKMARK") got.push_back(ev.type + " " + ev.object["metadata"].value("name", ""));
  }
  EXPECT_EQ(got, (std::vector<std::string>{"ADDED b"}));
  auto got_a = cl.Get(Jobs(), "default", "a");
  EXPECT_TRUE(got_a.ok()) << got_a.status();
  second->Stop();
}

// A server with TLS and a handler that echoes what it learned of the client.
class HttpsClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto pki = pki::EnsureServingPki(dir_.path() + "/pki", {});
    ASSERT_TRUE(pki.ok()) << pki.status();
    pki_ = *pki;
    ca_ = {Read(pki_.ca_cert_file), Read(pki_.ca_key_file)};
    apiserver::HttpServerOptions o;
    o.address = "127.0.0.1";
    o.port = 0;
    o.tls = apiserver::TlsServerFiles{pki_.cert_file, pki_.key_file, pki_.client_ca_file};
    http_ = std::make_unique<apiserver::HttpServer>(
        o, [](const apiserver::HttpRequest& r, apiserver::ResponseWriter& w) {
          if (r.path == "/big") {
            return w.Send(200, {{"Content-Type", "text/plain"}}, std::string(2 << 20, 'x'));
          }
          std::string body = "cn=" + (r.peer_cert ? r.peer_cert->common_name : "") +
                             " auth=" + r.Header("authorization");
          w.Send(200, {{"Content-Type", "text/plain"}}, body);
        });
    auto port = http_->Start();
    ASSERT_TRUE(port.ok()) << port.status();
    url_ = "https://127.0.0.1:" + std::to_string(*port);
  }
  static std::string Read(const std::string& f) {
    std::ifstream in(f);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  absl::StatusOr<HttpClient::Response> Whoami(HttpClientOptions o, const std::string& path = "/whoami") {
    auto c = HttpClient::Create(url_, api::BuiltinScheme(), o);
    if (!c.ok()) return c.status();
    return (*c)->Do("GET", path);
  }

  ScopedTempDir dir_{"batchd-https-client"};
  pki::ServingPki pki_;
  pki::KeyPair ca_;
  std::unique_ptr<apiserver::HttpServer> http_;
  std::string url_;
};

TEST_F(HttpsClientTest, VerifiesTheServerAndSendsCredentials) {
  HttpClientOptions o;
  o.ca_file = pki_.ca_cert_file;
  o.bearer_token = "t0ken";
  auto r = Whoami(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->body, "cn= auth=Bearer t0ken");

  pki::CertRequest req;
  req.common_name = "system:node:n1";
  req.organizations = {"system:nodes"};
  req.client_auth = true;
  auto node = pki::Issue(ca_, req);
  ASSERT_TRUE(node.ok());
  HttpClientOptions withcert;
  withcert.ca_data = ca_.cert_pem;
  withcert.client_cert_data = node->cert_pem;
  withcert.client_key_data = node->key_pem;
  r = Whoami(withcert);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->body, "cn=system:node:n1 auth=");
}

TEST_F(HttpsClientTest, RefusesAServerItCannotVerify) {
  auto other = pki::NewCa("other");
  ASSERT_TRUE(other.ok());
  HttpClientOptions o;
  o.ca_data = other->cert_pem;
  auto r = Whoami(o);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), "TLS handshake")) << r.status();
}

TEST_F(HttpsClientTest, ResponseSizeLimit) {
  HttpClientOptions o;
  o.ca_file = pki_.ca_cert_file;
  o.max_response_bytes = 1 << 20;
  auto r = Whoami(o, "/big");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
  o.max_response_bytes = 4 << 20;
  r = Whoami(o, "/big");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->body.size(), 2u << 20);
}

TEST(HttpClientTimeoutTest, SilentServerTimesOut) {
  // A listening socket nobody accepts on: connect succeeds, no answer comes.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  ASSERT_EQ(::listen(fd, 16), 0);
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  std::string url = "http://127.0.0.1:" + std::to_string(ntohs(a.sin_port));
  HttpClientOptions o;
  o.request_timeout = absl::Milliseconds(200);
  auto c = HttpClient::Create(url, api::BuiltinScheme(), o);
  ASSERT_TRUE(c.ok());
  auto r = (*c)->Do("GET", "/api");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded) << r.status();
  // A TLS handshake with the silent server ends at the connect timeout.
  HttpClientOptions t;
  t.connect_timeout = absl::Milliseconds(200);
  auto tc = HttpClient::Create("https" + url.substr(4), api::BuiltinScheme(), t);
  ASSERT_TRUE(tc.ok());
  r = (*tc)->Do("GET", "/api");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable) << r.status();
  ::close(fd);
}

// The log proxy's case (kubectl logs -f of a silent container through the
// server). An agent answers a follow's header only with its first line: the
// upstream here sends nothing until asked, then "a", nothing until asked
// again, then "b", then nothing at all. StreamGet waits through the silences
// (no deadline on the header either), asking its caller with empty pieces;
// once the caller's own client has left, it ends within a few checks and
// closes its connection, which the upstream sees. `lines` = 0: the client
// leaves before the header came.
void FollowSilentUpstream(int lines) {
  absl::Notification send_a, send_b, upstream_done;
  std::atomic<bool> upstream_saw_close{false};
  apiserver::HttpServer upstream(
      apiserver::HttpServerOptions{"127.0.0.1", 0},
      [&](const apiserver::HttpRequest&, apiserver::ResponseWriter& w) {
        bool started = false;
        if (send_a.WaitForNotificationWithTimeout(absl::Seconds(10))) {
          started = w.StartStream(200, {{"Content-Type", "text/plain"}}) && w.WriteChunk("a");
          if (send_b.WaitForNotificationWithTimeout(absl::Seconds(10))) w.WriteChunk("b");
        }
        // A silent follow, as the agent's: it ends when its client leaves
        // (or after 10 s, which the bound below tells apart).
        const absl::Time until = absl::Now() + absl::Seconds(10);
        while (!w.ClientGone() && absl::Now() < until) absl::SleepFor(absl::Milliseconds(5));
        upstream_saw_close = w.ClientGone();
        if (started) w.EndStream();
        upstream_done.Notify();
      });
  auto port = upstream.Start();
  ASSERT_TRUE(port.ok()) << port.status();

  std::atomic<bool> client_left{false};
  absl::Notification ready_to_leave;
  std::string body;
  int checks = 0, checks_after_a = 0;
  absl::Status st;
  std::thread reader([&] {
    st = StreamGet(
        "http://127.0.0.1:" + std::to_string(*port), "/follow",
        [&](std::string_view data) {
          if (data.empty()) {
            // Silence: the upstream is asked for "a", then for "b", after
            // a few checks each.
            ++checks;
            if (lines == 0 && checks == 3) ready_to_leave.Notify();
            if (lines > 0 && checks == 2) send_a.Notify();
            if (!body.empty() && ++checks_after_a == 2) send_b.Notify();
            return !client_left.load();
          }
          body.append(data);
          if (body == "ab") ready_to_leave.Notify();
          return true;
        },
        {}, absl::Milliseconds(20));
  });
  ASSERT_TRUE(ready_to_leave.WaitForNotificationWithTimeout(absl::Seconds(10)));
  const absl::Time left = absl::Now();
  client_left = true;
  reader.join();
  const absl::Duration took = absl::Now() - left;
  EXPECT_TRUE(st.ok()) << st;
  EXPECT_EQ(body, lines == 0 ? "" : "ab");
  EXPECT_GE(checks, 3);
  // A hang check, not a timing: checks come every 20 ms; without them the
  // read would last until the upstream gives up 10 s later.
  EXPECT_LT(took, absl::Seconds(3)) << took;
  // (lines = 0: the upstream, let go, finds its client gone.)
  for (absl::Notification* n : {&send_a, &send_b}) {
    if (!n->HasBeenNotified()) n->Notify();
  }
  ASSERT_TRUE(upstream_done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_TRUE(upstream_saw_close.load());
  upstream.Stop();
}

TEST(StreamGetTest, EndsSoonAfterItsCallerLeftASilentStream) { FollowSilentUpstream(2); }
TEST(StreamGetTest, EndsSoonAfterItsCallerLeftBeforeTheHeader) { FollowSilentUpstream(0); }

TEST(KubeconfigTest, ReadsServerCaAndCredentials) {
  ScopedTempDir dir("batchd-kubeconfig");
  std::string path = dir.path() + "/config";
  {
    std::ofstream out(path);
    out << "apiVersion: v1\nkind: Config\ncurrent-context: b\n"
        << "clusters:\n"
        << "- name: ca\n  cluster:\n    server: https://10.0.0.1:6443\n"
        << "    certificate-authority-data: " << absl::Base64Escape("PEM-CA") << "\n"
        << "- name: cb\n  cluster:\n    server: https://10.0.0.2:6443\n"
        << "    certificate-authority: pki/ca.crt\n"
        << "contexts:\n"
        << "- name: a\n  context:\n    cluster: ca\n    user: ua\n"
        << "- name: b\n  context:\n    cluster: cb\n    user: ub\n"
        << "users:\n"
        << "- name: ua\n  user:\n    token: abc\n"
        << "- name: ub\n  user:\n    client-certificate: /etc/n.crt\n    client-key: n.key\n"
        << "    token: xyz\n";
  }
  auto k = LoadKubeconfig(path);
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->server, "https://10.0.0.2:6443");
  EXPECT_EQ(k->options.ca_file, dir.path() + "/pki/ca.crt");
  EXPECT_EQ(k->options.client_cert_file, "/etc/n.crt");
  EXPECT_EQ(k->options.client_key_file, dir.path() + "/n.key");
  EXPECT_EQ(k->options.bearer_token, "xyz");
  EXPECT_FALSE(LoadKubeconfig(dir.path() + "/missing").ok());
}

TEST(ResourcePathTest, CoreAndGroupedKinds) {
  auto scheme = api::BuiltinScheme();
  EXPECT_EQ(ResourcePath(*scheme->ByResource("", "v1", "pods"), "ns", "p"),
            "/api/v1/namespaces/ns/pods/p");
  EXPECT_EQ(ResourcePath(*scheme->ByResource("batch", "v1", "jobs"), "ns"),
            "/apis/batch/v1/namespaces/ns/jobs");
  EXPECT_EQ(ResourcePath(*scheme->ByResource("", "v1", "nodes"), "", "n1"), "/api/v1/nodes/n1");
  EXPECT_EQ(UrlEncode("a=b,c d"), "a%3Db%2Cc%20d");
}

}  // namespace
}  // namespace batchd::client
