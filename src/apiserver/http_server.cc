#include "apiserver/http_server.h"

#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <deque>
#include <map>
#include <thread>
#include <unordered_map>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/logging.h"
#include "common/string_view.h"
#include "common/thread_name.h"

namespace batchd::apiserver {

namespace net = boost::asio;
namespace ssl = net::ssl;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

std::string UrlDecode(std::string_view s, bool form) {
  std::string out;
  out.reserve(s.size());
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '%' && i + 2 < s.size()) {
      int hi = hex(s[i + 1]), lo = hex(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(form && c == '+' ? ' ' : c);
  }
  return out;
}

std::multimap<std::string, std::string> ParseQuery(std::string_view q) {
  std::multimap<std::string, std::string> out;
  while (!q.empty()) {
    size_t amp = q.find('&');
    std::string_view part = q.substr(0, amp);
    if (!part.empty()) {
      size_t eq = part.find('=');
      std::string key = UrlDecode(part.substr(0, eq), true);
      std::string val = eq == std::string_view::npos ? "" : UrlDecode(part.substr(eq + 1), true);
      out.emplace(std::move(key), std::move(val));
    }
    if (amp == std::string_view::npos) break;
    q.remove_prefix(amp + 1);
  }
  return out;
}

RequestKind ClassifyRequest(const HttpRequest& req) {
  const std::string& p = req.path;
  if (p == "/healthz" || p == "/livez" || p == "/readyz" || absl::StartsWith(p, "/healthz/") ||
      absl::StartsWith(p, "/livez/") || absl::StartsWith(p, "/readyz/")) {
    return RequestKind::kExempt;
  }
  const std::string watch = req.Param("watch");
  if (watch == "true" || watch == "1") return RequestKind::kLongRunning;
  // /api/v1/watch/..., /apis/G/V/watch/... (the deprecated watch paths) and
  // the long-running subresources.
  std::vector<std::string_view> segs;
  for (size_t i = 0; i < p.size();) {
    size_t j = p.find('/', i);
    if (j == std::string::npos) j = p.size();
    if (j > i) segs.push_back(std::string_view(p).substr(i, j - i));
    i = j + 1;
  }
  size_t base = !segs.empty() && segs[0] == "api" ? 2 : (!segs.empty() && segs[0] == "apis" ? 3 : 0);
  if (base > 0 && segs.size() > base) {
    if (segs[base] == "watch") return RequestKind::kLongRunning;
    // [namespaces/NS/]RESOURCE/NAME/SUBRESOURCE
    size_t r = base;
    if (segs[r] == "namespaces" && segs.size() > r + 3) r += 2;
    const std::string_view last = segs.back();
    if (segs.size() == r + 3 &&
        (last == "log" || last == "exec" || last == "attach" || last == "portforward" ||
         last == "proxy")) {
      return RequestKind::kLongRunning;
    }
  }
  const std::string& m = req.method;
  if (m == "GET" || m == "HEAD" || m == "OPTIONS") return RequestKind::kReadOnly;
  return RequestKind::kMutating;
}

std::optional<absl::Duration> ParseGoDuration(std::string_view s) {
  if (s.empty()) return std::nullopt;
  bool neg = false;
  if (s[0] == '-' || s[0] == '+') {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return absl::ZeroDuration();
  if (s.empty()) return std::nullopt;
  absl::Duration total;
  while (!s.empty()) {
    size_t i = 0;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
    if (i == 0) return std::nullopt;
    double v = 0;
    if (!absl::SimpleAtod(Sv(s.substr(0, i)), &v)) return std::nullopt;
    s.remove_prefix(i);
    size_t u = 0;
    while (u < s.size() && !std::isdigit(static_cast<unsigned char>(s[u])) && s[u] != '.') ++u;
    std::string_view unit = s.substr(0, u);
    s.remove_prefix(u);
    absl::Duration d;
    if (unit == "ns") d = absl::Nanoseconds(v);
    else if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") d = absl::Microseconds(v);
    else if (unit == "ms") d = absl::Milliseconds(v);
    else if (unit == "s") d = absl::Seconds(v);
    else if (unit == "m") d = absl::Minutes(v);
    else if (unit == "h") d = absl::Hours(v);
    else return std::nullopt;
    total += d;
  }
  return neg ? -total : total;
}

namespace {

std::string StatusJson(int code, std::string_view reason, std::string_view message,
                       std::string_view details = "{}") {
  std::string esc;
  for (char c : message) {
    if (c == '"' || c == '\\') esc.push_back('\\');
    esc.push_back(c);
  }
  return absl::StrCat(
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":")", esc,
      R"(","reason":")", Sv(reason), R"(","details":)", Sv(details), R"(,"code":)", code, "}");
}

std::string TooManyRequestsBody() {
  return StatusJson(429, "TooManyRequests", "Too many requests, please try again later.",
                    R"({"retryAfterSeconds":1})");
}

HttpRequest ToHttpRequest(http::request<http::string_body>& req) {
  HttpRequest r;
  r.method = std::string(req.method_string());
  std::string_view target(req.target().data(), req.target().size());
  size_t q = target.find('?');
  r.path = UrlDecode(target.substr(0, q), false);
  if (q != std::string_view::npos) r.query = ParseQuery(target.substr(q + 1));
  for (const auto& f : req) {
    std::string name(f.name_string());
    absl::AsciiStrToLower(&name);
    std::string value(f.value());
    auto [it, inserted] = r.headers.emplace(name, value);
    if (!inserted) it->second += "," + value;
  }
  r.body = std::move(req.body());
  return r;
}

// The answer to a request the parser refuses: 413, 431, 400, or 0 when the
// error is the connection's (closed, timed out).
int CodeForReadError(beast::error_code ec) {
  if (ec == http::error::body_limit) return 413;
  if (ec == http::error::header_limit) return 431;
  if (ec.category() == http::make_error_code(http::error::bad_target).category() &&
      ec != http::error::end_of_stream && ec != http::error::partial_message &&
      ec != http::error::need_more) {
    return 400;
  }
  return 0;
}

bool ExpectsContinue(beast::string_view v) {
  return absl::EqualsIgnoreCase(absl::string_view(v.data(), v.size()), "100-continue");
}

bool IsLoopback(const net::ip::address& a) {
  if (a.is_loopback()) return true;
  if (a.is_v6() && a.to_v6().is_v4_mapped()) {
    return net::ip::make_address_v4(net::ip::v4_mapped, a.to_v6()).is_loopback();
  }
  return false;
}

// A bounded pool of worker threads that run blocking handlers. Threads are
// started on demand up to `max` and exit after `idle_exit` without work.
class WorkerPool {
 public:
  WorkerPool(int max, absl::Duration idle_exit, std::function<bool()> can_start)
      : max_(max), idle_exit_(idle_exit), can_start_(std::move(can_start)) {}
  ~WorkerPool() { Stop(); }

  // False when no thread could take `fn` (starting one failed).
  bool Submit(std::function<void()> fn) {
    std::vector<std::thread> done;
    bool ok = true;
    {
      absl::MutexLock lock(&mu_);
      done = TakeFinishedLocked();
      if (stopping_) {
        ok = false;
      } else if (idle_ > static_cast<int>(queue_.size()) || live_ >= max_) {
        // An idle worker takes it, or (at the cap) the next one to finish.
        queue_.push_back(std::move(fn));
        cv_.Signal();
      } else if (can_start_ && !can_start_()) {
        ok = false;
      } else {
        int id = next_id_++;
        try {
          threads_.emplace(id, std::thread([this, id] { Loop(id); }));
          ++live_;
          queue_.push_back(std::move(fn));
        } catch (const std::system_error& e) {
          BATCHD_LOG_ERROR("http: cannot start a worker thread ({} running): {}", live_, e.what());
          ok = false;
        }
      }
    }
    for (auto& t : done) t.join();
    return ok;
  }

  // Joins every thread; with `detach`, leaves them instead (a handler that
  // does not return; the pool must then outlive them: it is never freed).
  void Stop(bool detach = false) {
    std::map<int, std::thread> all;
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
      cv_.SignalAll();
      all.swap(threads_);
      finished_.clear();
    }
    for (auto& [id, t] : all) detach ? t.detach() : t.join();
  }

  int live() const {
    absl::MutexLock lock(&mu_);
    return live_;
  }

 private:
  void Loop(int id) {
    SetThreadName("http-worker");
    for (;;) {
      std::function<void()> fn = Take(id);
      if (!fn) return;
      fn();
    }
  }
  // The next task, or an empty function when this worker should exit.
  std::function<void()> Take(int id) {
    absl::MutexLock lock(&mu_);
    while (queue_.empty() && !stopping_) {
      ++idle_;
      bool timed_out = cv_.WaitWithTimeout(&mu_, idle_exit_);
      --idle_;
      if (timed_out && queue_.empty() && !stopping_) break;
    }
    if (queue_.empty()) {
      --live_;
      if (!stopping_) finished_.push_back(id);
      return nullptr;
    }
    std::function<void()> fn = std::move(queue_.front());
    queue_.pop_front();
    return fn;
  }
  std::vector<std::thread> TakeFinishedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    std::vector<std::thread> out;
    for (int id : finished_) {
      auto it = threads_.find(id);
      if (it == threads_.end()) continue;
      out.push_back(std::move(it->second));
      threads_.erase(it);
    }
    finished_.clear();
    return out;
  }

  const int max_;
  const absl::Duration idle_exit_;
  const std::function<bool()> can_start_;
  mutable absl::Mutex mu_;
  absl::CondVar cv_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  std::map<int, std::thread> threads_ ABSL_GUARDED_BY(mu_);
  std::vector<int> finished_ ABSL_GUARDED_BY(mu_);
  int next_id_ ABSL_GUARDED_BY(mu_) = 0;
  int live_ ABSL_GUARDED_BY(mu_) = 0;
  int idle_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
};

// What Stop needs of a connection, whatever its stream type.
class SessionControl {
 public:
  virtual ~SessionControl() = default;
  // Closes the connection unless a handler runs on it (then it closes when
  // the handler returns).
  virtual void CloseIfIdle() = 0;
  // Shuts the socket down under a running handler (of a long-running
  // request only, when asked): its writes fail.
  virtual void Cut(bool long_running_only) = 0;
};

}  // namespace

struct HttpServer::Impl : std::enable_shared_from_this<HttpServer::Impl> {
  HttpServerOptions opts;
  HttpHandler handler;

  std::atomic<bool> stopping{false};
  std::atomic<int> connections{0};
  std::atomic<int> inflight[4] = {};  // By RequestKind.
  std::atomic<int64_t> rejected[4] = {};
  std::atomic<int64_t> connections_refused{0};
  std::atomic<int64_t> accept_errors{0};
  std::atomic<int64_t> thread_start_failures{0};
  std::atomic<int64_t> timeouts{0};

  // Handlers running (or handed to the pool), by request id; Stop waits for
  // them and names those that do not return.
  struct Running {
    RequestKind kind;
    absl::Time since;
    std::string what;  // "GET /path from ADDRESS"
  };
  absl::Mutex active_mu;
  absl::CondVar active_cv;
  std::unordered_map<uint64_t, Running> running ABSL_GUARDED_BY(active_mu);
  uint64_t next_request_id ABSL_GUARDED_BY(active_mu) = 0;
  std::atomic<int> abandoned{0};

  absl::Mutex sessions_mu;
  std::unordered_map<SessionControl*, std::weak_ptr<SessionControl>> sessions
      ABSL_GUARDED_BY(sessions_mu);

  std::unique_ptr<WorkerPool> pool;
  std::unique_ptr<ssl::context> tls;
  std::unique_ptr<net::io_context> ioc;
  // Keeps the I/O threads running while handlers may still write (after
  // the acceptor closed, no operation may be pending).
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::unique_ptr<net::steady_timer> accept_retry;
  std::vector<std::thread> io_threads;
  std::atomic<int64_t> last_accept_log_ms{0};

  int Limit(RequestKind k) const {
    switch (k) {
      case RequestKind::kReadOnly: return opts.max_requests_inflight;
      case RequestKind::kMutating: return opts.max_mutating_requests_inflight;
      case RequestKind::kLongRunning: return opts.max_long_running_requests;
      case RequestKind::kExempt: return 0;
    }
    return 0;
  }
  bool TryAcquire(RequestKind k) {
    int i = static_cast<int>(k);
    int limit = Limit(k);
    int now = inflight[i].fetch_add(1) + 1;
    if (limit > 0 && now > limit) {
      inflight[i].fetch_sub(1);
      rejected[i].fetch_add(1);
      return false;
    }
    return true;
  }
  void Release(RequestKind k) { inflight[static_cast<int>(k)].fetch_sub(1); }

  // Returns the request's id for DoneActive.
  uint64_t AddActive(RequestKind kind, std::string what) {
    absl::MutexLock lock(&active_mu);
    const uint64_t id = next_request_id++;
    running.emplace(id, Running{kind, absl::Now(), std::move(what)});
    return id;
  }
  void DoneActive(uint64_t id) {
    absl::MutexLock lock(&active_mu);
    running.erase(id);
    active_cv.SignalAll();
  }

  // Which handlers a shutdown step waits for.
  enum class Handlers { kLongRunning, kOthers, kAll };
  static bool Counts(Handlers which, RequestKind kind) {
    if (which == Handlers::kAll) return true;
    return (kind == RequestKind::kLongRunning) == (which == Handlers::kLongRunning);
  }
  int CountLocked(Handlers which) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(active_mu) {
    int n = 0;
    for (const auto& [s, r] : running) n += Counts(which, r.kind) ? 1 : 0;
    return n;
  }
  // Waits until none of `which` runs (true) or until `deadline` (false).
  bool WaitHandlers(Handlers which, absl::Time deadline) {
    absl::MutexLock lock(&active_mu);
    while (CountLocked(which) > 0) {
      if (active_cv.WaitWithDeadline(&active_mu, deadline) && CountLocked(which) > 0) return false;
    }
    return true;
  }
  // "N: GET /a from ADDR (long-running, 12s), ..." (the first few).
  std::string DescribeHandlers(Handlers which) {
    absl::MutexLock lock(&active_mu);
    const absl::Time now = absl::Now();
    std::string out = absl::StrCat(CountLocked(which));
    int listed = 0;
    for (const auto& [s, r] : running) {
      if (!Counts(which, r.kind)) continue;
      if (++listed > 5) {
        absl::StrAppend(&out, ", ...");
        break;
      }
      absl::StrAppend(&out, listed == 1 ? ": " : ", ", r.what,
                      r.kind == RequestKind::kLongRunning ? " (long-running, " : " (",
                      absl::FormatDuration(absl::Trunc(now - r.since, absl::Milliseconds(100))),
                      ")");
    }
    return out;
  }

  void Register(const std::shared_ptr<SessionControl>& s) {
    absl::MutexLock lock(&sessions_mu);
    sessions.emplace(s.get(), s);
  }
  void Unregister(SessionControl* s) {
    absl::MutexLock lock(&sessions_mu);
    sessions.erase(s);
  }
  std::vector<std::shared_ptr<SessionControl>> LiveSessions() {
    std::vector<std::shared_ptr<SessionControl>> out;
    absl::MutexLock lock(&sessions_mu);
    for (auto& [p, w] : sessions) {
      if (auto s = w.lock()) out.push_back(std::move(s));
    }
    return out;
  }

  // Logs at most once a second (a failing accept repeats quickly).
  bool ShouldLogAccept() {
    int64_t now = absl::ToUnixMillis(absl::Now());
    int64_t last = last_accept_log_ms.load();
    return now - last >= 1000 && last_accept_log_ms.compare_exchange_strong(last, now);
  }

  void Accept();
  void OnAccept(beast::error_code ec, tcp::socket sock);
};

namespace {

template <class Stream>
class Session : public SessionControl, public std::enable_shared_from_this<Session<Stream>> {
 public:
  using Impl = HttpServer::Impl;

  Session(std::shared_ptr<Impl> srv, Stream stream)
      : srv_(std::move(srv)), stream_(std::move(stream)), timer_(stream_.get_executor()) {
    srv_->connections.fetch_add(1);
  }
  ~Session() override {
    srv_->Unregister(this);
    srv_->connections.fetch_sub(1);
  }

  void Start() {
    auto& sock = Tcp().socket();
    beast::error_code ec;
    sock.set_option(tcp::no_delay(true), ec);
    auto rep = sock.remote_endpoint(ec);
    if (!ec) {
      remote_ = absl::StrCat(rep.address().to_string(), ":", rep.port());
      loopback_ = IsLoopback(rep.address());
    }
    fd_ = sock.native_handle();
    header_deadline_ = std::chrono::steady_clock::now() + ToChrono(srv_->opts.header_timeout);
    if constexpr (kTls) {
      Tcp().expires_at(header_deadline_);
      stream_.async_handshake(ssl::stream_base::server,
                              [self = this->shared_from_this()](beast::error_code e) {
                                self->OnHandshake(e);
                              });
    } else {
      ReadHeader();
    }
  }

  // SessionControl.
  void CloseIfIdle() override {
    net::post(stream_.get_executor(), [self = this->shared_from_this()] {
      if (!self->handler_active_) self->Close();
    });
  }
  void Cut(bool long_running_only) override {
    net::post(stream_.get_executor(), [self = this->shared_from_this(), long_running_only] {
      if (self->handler_active_ && !self->closed_ &&
          (!long_running_only || self->long_running_)) {
        self->cut_ = true;
        beast::error_code ec;
        self->Tcp().socket().shutdown(tcp::socket::shutdown_both, ec);
      }
    });
  }

  // --- Called from the worker thread running the handler. ---

  // Runs an asynchronous write on the strand and waits for it.
  template <class Init>
  bool SyncWrite(Init init) {
    {
      absl::MutexLock lock(&wmu_);
      wdone_ = false;
    }
    net::post(stream_.get_executor(), [self = this->shared_from_this(), init]() mutable {
      if (self->closed_ || self->cut_) return self->WriteDone(net::error::not_connected);
      self->Tcp().expires_after(ToChrono(self->srv_->opts.write_timeout));
      init(self->stream_, [self](beast::error_code ec, size_t) { self->WriteDone(ec); });
    });
    absl::MutexLock lock(&wmu_);
    while (!wdone_) wcv_.Wait(&wmu_);
    if (wec_) {
      absl::MutexLock rlock(&rmu_);
      failed_ = true;
    }
    return !wec_;
  }

  // Claims the response for the handler; false once the 504 was sent.
  bool Claim() {
    absl::MutexLock lock(&rmu_);
    if (timed_out_) return false;
    started_ = true;
    return true;
  }
  bool Failed() {
    absl::MutexLock lock(&rmu_);
    return failed_ || timed_out_;
  }
  bool KeepAlive() const { return keep_alive_ && !srv_->stopping; }
  bool Stopping() const { return srv_->stopping; }
  unsigned version() const { return version_; }

  bool ClientGone() {
    if (srv_->stopping) return true;
    absl::MutexLock lock(&rmu_);  // Held across the poll: the fd stays ours.
    if (failed_ || timed_out_) return true;
    pollfd p{fd_, POLLIN | POLLRDHUP, 0};
    if (::poll(&p, 1, 0) <= 0) return false;
    if (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) return true;
    if (p.revents & POLLIN) {
      char c;
      ssize_t n = ::recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT);
      return n == 0;
    }
    return false;
  }

  // Runs on a worker thread.
  void RunHandler(const HttpRequest& req, RequestKind kind, uint64_t id);

 private:
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

  static std::chrono::steady_clock::duration ToChrono(absl::Duration d) {
    return absl::ToChronoNanoseconds(d);
  }
  beast::tcp_stream& Tcp() { return beast::get_lowest_layer(stream_); }

  void WriteDone(beast::error_code ec) {
    absl::MutexLock lock(&wmu_);
    wec_ = ec;
    wdone_ = true;
    wcv_.SignalAll();
  }

  void OnHandshake(beast::error_code ec) {
    if (ec) return Close();  // Garbage, a dead peer or a timeout: nothing to answer.
    if constexpr (kTls) ReadPeerCertificate();
    ReadHeader();
  }

  void ReadPeerCertificate() {
    if constexpr (kTls) {
      SSL* s = stream_.native_handle();
      X509* cert = SSL_get_peer_certificate(s);
      if (!cert) return;
      if (SSL_get_verify_result(s) == X509_V_OK) {
        HttpRequest::PeerCertificate pc;
        X509_NAME* name = X509_get_subject_name(cert);
        auto text = [](X509_NAME_ENTRY* e) {
          unsigned char* utf8 = nullptr;
          int n = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(e));
          std::string out = n > 0 ? std::string(reinterpret_cast<char*>(utf8), n) : "";
          OPENSSL_free(utf8);
          return out;
        };
        int i = X509_NAME_get_index_by_NID(name, NID_commonName, -1);
        if (i >= 0) pc.common_name = text(X509_NAME_get_entry(name, i));
        for (int j = -1; (j = X509_NAME_get_index_by_NID(name, NID_organizationName, j)) >= 0;) {
          pc.organizations.push_back(text(X509_NAME_get_entry(name, j)));
        }
        peer_cert_ = std::move(pc);
      }
      X509_free(cert);
    }
  }

  // Waits for the next request: `idle_timeout` for its first byte on a
  // kept-alive connection, then `header_timeout` for the whole header.
  void WaitForRequest() {
    if (srv_->stopping) return Close();
    if (buffer_.size() > 0) {
      header_deadline_ = std::chrono::steady_clock::now() + ToChrono(srv_->opts.header_timeout);
      return ReadHeader();
    }
    Tcp().expires_after(ToChrono(srv_->opts.idle_timeout));
    stream_.async_read_some(buffer_.prepare(4096), [self = this->shared_from_this()](
                                                       beast::error_code ec, size_t n) {
      if (ec) return self->Close();
      self->buffer_.commit(n);
      self->header_deadline_ =
          std::chrono::steady_clock::now() + ToChrono(self->srv_->opts.header_timeout);
      self->ReadHeader();
    });
  }

  void ReadHeader() {
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(srv_->opts.max_header_bytes));
    parser_->body_limit(srv_->opts.max_body_bytes);
    Tcp().expires_at(header_deadline_);
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = this->shared_from_this()](beast::error_code ec, size_t) {
                              self->OnHeader(ec);
                            });
  }

  // Answers a request the transport refuses, then closes.
  bool ReplyToReadError(beast::error_code ec) {
    switch (CodeForReadError(ec)) {
      case 413:
        Reply(413, StatusJson(413, "RequestEntityTooLarge",
                              "the request body is larger than the limit"),
              {}, false);
        return true;
      case 431:
        Reply(431, StatusJson(431, "BadRequest", "request headers too large"), {}, false);
        return true;
      case 400:
        Reply(400, StatusJson(400, "BadRequest", "malformed HTTP request"), {}, false);
        return true;
      default:
        return false;
    }
  }

  void OnHeader(beast::error_code ec) {
    if (ec) {
      if (!ReplyToReadError(ec)) Close();
      return;
    }
    auto& h = parser_->get();
    keep_alive_ = h.keep_alive();
    version_ = h.version();
    Tcp().expires_after(ToChrono(srv_->opts.read_timeout));
    if (ExpectsContinue(h[http::field::expect]) &&
        !parser_->is_done()) {
      auto cont = std::make_shared<std::string>("HTTP/1.1 100 Continue\r\n\r\n");
      net::async_write(stream_, net::buffer(*cont),
                       [self = this->shared_from_this(), cont](beast::error_code e, size_t) {
                         if (e) return self->Close();
                         self->ReadBody();
                       });
      return;
    }
    ReadBody();
  }

  void ReadBody() {
    http::async_read(stream_, buffer_, *parser_,
                     [self = this->shared_from_this()](beast::error_code ec, size_t) {
                       self->OnBody(ec);
                     });
  }

  void OnBody(beast::error_code ec) {
    if (ec) {
      if (!ReplyToReadError(ec)) Close();
      return;
    }
    if (srv_->stopping) return Close();
    Tcp().expires_never();
    HttpRequest r = ToHttpRequest(parser_->get());
    r.remote = remote_;
    r.loopback = loopback_;
    r.peer_cert = peer_cert_;
    parser_.reset();
    Dispatch(std::move(r));
  }

  void Dispatch(HttpRequest r) {
    const RequestKind kind = ClassifyRequest(r);
    absl::Duration timeout = srv_->opts.request_timeout;
    if (kind != RequestKind::kLongRunning && r.HasParam("timeout")) {
      auto t = ParseGoDuration(r.Param("timeout"));
      if (!t || *t < absl::ZeroDuration()) {
        return Reply(400, StatusJson(400, "BadRequest",
                                     "invalid timeout specified in the request URL"),
                     {}, keep_alive_);
      }
      if (*t > absl::ZeroDuration()) timeout = std::min(timeout, *t);
    }
    if (!srv_->TryAcquire(kind)) {
      return Reply(429, TooManyRequestsBody(), {{"Retry-After", "1"}}, keep_alive_);
    }
    {
      absl::MutexLock lock(&rmu_);
      started_ = timed_out_ = failed_ = false;
    }
    handler_active_ = true;
    long_running_ = kind == RequestKind::kLongRunning;
    const uint64_t id =
        srv_->AddActive(kind, absl::StrCat(r.method, " ", r.path, " from ", remote_));
    auto self = this->shared_from_this();
    bool submitted = srv_->pool->Submit([self, r = std::move(r), kind, id] {
      self->RunHandler(r, kind, id);
    });
    if (!submitted) {
      handler_active_ = false;
      srv_->Release(kind);
      srv_->DoneActive(id);
      srv_->thread_start_failures.fetch_add(1);
      return Reply(429,
                   StatusJson(429, "TooManyRequests",
                              "the server cannot start a thread for the request, please try "
                              "again later",
                              R"({"retryAfterSeconds":1})"),
                   {{"Retry-After", "1"}}, keep_alive_);
    }
    if (kind != RequestKind::kLongRunning && timeout > absl::ZeroDuration()) {
      timer_.expires_after(ToChrono(timeout));
      timer_.async_wait([self](beast::error_code ec) {
        if (!ec) self->OnDeadline();
      });
    }
  }

  // The request ran past its timeout: answer 504 unless the handler has
  // started its response; the handler's later writes are dropped.
  void OnDeadline() {
    {
      absl::MutexLock lock(&rmu_);
      if (!handler_active_ || started_) return;
      timed_out_ = true;
      started_ = true;
    }
    srv_->timeouts.fetch_add(1);
    Reply(504,
          StatusJson(504, "Timeout",
                     "Timeout: request did not complete within requested timeout - context "
                     "deadline exceeded"),
          {}, false);
  }

 public:
  // Writes a whole response without making the worker wait: the handler
  // returns at once and the connection goes on when both are done.
  template <class Res>
  void AsyncSend(std::shared_ptr<Res> res) {
    net::post(stream_.get_executor(), [self = this->shared_from_this(), res] {
      if (self->closed_ || self->cut_) {
        absl::MutexLock lock(&self->rmu_);
        self->failed_ = true;
        return;
      }
      self->write_pending_ = true;
      self->Tcp().expires_after(ToChrono(self->srv_->opts.write_timeout));
      http::async_write(self->stream_, *res, [self, res](beast::error_code ec, size_t) {
        self->write_pending_ = false;
        if (ec) {
          absl::MutexLock lock(&self->rmu_);
          self->failed_ = true;
        }
        if (self->finish_after_write_) {
          self->finish_after_write_ = false;
          self->Continue();
        }
      });
    });
  }

  void OnHandlerDone() {
    timer_.cancel();
    handler_active_ = false;
    if (write_pending_) {
      finish_after_write_ = true;  // The write's completion goes on.
      return;
    }
    Continue();
  }

  void Continue() {
    bool failed;
    {
      absl::MutexLock lock(&rmu_);
      failed = failed_ || timed_out_;
    }
    if (reply_in_flight_) {
      close_after_reply_ = true;  // The 504's completion closes.
      return;
    }
    if (failed || !keep_alive_ || srv_->stopping || cut_) return Close();
    WaitForRequest();
  }

 private:
  // Writes a response from the strand (429, 504, transport errors); then
  // reads the next request when `keep_alive`, else closes.
  void Reply(int code, std::string body, const HeaderList& headers, bool keep_alive) {
    auto res = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(code), version_ ? version_ : 11);
    res->set(http::field::content_type, "application/json");
    for (const auto& [k, v] : headers) res->set(k, v);
    keep_alive = keep_alive && !srv_->stopping;
    res->keep_alive(keep_alive);
    res->body() = std::move(body);
    res->prepare_payload();
    reply_in_flight_ = true;
    Tcp().expires_after(ToChrono(srv_->opts.write_timeout));
    http::async_write(stream_, *res, [self = this->shared_from_this(), res, keep_alive](
                                         beast::error_code ec, size_t) {
      self->reply_in_flight_ = false;
      if (self->handler_active_) {
        // A 504 under a running handler: end the connection, keep the fd
        // until the handler returns.
        beast::error_code e;
        self->Tcp().socket().shutdown(tcp::socket::shutdown_both, e);
        self->cut_ = true;
        return;
      }
      if (ec || !keep_alive || self->close_after_reply_) return self->Close();
      self->WaitForRequest();
    });
  }

  void Close() {
    if (closed_) return;
    if (handler_active_ || reply_in_flight_) {
      beast::error_code ec;
      Tcp().socket().shutdown(tcp::socket::shutdown_both, ec);
      cut_ = true;
      if (reply_in_flight_ && !handler_active_) close_after_reply_ = true;
      return;
    }
    closed_ = true;
    timer_.cancel();
    beast::error_code ec;
    Tcp().socket().shutdown(tcp::socket::shutdown_both, ec);
    Tcp().close();
  }

  std::shared_ptr<Impl> srv_;
  Stream stream_;
  net::steady_timer timer_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::chrono::steady_clock::time_point header_deadline_;
  std::string remote_;
  bool loopback_ = false;
  std::optional<HttpRequest::PeerCertificate> peer_cert_;
  int fd_ = -1;
  bool keep_alive_ = true;
  unsigned version_ = 11;
  // Strand state.
  std::atomic<bool> handler_active_{false};
  std::atomic<bool> long_running_{false};  // The running handler's request is.
  bool reply_in_flight_ = false;
  bool write_pending_ = false;      // An AsyncSend in flight.
  bool finish_after_write_ = false;  // The handler returned meanwhile.
  bool close_after_reply_ = false;
  std::atomic<bool> cut_{false};
  std::atomic<bool> closed_{false};
  // Request state shared by the strand (deadline) and the worker.
  absl::Mutex rmu_;
  bool started_ ABSL_GUARDED_BY(rmu_) = false;
  bool timed_out_ ABSL_GUARDED_BY(rmu_) = false;
  bool failed_ ABSL_GUARDED_BY(rmu_) = false;
  // The worker's pending write.
  absl::Mutex wmu_;
  absl::CondVar wcv_;
  bool wdone_ ABSL_GUARDED_BY(wmu_) = false;
  beast::error_code wec_ ABSL_GUARDED_BY(wmu_);
};

// The ResponseWriter a handler gets: each call is an asynchronous write on
// the connection's strand that the worker waits for.
template <class Stream>
class ConnWriter : public ResponseWriter {
 public:
  explicit ConnWriter(Session<Stream>& s) : s_(s) {}

  void Send(int code, const HeaderList& headers, std::string body) override {
    sent_ = true;
    if (!s_.Claim()) return;
    auto res = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(code), s_.version());
    for (const auto& [k, v] : headers) res->set(k, v);
    res->keep_alive(s_.KeepAlive());
    res->body() = std::move(body);
    res->prepare_payload();
    s_.AsyncSend(std::move(res));
  }

  bool StartStream(int code, const HeaderList& headers) override {
    sent_ = true;
    if (!s_.Claim()) return false;
    auto res = std::make_shared<http::response<http::empty_body>>(
        static_cast<http::status>(code), s_.version());
    for (const auto& [k, v] : headers) res->set(k, v);
    res->keep_alive(s_.KeepAlive());
    res->chunked(true);
    auto sr = std::make_shared<http::response_serializer<http::empty_body>>(*res);
    return s_.SyncWrite([res, sr](Stream& st, auto done) {
      http::async_write_header(st, *sr, std::move(done));
    });
  }

  bool WriteChunk(std::string_view data) override {
    // A stopping server ends streams at once, even busy ones.
    if (s_.Failed() || s_.Stopping()) return false;
    if (data.empty()) return true;  // An empty chunk would end the stream.
    net::const_buffer buf(data.data(), data.size());
    return s_.SyncWrite([buf](Stream& st, auto done) {
      net::async_write(st, http::make_chunk(buf), std::move(done));
    });
  }

  void EndStream() override {
    if (s_.Failed()) return;
    s_.SyncWrite([](Stream& st, auto done) {
      net::async_write(st, http::make_chunk_last(), std::move(done));
    });
  }

  bool ClientGone() override { return s_.ClientGone(); }

  bool sent() const { return sent_; }

 private:
  Session<Stream>& s_;
  bool sent_ = false;
};

template <class Stream>
void Session<Stream>::RunHandler(const HttpRequest& req, RequestKind kind, uint64_t id) {
  {
    ConnWriter<Stream> w(*this);
    try {
      srv_->handler(req, w);
    } catch (const std::exception& e) {
      BATCHD_LOG_ERROR("http: handler for {} {} threw: {}", req.method, req.path, e.what());
    }
    if (!w.sent()) {
      w.Send(500, {{"Content-Type", "application/json"}},
             StatusJson(500, "InternalError", "the handler sent no response"));
    }
  }
  srv_->Release(kind);
  net::post(stream_.get_executor(), [self = this->shared_from_this()] { self->OnHandlerDone(); });
  srv_->DoneActive(id);
}

}  // namespace

void HttpServer::Impl::Accept() {
  acceptor->async_accept(net::make_strand(*ioc),
                         [self = shared_from_this()](beast::error_code ec, tcp::socket sock) {
                           self->OnAccept(ec, std::move(sock));
                         });
}

void HttpServer::Impl::OnAccept(beast::error_code ec, tcp::socket sock) {
  if (stopping) return;
  if (ec) {
    accept_errors.fetch_add(1);
    if (ShouldLogAccept()) {
      BATCHD_LOG_ERROR("http: accept failed ({} connections open): {}", connections.load(),
                       ec.message());
    }
    // Out of descriptors or memory: back off a little, then accept again.
    accept_retry->expires_after(std::chrono::milliseconds(100));
    accept_retry->async_wait([self = shared_from_this()](beast::error_code e) {
      if (!e && !self->stopping) self->Accept();
    });
    return;
  }
  if (opts.max_connections > 0 && connections.load() >= opts.max_connections) {
    connections_refused.fetch_add(1);
    if (ShouldLogAccept()) {
      BATCHD_LOG_WARN("http: {} connections open (--max-connections); closing new ones",
                      connections.load());
    }
    beast::error_code e;
    sock.close(e);
    return Accept();
  }
  if (tls) {
    using S = beast::ssl_stream<beast::tcp_stream>;
    auto s = std::make_shared<Session<S>>(shared_from_this(), S(std::move(sock), *tls));
    Register(s);
    s->Start();
  } else {
    auto s = std::make_shared<Session<beast::tcp_stream>>(shared_from_this(),
                                                          beast::tcp_stream(std::move(sock)));
    Register(s);
    s->Start();
  }
  Accept();
}

HttpServer::HttpServer(HttpServerOptions opts, HttpHandler handler)
    : impl_(std::make_shared<Impl>()) {
  impl_->opts = std::move(opts);
  impl_->handler = std::move(handler);
}

HttpServer::~HttpServer() { Stop(); }

namespace {

absl::StatusOr<std::unique_ptr<ssl::context>> MakeTlsContext(const TlsServerFiles& f) {
  auto ctx = std::make_unique<ssl::context>(ssl::context::tls_server);
  beast::error_code ec;
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                       ssl::context::no_tlsv1_1 | ssl::context::single_dh_use,
                   ec);
  ctx->use_certificate_chain_file(f.cert_file, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("TLS certificate ", f.cert_file, ": ", ec.message()));
  }
  ctx->use_private_key_file(f.key_file, ssl::context::pem, ec);
  if (ec) {
    return absl::InvalidArgumentError(absl::StrCat("TLS key ", f.key_file, ": ", ec.message()));
  }
  if (!SSL_CTX_check_private_key(ctx->native_handle())) {
    return absl::InvalidArgumentError(absl::StrCat("TLS key ", f.key_file,
                                                   " does not match the certificate ",
                                                   f.cert_file));
  }
  static const unsigned char kSessionContext[] = "batchd";
  SSL_CTX_set_session_id_context(ctx->native_handle(), kSessionContext, sizeof(kSessionContext) - 1);
  if (!f.client_ca_file.empty()) {
    ctx->load_verify_file(f.client_ca_file, ec);
    if (ec) {
      return absl::InvalidArgumentError(
          absl::StrCat("client CA ", f.client_ca_file, ": ", ec.message()));
    }
    if (STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(f.client_ca_file.c_str())) {
      SSL_CTX_set_client_CA_list(ctx->native_handle(), names);
    }
    // Request a certificate; accept the handshake whatever it is: the
    // verification result decides whether the request gets a peer_cert.
    ctx->set_verify_mode(ssl::verify_peer);
    ctx->set_verify_callback([](bool, ssl::verify_context&) { return true; });
  }
  return ctx;
}

}  // namespace

absl::StatusOr<int> HttpServer::Start() {
  Impl& i = *impl_;
  if (i.opts.tls) {
    auto ctx = MakeTlsContext(*i.opts.tls);
    if (!ctx.ok()) return ctx.status();
    i.tls = std::move(*ctx);
  }
  beast::error_code ec;
  auto addr = net::ip::make_address(i.opts.address, ec);
  if (ec) return absl::InvalidArgumentError("bad listen address: " + i.opts.address);
  i.ioc = std::make_unique<net::io_context>(std::max(1, i.opts.io_threads));
  tcp::endpoint ep{addr, static_cast<unsigned short>(i.opts.port)};
  i.acceptor = std::make_unique<tcp::acceptor>(net::make_strand(*i.ioc));
  i.accept_retry = std::make_unique<net::steady_timer>(i.acceptor->get_executor());
  i.acceptor->open(ep.protocol(), ec);
  if (!ec) i.acceptor->set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) i.acceptor->bind(ep, ec);
  if (!ec) i.acceptor->listen(4096, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("listen on ", i.opts.address, ":", i.opts.port, ": ", ec.message()));
  }
  int port = i.acceptor->local_endpoint().port();
  auto cap = [](int n) { return n > 0 ? n : 4096; };
  int max_workers = cap(i.opts.max_requests_inflight) + cap(i.opts.max_mutating_requests_inflight) +
                    cap(i.opts.max_long_running_requests) + 16;  // + exempt health checks
  i.pool = std::make_unique<WorkerPool>(max_workers, i.opts.worker_idle_exit,
                                        i.opts.can_start_thread);
  i.work.emplace(i.ioc->get_executor());
  i.Accept();
  for (int t = 0; t < std::max(1, i.opts.io_threads); ++t) {
    i.io_threads.emplace_back([ioc = i.ioc.get()] {
      SetThreadName("http-io");
      for (;;) {
        try {
          ioc->run();
          return;
        } catch (const std::exception& e) {
          BATCHD_LOG_ERROR("http: I/O thread: {}", e.what());
        }
      }
    });
  }
  return port;
}

namespace {

// The state of a server that left handlers running (Stop): they still use
// it, so it is never freed.
ABSL_CONST_INIT absl::Mutex g_kept_mu(absl::kConstInit);
std::vector<std::shared_ptr<HttpServer::Impl>>* g_kept ABSL_GUARDED_BY(g_kept_mu) = nullptr;

void KeepForever(std::shared_ptr<HttpServer::Impl> impl) {
  absl::MutexLock lock(&g_kept_mu);
  if (g_kept == nullptr) g_kept = new std::vector<std::shared_ptr<HttpServer::Impl>>();
  g_kept->push_back(std::move(impl));
}

}  // namespace

void HttpServer::Stop() {
  if (!impl_ || !impl_->ioc || impl_->stopping.exchange(true)) return;
  Impl& i = *impl_;
  using Handlers = Impl::Handlers;
  const absl::Time start = absl::Now();
  net::post(i.acceptor->get_executor(), [impl = impl_] {
    beast::error_code ec;
    impl->acceptor->close(ec);
    impl->accept_retry->cancel();
  });
  for (auto& s : i.LiveSessions()) s->CloseIfIdle();
  // Long-running requests end at once: ClientGone() is true and their
  // writes fail from now on. Those still running after a moment (blocked in
  // a write to a client that does not read) are cut off.
  if (!i.WaitHandlers(Handlers::kLongRunning, start + i.opts.long_running_grace)) {
    BATCHD_LOG_WARN("http: cutting long-running requests still running after {}: {}",
                    absl::FormatDuration(i.opts.long_running_grace),
                    i.DescribeHandlers(Handlers::kLongRunning));
    for (auto& s : i.LiveSessions()) s->Cut(/*long_running_only=*/true);
  }
  // The other in-flight requests get shutdown_grace to finish.
  if (!i.WaitHandlers(Handlers::kOthers, start + i.opts.shutdown_grace)) {
    BATCHD_LOG_WARN("http: cutting requests still running after {}: {}",
                    absl::FormatDuration(i.opts.shutdown_grace),
                    i.DescribeHandlers(Handlers::kOthers));
    for (auto& s : i.LiveSessions()) s->Cut(/*long_running_only=*/false);
  }
  // Cut off, a handler's writes fail; one that still does not return is
  // blocked elsewhere: leave it (and everything it may use) behind.
  const bool all_returned = i.WaitHandlers(Handlers::kAll, absl::Now() + i.opts.cut_grace);
  if (!all_returned) {
    std::string stuck = i.DescribeHandlers(Handlers::kAll);
    {
      absl::MutexLock lock(&i.active_mu);
      i.abandoned = static_cast<int>(i.running.size());
    }
    BATCHD_LOG_ERROR("http: stopping without requests that did not return {} after their "
                     "connections were cut: {}",
                     absl::FormatDuration(i.opts.cut_grace), stuck);
  }
  i.pool->Stop(/*detach=*/!all_returned);
  i.work.reset();
  i.ioc->stop();
  for (auto& t : i.io_threads) t.join();
  i.io_threads.clear();
  if (!all_returned) {
    KeepForever(impl_);
    return;
  }
  // Destroys the remaining sessions (and their sockets) while Impl lives.
  i.accept_retry.reset();
  i.acceptor.reset();
  i.ioc.reset();
}

HttpServerStats HttpServer::Stats() const {
  const Impl& i = *impl_;
  HttpServerStats s;
  s.connections = i.connections.load();
  s.inflight_readonly = i.inflight[static_cast<int>(RequestKind::kReadOnly)].load();
  s.inflight_mutating = i.inflight[static_cast<int>(RequestKind::kMutating)].load();
  s.inflight_long_running = i.inflight[static_cast<int>(RequestKind::kLongRunning)].load();
  s.worker_threads = i.pool ? i.pool->live() : 0;
  s.rejected_readonly = i.rejected[static_cast<int>(RequestKind::kReadOnly)].load();
  s.rejected_mutating = i.rejected[static_cast<int>(RequestKind::kMutating)].load();
  s.rejected_long_running = i.rejected[static_cast<int>(RequestKind::kLongRunning)].load();
  s.connections_refused = i.connections_refused.load();
  s.accept_errors = i.accept_errors.load();
  s.thread_start_failures = i.thread_start_failures.load();
  s.timeouts = i.timeouts.load();
  s.abandoned = i.abandoned.load();
  return s;
}

void HttpServer::AppendPrometheus(std::string* out) const {
  HttpServerStats s = Stats();
  absl::StrAppend(
      out,
      "# HELP apiserver_current_inflight_requests Maximal number of currently used inflight "
      "request limit of this apiserver per request kind in last second.\n"
      "# TYPE apiserver_current_inflight_requests gauge\n",
      "apiserver_current_inflight_requests{request_kind=\"readOnly\"} ", s.inflight_readonly,
      "\n", "apiserver_current_inflight_requests{request_kind=\"mutating\"} ",
      s.inflight_mutating, "\n",
      "# HELP apiserver_longrunning_requests Number of long-running requests in flight.\n"
      "# TYPE apiserver_longrunning_requests gauge\n",
      "apiserver_longrunning_requests ", s.inflight_long_running, "\n",
      "# HELP apiserver_dropped_requests_total Requests refused with 429 by the in-flight "
      "limits.\n"
      "# TYPE apiserver_dropped_requests_total counter\n",
      "apiserver_dropped_requests_total{request_kind=\"readOnly\"} ", s.rejected_readonly, "\n",
      "apiserver_dropped_requests_total{request_kind=\"mutating\"} ", s.rejected_mutating, "\n",
      "apiserver_dropped_requests_total{request_kind=\"longRunning\"} ", s.rejected_long_running,
      "\n",
      "# HELP batchd_http_connections Open HTTP connections.\n"
      "# TYPE batchd_http_connections gauge\n",
      "batchd_http_connections ", s.connections, "\n",
      "# HELP batchd_http_worker_threads Threads running request handlers.\n"
      "# TYPE batchd_http_worker_threads gauge\n",
      "batchd_http_worker_threads ", s.worker_threads, "\n",
      "# HELP batchd_http_connections_refused_total Connections closed at once (over "
      "--max-connections).\n"
      "# TYPE batchd_http_connections_refused_total counter\n",
      "batchd_http_connections_refused_total ", s.connections_refused, "\n",
      "# HELP batchd_http_accept_errors_total Failed accepts (EMFILE...).\n"
      "# TYPE batchd_http_accept_errors_total counter\n",
      "batchd_http_accept_errors_total ", s.accept_errors, "\n",
      "# HELP batchd_http_request_timeouts_total Requests answered 504 Timeout.\n"
      "# TYPE batchd_http_request_timeouts_total counter\n",
      "batchd_http_request_timeouts_total ", s.timeouts, "\n");
}

RawRequest ParseRawRequest(std::string_view wire, size_t max_header_bytes,
                           size_t max_body_bytes) {
  RawRequest out;
  http::request_parser<http::string_body> p;
  p.eager(true);
  p.header_limit(static_cast<uint32_t>(std::min<size_t>(max_header_bytes, UINT32_MAX)));
  p.body_limit(max_body_bytes);
  beast::error_code ec;
  while (!wire.empty() && !p.is_done()) {
    size_t n = p.put(net::buffer(wire.data(), wire.size()), ec);
    if (ec == http::error::need_more) {
      ec = {};
      if (n == 0) break;  // Needs bytes we do not have.
    }
    if (ec) {
      out.error_code = CodeForReadError(ec);
      if (out.error_code == 0) out.error_code = 400;
      return out;
    }
    wire.remove_prefix(n);
  }
  if (!p.is_done()) return out;  // Incomplete.
  out.complete = true;
  out.request = ToHttpRequest(p.get());
  return out;
}

}  // namespace batchd::apiserver
