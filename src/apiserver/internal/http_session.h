// One HTTP(S) connection of HttpServer (http_server.h), whatever its stream
// type (Session<Stream>): reading requests under the header, body and idle
// timeouts, the in-flight budgets and the per-request timeout, handing a
// request to the worker pool, and the ResponseWriter its handler writes
// through (ConnWriter); plus the wire helpers the parser shares with
// ParseRawRequest. Included by http_server.cc only (Boost.Beast).
#pragma once

#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "apiserver/http.h"
#include "apiserver/http_server.h"
#include "apiserver/internal/http_server_impl.h"
#include "common/logging.h"
#include "common/string_view.h"

namespace batchd::apiserver::internal {

namespace net = boost::asio;
namespace ssl = net::ssl;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

// A Kubernetes Status body for the answers the transport gives itself.
inline std::string StatusJson(int code, std::string_view reason, std::string_view message,
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

inline std::string TooManyRequestsBody() {
  return StatusJson(429, "TooManyRequests", "Too many requests, please try again later.",
                    R"({"retryAfterSeconds":1})");
}

inline HttpRequest ToHttpRequest(http::request<http::string_body>& req) {
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
inline int CodeForReadError(beast::error_code ec) {
  if (ec == http::error::body_limit) return 413;
  if (ec == http::error::header_limit) return 431;
  if (ec.category() == http::make_error_code(http::error::bad_target).category() &&
      ec != http::error::end_of_stream && ec != http::error::partial_message &&
      ec != http::error::need_more) {
    return 400;
  }
  return 0;
}

inline bool ExpectsContinue(beast::string_view v) {
  return absl::EqualsIgnoreCase(absl::string_view(v.data(), v.size()), "100-continue");
}

inline bool IsLoopback(const net::ip::address& a) {
  if (a.is_loopback()) return true;
  if (a.is_v6() && a.to_v6().is_v4_mapped()) {
    return net::ip::make_address_v4(net::ip::v4_mapped, a.to_v6()).is_loopback();
  }
  return false;
}

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
    if (kind != RequestKind::kLongRunning && timeout > absl::ZeroDuration()) r.timeout = timeout;
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

}  // namespace batchd::apiserver::internal
