#include "apiserver/http_server.h"

#include <poll.h>
#include <sys/socket.h>

#include <set>
#include <thread>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/logging.h"
#include "common/thread_name.h"

namespace batchd::apiserver {

namespace net = boost::asio;
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

namespace {

class BeastWriter : public ResponseWriter {
 public:
  BeastWriter(tcp::socket& sock, bool keep_alive, unsigned version)
      : sock_(sock), keep_alive_(keep_alive), version_(version) {}

  void Send(int code, const HeaderList& headers, std::string body) override {
    http::response<http::string_body> res{static_cast<http::status>(code), version_};
    for (const auto& [k, v] : headers) res.set(k, v);
    res.keep_alive(keep_alive_);
    res.body() = std::move(body);
    res.prepare_payload();
    beast::error_code ec;
    http::write(sock_, res, ec);
    if (ec) failed_ = true;
    sent_ = true;
  }

  bool StartStream(int code, const HeaderList& headers) override {
    http::response<http::empty_body> res{static_cast<http::status>(code), version_};
    for (const auto& [k, v] : headers) res.set(k, v);
    res.keep_alive(keep_alive_);
    res.chunked(true);
    http::response_serializer<http::empty_body> sr{res};
    beast::error_code ec;
    http::write_header(sock_, sr, ec);
    streamed_ = sent_ = true;
    if (ec) failed_ = true;
    return !failed_;
  }

  bool WriteChunk(std::string_view data) override {
    if (failed_) return false;
    if (data.empty()) return true;  // An empty chunk would end the stream.
    beast::error_code ec;
    net::write(sock_, http::make_chunk(net::buffer(data.data(), data.size())), ec);
    if (ec) failed_ = true;
    return !failed_;
  }

  void EndStream() override {
    if (failed_) return;
    beast::error_code ec;
    net::write(sock_, http::make_chunk_last(), ec);
    if (ec) failed_ = true;
  }

  bool ClientGone() override {
    if (failed_) return true;
    pollfd p{sock_.native_handle(), POLLIN | POLLRDHUP, 0};
    if (::poll(&p, 1, 0) <= 0) return false;
    if (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) return true;
    if (p.revents & POLLIN) {
      char c;
      ssize_t n = ::recv(sock_.native_handle(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
      return n == 0;
    }
    return false;
  }

  bool failed() const { return failed_; }
  bool sent() const { return sent_; }

 private:
  tcp::socket& sock_;
  bool keep_alive_;
  unsigned version_;
  bool failed_ = false;
  bool sent_ = false;
  bool streamed_ = false;
};

void SendSimple(tcp::socket& sock, int code, unsigned version, const std::string& reason,
                const std::string& message) {
  std::string body = absl::StrCat(
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":)",
      "\"", message, "\",\"reason\":\"", reason, "\",\"code\":", code, "}");
  BeastWriter w(sock, false, version);
  w.Send(code, {{"Content-Type", "application/json"}}, body);
}

}  // namespace

struct HttpServer::Impl {
  HttpServerOptions opts;
  HttpHandler handler;
  net::io_context ioc;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::thread accept_thread;
  std::atomic<bool> stopping{false};
  absl::Mutex mu;
  absl::CondVar cv;
  std::set<int> conns ABSL_GUARDED_BY(mu);  // Native handles of live connections.
  int active ABSL_GUARDED_BY(mu) = 0;

  void Serve(tcp::socket sock);
};

HttpServer::HttpServer(HttpServerOptions opts, HttpHandler handler)
    : impl_(std::make_unique<Impl>()) {
  impl_->opts = std::move(opts);
  impl_->handler = std::move(handler);
}

HttpServer::~HttpServer() { Stop(); }

absl::StatusOr<int> HttpServer::Start() {
  beast::error_code ec;
  auto addr = net::ip::make_address(impl_->opts.address, ec);
  if (ec) return absl::InvalidArgumentError("bad listen address: " + impl_->opts.address);
  tcp::endpoint ep{addr, static_cast<unsigned short>(impl_->opts.port)};
  impl_->acceptor = std::make_unique<tcp::acceptor>(impl_->ioc);
  impl_->acceptor->open(ep.protocol(), ec);
  if (!ec) impl_->acceptor->set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) impl_->acceptor->bind(ep, ec);
  if (!ec) impl_->acceptor->listen(1024, ec);
  if (ec) {
    return absl::UnavailableError(absl::StrCat("listen on ", impl_->opts.address, ":",
                                               impl_->opts.port, ": ", ec.message()));
  }
  int port = impl_->acceptor->local_endpoint().port();
  impl_->accept_thread = std::thread([impl = impl_.get()] {
    SetThreadName("http-accept");
    while (!impl->stopping) {
      beast::error_code aec;
      tcp::socket sock(impl->ioc);
      impl->acceptor->accept(sock, aec);
      if (aec) {
        if (impl->stopping) break;
        continue;
      }
      absl::MutexLock lock(&impl->mu);
      ++impl->active;
      impl->conns.insert(sock.native_handle());
      std::thread([impl, s = std::move(sock)]() mutable {
        SetThreadName("http-conn");
        impl->Serve(std::move(s));
      }).detach();
    }
  });
  return port;
}

void HttpServer::Impl::Serve(tcp::socket sock) {
  int fd = sock.native_handle();
  beast::error_code ec;
  sock.set_option(tcp::no_delay(true), ec);
  timeval tv{60, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  std::string remote;
  bool loopback = false;
  auto rep = sock.remote_endpoint(ec);
  if (!ec) {
    remote = absl::StrCat(rep.address().to_string(), ":", rep.port());
    // A v4-mapped ::ffff:127.x.y.z peer is loopback too.
    loopback = rep.address().is_loopback() ||
               (rep.address().is_v6() && rep.address().to_v6().is_v4_mapped() &&
                net::ip::make_address_v4(net::ip::v4_mapped, rep.address().to_v6()).is_loopback());
  }
  beast::flat_buffer buf;
  while (!stopping) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(opts.max_body_bytes);
    parser.header_limit(64 * 1024);
    http::read(sock, buf, parser, ec);
    if (ec == http::error::body_limit) {
      SendSimple(sock, 413, 11, "RequestEntityTooLarge",
                 "the request body is larger than the limit");
      break;
    }
    if (ec) {
      if (ec != http::error::end_of_stream && ec != net::error::connection_reset &&
          ec != net::error::eof && !stopping) {
        if (ec == http::error::header_limit) {
          SendSimple(sock, 431, 11, "BadRequest", "request headers too large");
        } else if (ec.category() == beast::http::make_error_code(http::error::bad_target).category()) {
          SendSimple(sock, 400, 11, "BadRequest", "malformed HTTP request");
        }
      }
      break;
    }
    auto& req = parser.get();
    HttpRequest r;
    r.method = std::string(req.method_string());
    std::string_view target(req.target().data(), req.target().size());
    size_t q = target.find('?');
    r.path = UrlDecode(target.substr(0, q), false);
    if (q != std::string_view::npos) r.query = ParseQuery(target.substr(q + 1));
    for (const auto& f : req) {
      std::string name(f.name_string());
      for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      std::string value(f.value());
      auto [it, inserted] = r.headers.emplace(name, value);
      if (!inserted) it->second += "," + value;
    }
    r.body = std::move(req.body());
    r.remote = remote;
    r.loopback = loopback;
    BeastWriter w(sock, req.keep_alive(), req.version());
    handler(r, w);
    if (!w.sent()) w.Send(500, {{"Content-Type", "text/plain"}}, "no response");
    if (w.failed() || !req.keep_alive()) break;
  }
  sock.shutdown(tcp::socket::shutdown_both, ec);
  sock.close(ec);
  absl::MutexLock lock(&mu);
  conns.erase(fd);
  --active;
  cv.SignalAll();
}

void HttpServer::Stop() {
  if (!impl_ || impl_->stopping.exchange(true)) return;
  if (impl_->acceptor) ::shutdown(impl_->acceptor->native_handle(), SHUT_RDWR);
  if (impl_->accept_thread.joinable()) impl_->accept_thread.join();
  absl::MutexLock lock(&impl_->mu);
  for (int fd : impl_->conns) ::shutdown(fd, SHUT_RDWR);
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  while (impl_->active != 0 && !impl_->cv.WaitWithDeadline(&impl_->mu, deadline)) {
  }
}

}  // namespace batchd::apiserver
