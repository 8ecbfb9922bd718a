// HttpServer against real sockets on loopback. Nothing here sleeps to
// synchronize: tests wait for the server's answer (or its closing of the
// connection) with a generous upper bound, and handlers that must stay in
// flight block on a notification the test releases.
#include "apiserver/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/pki.h"
#include "common/testing/temp_dir.h"
#include "gtest/gtest.h"

namespace batchd::apiserver {
namespace {

constexpr int kWaitMs = 10000;  // Upper bound for anything the server must do.

// A raw client connection.
class Raw {
 public:
  explicit Raw(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
  }
  ~Raw() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool connected() const { return connected_; }
  int fd() const { return fd_; }
  void Send(std::string_view s) {
    while (!s.empty()) {
      ssize_t n = ::send(fd_, s.data(), s.size(), MSG_NOSIGNAL);
      if (n <= 0) return;
      s.remove_prefix(n);
    }
  }
  // Reads one response (headers + Content-Length body, or up to the
  // terminating chunk); "" when the server closed without answering.
  std::string ReadResponse() {
    for (;;) {
      size_t end = buf_.find("\r\n\r\n");
      if (end != std::string::npos) {
        std::string head = buf_.substr(0, end + 4);
        size_t len = 0;
        size_t cl = Lower(head).find("content-length:");
        if (cl != std::string::npos) {
          size_t eol = head.find("\r\n", cl);
          (void)absl::SimpleAtoi(head.substr(cl + 15, eol - cl - 15), &len);
          if (buf_.size() >= end + 4 + len) {
            std::string out = buf_.substr(0, end + 4 + len);
            buf_.erase(0, end + 4 + len);
            return out;
          }
        } else if (absl::StrContains(Lower(head), "transfer-encoding: chunked")) {
          size_t last = buf_.find("\r\n0\r\n\r\n", end);
          if (last != std::string::npos) {
            std::string out = buf_.substr(0, last + 7);
            buf_.erase(0, last + 7);
            return out;
          }
        }
      }
      if (!ReadMore()) return "";
    }
  }
  // True when the server closes the connection (EOF) within the bound.
  bool WaitClosed() {
    for (;;) {
      if (!ReadMore()) return eof_;
    }
  }
  static std::string Lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  }

 private:
  bool ReadMore() {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, kWaitMs) <= 0) return false;
    char tmp[65536];
    ssize_t n = ::recv(fd_, tmp, sizeof(tmp), 0);
    if (n <= 0) {
      eof_ = n == 0 || errno == ECONNRESET;
      return false;
    }
    buf_.append(tmp, n);
    return true;
  }
  int fd_ = -1;
  bool connected_ = false;
  bool eof_ = false;
  std::string buf_;
};

int Code(const std::string& response) {
  int code = 0;
  if (response.size() > 12) (void)absl::SimpleAtoi(response.substr(9, 3), &code);
  return code;
}

std::string Get(const std::string& path) {
  return absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: x\r\n\r\n");
}

int ThreadCount() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (absl::StartsWith(line, "Threads:")) {
      int n = 0;
      (void)absl::SimpleAtoi(line.substr(8), &n);
      return n;
    }
  }
  return -1;
}

// Counts handlers that reached their blocking point.
class Gate {
 public:
  void Arrive() {
    absl::MutexLock lock(&mu_);
    ++arrived_;
  }
  // Waits until `n` handlers arrived.
  bool WaitArrived(int n) {
    absl::MutexLock lock(&mu_);
    auto cond = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return arrived_ >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&cond), absl::Milliseconds(kWaitMs));
  }
  void Release() {
    if (!release.HasBeenNotified()) release.Notify();
  }
  absl::Notification release;

 private:
  absl::Mutex mu_;
  int arrived_ ABSL_GUARDED_BY(mu_) = 0;
};

class HttpServerTest : public ::testing::Test {
 protected:
  int Start(HttpServerOptions o = {}) {
    o.address = "127.0.0.1";
    o.port = 0;
    server_ = std::make_unique<HttpServer>(o, [this](const HttpRequest& r, ResponseWriter& w) {
      Handle(r, w);
    });
    auto port = server_->Start();
    EXPECT_TRUE(port.ok()) << port.status();
    port_ = port.ok() ? *port : 0;
    return port_;
  }
  void TearDown() override {
    gate_.Release();
    if (server_) server_->Stop();
  }

  void Handle(const HttpRequest& r, ResponseWriter& w) {
    if (r.path == "/block" || r.Param("watch") == "true" || r.method == "POST") {
      gate_.Arrive();
      gate_.release.WaitForNotificationWithTimeout(absl::Milliseconds(kWaitMs));
    }
    if (r.path == "/api/v1/watch/stuck") {
      // Blocked outside the connection (as a handler waiting on something
      // that never comes): neither ClientGone() nor a failed write ends it.
      gate_.Arrive();
      stuck_.WaitForNotificationWithTimeout(absl::Milliseconds(6 * kWaitMs));
      stuck_returned_.Notify();
      return;
    }
    if (r.path == "/api/v1/watch/busy") {
      // A watch with an event every few milliseconds: it only writes, and
      // never goes idle long enough to look at ClientGone().
      w.StartStream(200, {{"Content-Type", "text/plain"}});
      gate_.Arrive();
      while (w.WriteChunk("event\n")) {
        gate_.release.WaitForNotificationWithTimeout(absl::Milliseconds(2));
      }
      stream_ended_.Notify();
      w.EndStream();
      return;
    }
    if (r.path == "/stream") {
      w.StartStream(200, {{"Content-Type", "text/plain"}});
      gate_.Arrive();
      while (!w.ClientGone()) {
        if (!w.WriteChunk("tick\n")) break;
        gate_.release.WaitForNotificationWithTimeout(absl::Milliseconds(20));
      }
      stream_ended_.Notify();
      w.EndStream();
      return;
    }
    std::string body = absl::StrCat(r.method, " ", r.path, " ", r.body.size(),
                                    r.loopback ? " loopback" : "");
    if (r.peer_cert) absl::StrAppend(&body, " cn=", r.peer_cert->common_name);
    w.Send(200, {{"Content-Type", "text/plain"}}, body);
  }

  std::unique_ptr<HttpServer> server_;
  int port_ = 0;
  Gate gate_;
  absl::Notification stream_ended_;
  absl::Notification stuck_;
  absl::Notification stuck_returned_;
};

TEST_F(HttpServerTest, KeepAliveServesSeveralRequests) {
  Start();
  Raw c(port_);
  ASSERT_TRUE(c.connected());
  c.Send(Get("/a"));
  std::string r1 = c.ReadResponse();
  EXPECT_EQ(Code(r1), 200);
  EXPECT_TRUE(absl::StrContains(r1, "GET /a 0 loopback")) << r1;
  c.Send("POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc");
  gate_.Release();
  std::string r2 = c.ReadResponse();
  EXPECT_TRUE(absl::StrContains(r2, "POST /b 3")) << r2;
}

TEST_F(HttpServerTest, SlowHeaderIsClosed) {
  HttpServerOptions o;
  o.header_timeout = absl::Milliseconds(200);
  Start(o);
  Raw c(port_);
  c.Send("GET / HTTP/1.1\r\nHost: x\r\n");  // Never finishes the header.
  EXPECT_TRUE(c.WaitClosed());
  Raw silent(port_);  // Sends nothing at all.
  EXPECT_TRUE(silent.WaitClosed());
}

TEST_F(HttpServerTest, IdleKeepAliveIsClosed) {
  HttpServerOptions o;
  o.idle_timeout = absl::Milliseconds(200);
  Start(o);
  Raw c(port_);
  c.Send(Get("/a"));
  EXPECT_EQ(Code(c.ReadResponse()), 200);
  EXPECT_TRUE(c.WaitClosed());
}

TEST_F(HttpServerTest, SlowBodyIsClosed) {
  HttpServerOptions o;
  o.read_timeout = absl::Milliseconds(200);
  Start(o);
  Raw c(port_);
  c.Send("PUT /a HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc");  // Truncated body.
  EXPECT_TRUE(c.WaitClosed());
}

TEST_F(HttpServerTest, IdleConnectionsCostNoThreads) {
  Start();
  int before = ThreadCount();
  std::vector<std::unique_ptr<Raw>> conns;
  for (int i = 0; i < 300; ++i) {
    conns.push_back(std::make_unique<Raw>(port_));
    ASSERT_TRUE(conns.back()->connected());
    if (i % 2) conns.back()->Send("GET / HTTP/1.1\r\n");  // Half of them slow headers.
  }
  Raw c(port_);
  c.Send(Get("/a"));
  EXPECT_EQ(Code(c.ReadResponse()), 200);
  EXPECT_GE(server_->Stats().connections, 300);
  EXPECT_LE(ThreadCount() - before, 2);  // At most the worker that served /a.
  EXPECT_LE(server_->Stats().worker_threads, 1);
}

TEST_F(HttpServerTest, ConnectionCap) {
  HttpServerOptions o;
  o.max_connections = 3;
  Start(o);
  std::vector<std::unique_ptr<Raw>> conns;
  for (int i = 0; i < 3; ++i) {
    conns.push_back(std::make_unique<Raw>(port_));
    conns.back()->Send(Get("/a"));
    ASSERT_EQ(Code(conns.back()->ReadResponse()), 200);  // Accepted and counted.
  }
  Raw extra(port_);
  EXPECT_TRUE(extra.WaitClosed());
  EXPECT_EQ(server_->Stats().connections_refused, 1);
  conns.clear();  // Closing frees the slots.
  for (int attempt = 0;; ++attempt) {
    Raw again(port_);
    again.Send(Get("/a"));
    if (Code(again.ReadResponse()) == 200) break;
    ASSERT_LT(attempt, 1000) << "the cap never freed";
  }
}

TEST_F(HttpServerTest, InflightLimitsAnswer429PerBudget) {
  HttpServerOptions o;
  o.max_requests_inflight = 2;
  o.max_mutating_requests_inflight = 1;
  o.max_long_running_requests = 1;
  Start(o);
  Raw b1(port_), b2(port_);
  b1.Send(Get("/block"));
  b2.Send(Get("/block"));
  ASSERT_TRUE(gate_.WaitArrived(2));
  // Read-only budget full: 429 with Retry-After and a Status.
  Raw c(port_);
  c.Send(Get("/a"));
  std::string r = c.ReadResponse();
  EXPECT_EQ(Code(r), 429) << r;
  EXPECT_TRUE(absl::StrContains(r, "Retry-After: 1")) << r;
  EXPECT_TRUE(absl::StrContains(r, R"("reason":"TooManyRequests")")) << r;
  EXPECT_TRUE(absl::StrContains(r, R"("retryAfterSeconds":1)")) << r;
  // The connection stays usable.
  c.Send(Get("/healthz"));  // Health checks are exempt.
  EXPECT_EQ(Code(c.ReadResponse()), 200);
  // Mutating and long-running budgets are separate.
  Raw m(port_), m2(port_), w(port_), w2(port_);
  m.Send("POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
  w.Send(Get("/api/v1/pods?watch=true"));
  ASSERT_TRUE(gate_.WaitArrived(4));
  m2.Send("DELETE /x HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(Code(m2.ReadResponse()), 429);
  w2.Send(Get("/api/v1/namespaces/a/pods/p/log?follow=true"));
  EXPECT_EQ(Code(w2.ReadResponse()), 429);
  HttpServerStats s = server_->Stats();
  EXPECT_EQ(s.inflight_readonly, 2);
  EXPECT_EQ(s.inflight_mutating, 1);
  EXPECT_EQ(s.inflight_long_running, 1);
  EXPECT_EQ(s.rejected_readonly, 1);
  EXPECT_EQ(s.rejected_mutating, 1);
  EXPECT_EQ(s.rejected_long_running, 1);
  std::string metrics;
  server_->AppendPrometheus(&metrics);
  EXPECT_TRUE(absl::StrContains(
      metrics, "apiserver_dropped_requests_total{request_kind=\"readOnly\"} 1"))
      << metrics;
  gate_.Release();
  for (Raw* x : {&b1, &b2, &m, &w}) EXPECT_EQ(Code(x->ReadResponse()), 200);
  // A slot frees when its handler returns, just after its answer went out:
  // a retry (as a client honouring Retry-After does) gets through.
  int code = 0;
  for (int attempt = 0; attempt < 1000 && code != 200; ++attempt) {
    c.Send(Get("/a"));
    code = Code(c.ReadResponse());
    ASSERT_TRUE(code == 200 || code == 429) << code;
  }
  EXPECT_EQ(code, 200);
}

TEST_F(HttpServerTest, RequestTimeoutAnswers504) {
  HttpServerOptions o;
  o.request_timeout = absl::Milliseconds(100);
  Start(o);
  Raw c(port_);
  c.Send(Get("/block"));
  std::string r = c.ReadResponse();
  EXPECT_EQ(Code(r), 504) << r;
  EXPECT_TRUE(absl::StrContains(r, R"("reason":"Timeout")")) << r;
  gate_.Release();  // The handler's own answer is dropped.
  EXPECT_TRUE(c.WaitClosed());
  EXPECT_EQ(server_->Stats().timeouts, 1);
}

TEST_F(HttpServerTest, TimeoutParameter) {
  Start();  // 60 s default.
  Raw c(port_);
  c.Send(Get("/block?timeout=100ms"));
  EXPECT_EQ(Code(c.ReadResponse()), 504);
  Raw bad(port_);
  bad.Send(Get("/a?timeout=soon"));
  std::string r = bad.ReadResponse();
  EXPECT_EQ(Code(r), 400) << r;
  EXPECT_TRUE(absl::StrContains(r, "invalid timeout")) << r;
  // Watches are long-running: no request timeout.
  Raw w(port_);
  w.Send(Get("/api/v1/pods?watch=true&timeout=1ms"));
  ASSERT_TRUE(gate_.WaitArrived(2));
  gate_.Release();
  EXPECT_EQ(Code(w.ReadResponse()), 200);
}

TEST_F(HttpServerTest, ThreadStartFailureIsSurvived) {
  std::atomic<bool> can{false};
  HttpServerOptions o;
  o.can_start_thread = [&can] { return can.load(); };
  Start(o);
  Raw c(port_);
  c.Send(Get("/a"));
  std::string r = c.ReadResponse();
  EXPECT_EQ(Code(r), 429) << r;
  EXPECT_EQ(server_->Stats().thread_start_failures, 1);
  can = true;
  c.Send(Get("/a"));
  EXPECT_EQ(Code(c.ReadResponse()), 200);
}

TEST_F(HttpServerTest, AcceptSurvivesRunningOutOfDescriptors) {
  Start();
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
  // Use up the descriptors: the next accept fails with EMFILE.
  int probe = ::dup(0);
  ASSERT_GE(probe, 0);
  ::close(probe);
  rlimit low = old;
  low.rlim_cur = static_cast<rlim_t>(probe + 2);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  std::vector<int> fill;
  for (int fd; (fd = ::dup(0)) >= 0;) fill.push_back(fd);
  ASSERT_FALSE(fill.empty());
  ::close(fill.back());  // Room for the client's socket only.
  fill.pop_back();
  Raw c(port_);
  ASSERT_TRUE(c.connected());
  c.Send(Get("/a"));
  // The server cannot accept yet; it logs and retries.
  for (int i = 0; i < 1000 && server_->Stats().accept_errors == 0; ++i) {
    pollfd none{-1, 0, 0};
    ::poll(&none, 0, 10);  // Waits for the server's first retry; not a sync point.
  }
  EXPECT_GT(server_->Stats().accept_errors, 0);
  for (int fd : fill) ::close(fd);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &old), 0);
  EXPECT_EQ(Code(c.ReadResponse()), 200);
}

TEST_F(HttpServerTest, TransportErrors) {
  HttpServerOptions o;
  o.max_body_bytes = 10;
  o.max_header_bytes = 1024;
  Start(o);
  Raw big(port_);
  big.Send("PUT /a HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\n01234567890");
  std::string r = big.ReadResponse();
  EXPECT_EQ(Code(r), 413) << r;
  EXPECT_TRUE(big.WaitClosed());
  Raw hdr(port_);
  hdr.Send(absl::StrCat("GET /a HTTP/1.1\r\nX: ", std::string(2000, 'a'), "\r\n\r\n"));
  EXPECT_EQ(Code(hdr.ReadResponse()), 431);
  Raw junk(port_);
  junk.Send("\x16\x03\x01garbage\r\n\r\n");
  std::string j = junk.ReadResponse();
  EXPECT_EQ(Code(j), 400) << j;
  EXPECT_TRUE(junk.WaitClosed());
  Raw chunk(port_);
  chunk.Send("PUT /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n");
  EXPECT_EQ(Code(chunk.ReadResponse()), 400);
  Raw ok(port_);
  ok.Send(Get("/a"));
  EXPECT_EQ(Code(ok.ReadResponse()), 200);
}

TEST_F(HttpServerTest, StreamsAndNoticesAGoneClient) {
  Start();
  {
    Raw c(port_);
    c.Send(Get("/stream"));
    ASSERT_TRUE(gate_.WaitArrived(1));
  }  // Closed.
  EXPECT_TRUE(stream_ended_.WaitForNotificationWithTimeout(absl::Milliseconds(kWaitMs)));
}

TEST_F(HttpServerTest, StopWaitsForInflightAndEndsStreams) {
  Start();
  Raw slow(port_);
  slow.Send(Get("/block"));
  Raw stream(port_);
  stream.Send(Get("/stream"));
  Raw idle(port_);
  ASSERT_TRUE(gate_.WaitArrived(2));
  std::thread stopper([this] { server_->Stop(); });
  // Stop ends the stream (ClientGone) but waits for /block to answer.
  EXPECT_TRUE(stream_ended_.WaitForNotificationWithTimeout(absl::Milliseconds(kWaitMs)));
  EXPECT_TRUE(idle.WaitClosed());
  gate_.Release();
  std::string r = slow.ReadResponse();
  EXPECT_EQ(Code(r), 200) << r;
  EXPECT_TRUE(absl::StrContains(r, "GET /block")) << r;
  stopper.join();
  server_.reset();  // Nothing may run after this.
}

TEST_F(HttpServerTest, StopEndsALoneStream) {
  // Nothing else pending: the stream's last writes still need the I/O threads.
  Start();
  Raw stream(port_);
  stream.Send(Get("/stream"));
  ASSERT_TRUE(gate_.WaitArrived(1));
  server_->Stop();
  EXPECT_TRUE(stream_ended_.HasBeenNotified());
  std::string r = stream.ReadResponse();  // Ends with the last chunk.
  EXPECT_EQ(Code(r), 200) << r;
}

// A SIGTERMed server whose watch streams events nonstop (a busy cluster)
// used to wait `shutdown_grace` for it (the handler never went idle to see
// ClientGone()); the stream now ends at its next write.
TEST_F(HttpServerTest, StopEndsABusyStreamAtOnce) {
  HttpServerOptions o;
  o.shutdown_grace = absl::Milliseconds(6 * kWaitMs);
  Start(o);
  Raw stream(port_);
  stream.Send(Get("/api/v1/watch/busy"));
  ASSERT_TRUE(gate_.WaitArrived(1));
  const absl::Time t0 = absl::Now();
  server_->Stop();
  EXPECT_LT(absl::Now() - t0, absl::Milliseconds(kWaitMs));
  EXPECT_TRUE(stream_ended_.HasBeenNotified());
  EXPECT_EQ(server_->Stats().abandoned, 0);
  std::string r = stream.ReadResponse();  // Ends with the last chunk.
  EXPECT_EQ(Code(r), 200) << r;
}

// A handler that returns neither when its stream is ended nor when its
// connection is cut used to keep Stop waiting forever ("waiting for 1
// requests to finish" every 5 s); Stop now cuts the connection, gives it
// `cut_grace`, names it and returns without it. A plain request in flight
// still gets `shutdown_grace`.
TEST_F(HttpServerTest, StopIsBoundedByAHandlerThatNeverReturns) {
  HttpServerOptions o;
  o.long_running_grace = absl::Milliseconds(50);
  o.shutdown_grace = absl::Milliseconds(6 * kWaitMs);
  o.cut_grace = absl::Milliseconds(100);
  Start(o);
  Raw watch(port_);
  watch.Send(Get("/api/v1/watch/stuck"));
  Raw slow(port_);
  slow.Send(Get("/block"));
  ASSERT_TRUE(gate_.WaitArrived(2));
  std::thread stopper([this] { server_->Stop(); });
  EXPECT_TRUE(watch.WaitClosed());  // Cut after long_running_grace.
  gate_.Release();                  // /block finishes in its grace.
  std::string r = slow.ReadResponse();
  EXPECT_EQ(Code(r), 200) << r;
  stopper.join();
  EXPECT_FALSE(stuck_returned_.HasBeenNotified());
  EXPECT_EQ(server_->Stats().abandoned, 1);
  // The abandoned handler may still return and finish its part.
  stuck_.Notify();
  EXPECT_TRUE(stuck_returned_.WaitForNotificationWithTimeout(absl::Milliseconds(kWaitMs)));
}

TEST(ClassifyRequestTest, KubeApiserverKinds) {
  auto kind = [](std::string method, std::string path, std::string query = "") {
    HttpRequest r;
    r.method = method;
    r.path = path;
    r.query = ParseQuery(query);
    return ClassifyRequest(r);
  };
  EXPECT_EQ(kind("GET", "/api/v1/pods"), RequestKind::kReadOnly);
  EXPECT_EQ(kind("GET", "/api/v1/pods", "watch=true"), RequestKind::kLongRunning);
  EXPECT_EQ(kind("GET", "/api/v1/pods", "watch=1"), RequestKind::kLongRunning);
  EXPECT_EQ(kind("GET", "/api/v1/watch/pods"), RequestKind::kLongRunning);
  EXPECT_EQ(kind("GET", "/apis/batch/v1/watch/namespaces/a/jobs"), RequestKind::kLongRunning);
  EXPECT_EQ(kind("GET", "/api/v1/namespaces/a/pods/p/log"), RequestKind::kLongRunning);
  EXPECT_EQ(kind("POST", "/api/v1/namespaces/a/pods/p/exec"), RequestKind::kLongRunning);
  EXPECT_EQ(kind("GET", "/api/v1/namespaces/a/pods/log"), RequestKind::kReadOnly);  // A pod named "log".
  EXPECT_EQ(kind("POST", "/apis/batch/v1/namespaces/a/jobs"), RequestKind::kMutating);
  EXPECT_EQ(kind("PATCH", "/apis/batch/v1/namespaces/a/jobs/j"), RequestKind::kMutating);
  EXPECT_EQ(kind("DELETE", "/apis/batch/v1/namespaces/a/jobs/j"), RequestKind::kMutating);
  EXPECT_EQ(kind("GET", "/healthz"), RequestKind::kExempt);
  EXPECT_EQ(kind("GET", "/readyz/ping"), RequestKind::kExempt);
  EXPECT_EQ(kind("GET", "/version"), RequestKind::kReadOnly);
}

TEST(ParseRawRequestTest, WireForms) {
  auto ok = ParseRawRequest("POST /a%20b?x=1&y=%ff HTTP/1.1\r\nHost: h\r\nX-A: 1\r\nx-a: 2\r\n"
                            "Content-Length: 3\r\n\r\nabc",
                            1024, 1024);
  ASSERT_TRUE(ok.complete);
  EXPECT_EQ(ok.error_code, 0);
  EXPECT_EQ(ok.request.method, "POST");
  EXPECT_EQ(ok.request.path, "/a b");
  EXPECT_EQ(ok.request.Param("y"), "\xff");
  EXPECT_EQ(ok.request.Header("x-a"), "1,2");
  EXPECT_EQ(ok.request.body, "abc");
  auto truncated = ParseRawRequest("PUT /a HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc", 1024, 1024);
  EXPECT_FALSE(truncated.complete);
  EXPECT_EQ(truncated.error_code, 0);
  EXPECT_EQ(ParseRawRequest("PUT /a HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n",
                            1024, 1024).error_code, 400);
  EXPECT_EQ(ParseRawRequest("PUT /a HTTP/1.1\r\nContent-Length: 2000\r\n\r\n", 1024, 1024)
                .error_code, 413);
  EXPECT_EQ(ParseRawRequest("GET /a HTTP/1.1\r\nX: " + std::string(3000, 'a') + "\r\n\r\n", 1024,
                            1024).error_code, 431);
  EXPECT_EQ(ParseRawRequest("\x16\x03\x01\x02\x00\r\n\r\n", 1024, 1024).error_code, 400);
}

TEST(ParseGoDurationTest, Forms) {
  EXPECT_EQ(ParseGoDuration("30s"), absl::Seconds(30));
  EXPECT_EQ(ParseGoDuration("1m30s"), absl::Seconds(90));
  EXPECT_EQ(ParseGoDuration("500ms"), absl::Milliseconds(500));
  EXPECT_EQ(ParseGoDuration("1.5h"), absl::Minutes(90));
  EXPECT_EQ(ParseGoDuration("0"), absl::ZeroDuration());
  EXPECT_EQ(ParseGoDuration("-2s"), absl::Seconds(-2));
  EXPECT_EQ(ParseGoDuration("10"), std::nullopt);  // Go requires a unit.
  EXPECT_EQ(ParseGoDuration("s"), std::nullopt);
  EXPECT_EQ(ParseGoDuration(""), std::nullopt);
  EXPECT_EQ(ParseGoDuration("3days"), std::nullopt);
}

// --- TLS ---

namespace asio = boost::asio;
namespace ssl = asio::ssl;

class HttpsServerTest : public HttpServerTest {
 protected:
  void SetUp() override {
    auto pki = pki::EnsureServingPki(dir_.path() + "/pki", {"batchd.test"});
    ASSERT_TRUE(pki.ok()) << pki.status();
    pki_ = *pki;
    std::ifstream ck(pki_.ca_cert_file), kk(pki_.ca_key_file);
    std::stringstream c, k;
    c << ck.rdbuf();
    k << kk.rdbuf();
    ca_ = {c.str(), k.str()};
  }
  int StartTls(HttpServerOptions o = {}) {
    o.tls = TlsServerFiles{pki_.cert_file, pki_.key_file, pki_.client_ca_file};
    return Start(o);
  }
  // One GET over TLS, verifying the server against the CA; with a client
  // certificate when `client` is set. Returns the response or "".
  std::string TlsGet(const std::string& path, const pki::KeyPair* client = nullptr,
                     const std::string& host = "127.0.0.1") {
    asio::io_context ioc;
    ssl::context ctx(ssl::context::tls_client);
    ctx.add_certificate_authority(asio::buffer(ca_.cert_pem));
    ctx.set_verify_mode(ssl::verify_peer);
    ctx.set_verify_callback(ssl::host_name_verification(host));
    if (client) {
      ctx.use_certificate(asio::buffer(client->cert_pem), ssl::context::pem);
      ctx.use_private_key(asio::buffer(client->key_pem), ssl::context::pem);
    }
    ssl::stream<asio::ip::tcp::socket> s(ioc, ctx);
    boost::system::error_code ec;
    s.next_layer().connect({asio::ip::make_address("127.0.0.1"), static_cast<uint16_t>(port_)},
                           ec);
    if (ec) return "";
    s.handshake(ssl::stream_base::client, ec);
    if (ec) return "";
    std::string req = absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    asio::write(s, asio::buffer(req), ec);
    std::string out;
    char buf[4096];
    for (;;) {
      size_t n = s.read_some(asio::buffer(buf), ec);
      out.append(buf, n);
      if (ec) break;
    }
    return out;
  }

  ScopedTempDir dir_{"batchd-https-test"};
  pki::ServingPki pki_;
  pki::KeyPair ca_;
};

TEST_F(HttpsServerTest, ServesVerifiedHttps) {
  StartTls();
  std::string r = TlsGet("/a");
  EXPECT_EQ(Code(r), 200) << r;
  EXPECT_TRUE(absl::StrContains(r, "GET /a 0 loopback")) << r;
  EXPECT_FALSE(absl::StrContains(r, "cn=")) << r;  // No client certificate.
  EXPECT_EQ(Code(TlsGet("/a", nullptr, "localhost")), 200);
  EXPECT_EQ(Code(TlsGet("/a", nullptr, "batchd.test")), 200);  // --tls-san
  EXPECT_EQ(TlsGet("/a", nullptr, "other.example"), "");      // Not a SAN: refused.
}

TEST_F(HttpsServerTest, ClientCertificateIsExposedWhenItVerifies) {
  StartTls();
  pki::CertRequest req;
  req.common_name = "alice";
  req.organizations = {"team-a", "devs"};
  req.client_auth = true;
  auto alice = pki::Issue(ca_, req);
  ASSERT_TRUE(alice.ok()) << alice.status();
  std::string r = TlsGet("/a", &*alice);
  EXPECT_EQ(Code(r), 200) << r;
  EXPECT_TRUE(absl::StrContains(r, "cn=alice")) << r;
  // A certificate from another CA is not an identity (the request still runs).
  auto other_ca = pki::NewCa("other");
  ASSERT_TRUE(other_ca.ok());
  auto mallory = pki::Issue(*other_ca, req);
  ASSERT_TRUE(mallory.ok());
  std::string m = TlsGet("/a", &*mallory);
  EXPECT_EQ(Code(m), 200) << m;
  EXPECT_FALSE(absl::StrContains(m, "cn=")) << m;
}

TEST_F(HttpsServerTest, SurvivesBrokenHandshakesAndGarbageRecords) {
  HttpServerOptions o;
  o.header_timeout = absl::Milliseconds(300);
  StartTls(o);
  {
    Raw garbage(port_);
    garbage.Send(std::string("\x16\x03\x01\x00\x05hello", 10));  // A broken ClientHello.
    EXPECT_TRUE(garbage.WaitClosed());
  }
  {
    Raw junk(port_);
    junk.Send(std::string(5000, '\x17'));  // Application-data records before a handshake.
    EXPECT_TRUE(junk.WaitClosed());
  }
  {
    Raw half(port_);  // Starts a handshake and stalls: closed by the header timeout.
    half.Send(std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11));
    EXPECT_TRUE(half.WaitClosed());
  }
  {
    Raw cut(port_);  // Starts a handshake and disappears.
    cut.Send(std::string("\x16\x03\x01\x02\x00\x01", 6));
  }
  {
    Raw plain(port_);  // Plain HTTP to the TLS port.
    plain.Send(Get("/a"));
    EXPECT_TRUE(plain.WaitClosed());
  }
  EXPECT_EQ(Code(TlsGet("/a")), 200);
}

TEST(PkiTest, EnsureServingPkiKeepsTheCaAndReissuesForNewNames) {
  ScopedTempDir dir("batchd-pki-test");
  auto a = pki::EnsureServingPki(dir.path(), {"10.0.0.1"});
  ASSERT_TRUE(a.ok()) << a.status();
  auto read = [](const std::string& f) {
    std::ifstream in(f);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  std::string ca = read(a->ca_cert_file), cert = read(a->cert_file);
  struct stat st{};
  ASSERT_EQ(::stat(a->key_file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto b = pki::EnsureServingPki(dir.path(), {"10.0.0.1"});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(read(b->cert_file), cert);  // Unchanged.
  auto c = pki::EnsureServingPki(dir.path(), {"10.0.0.1", "node.example"});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(read(c->ca_cert_file), ca);   // Same CA,
  EXPECT_NE(read(c->cert_file), cert);    // new serving certificate.
  EXPECT_TRUE(pki::IsIpAddress("::1"));
  EXPECT_FALSE(pki::IsIpAddress("host"));
}

}  // namespace
}  // namespace batchd::apiserver
