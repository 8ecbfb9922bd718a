// HttpServer's shared state (http_server.h): options, the in-flight budgets
// and counters, the handlers running (what Stop waits for), the live
// connections, the worker pool and the Asio objects. Included by the
// connection code (http_session.h) and http_server.cc only: it brings in
// Boost.Asio.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core/error.hpp>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "apiserver/http_server.h"
#include "apiserver/internal/http_worker_pool.h"

namespace batchd::apiserver {
namespace internal {

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

}  // namespace internal

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
  std::unordered_map<internal::SessionControl*, std::weak_ptr<internal::SessionControl>> sessions
      ABSL_GUARDED_BY(sessions_mu);

  std::unique_ptr<internal::WorkerPool> pool;
  std::unique_ptr<boost::asio::ssl::context> tls;
  std::unique_ptr<boost::asio::io_context> ioc;
  // Keeps the I/O threads running while handlers may still write (after
  // the acceptor closed, no operation may be pending).
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>>
      work;
  std::unique_ptr<boost::asio::ip::tcp::acceptor> acceptor;
  std::unique_ptr<boost::asio::steady_timer> accept_retry;
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

  void Register(const std::shared_ptr<internal::SessionControl>& s) {
    absl::MutexLock lock(&sessions_mu);
    sessions.emplace(s.get(), s);
  }
  void Unregister(internal::SessionControl* s) {
    absl::MutexLock lock(&sessions_mu);
    sessions.erase(s);
  }
  std::vector<std::shared_ptr<internal::SessionControl>> LiveSessions() {
    std::vector<std::shared_ptr<internal::SessionControl>> out;
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
  void OnAccept(boost::beast::error_code ec, boost::asio::ip::tcp::socket sock);
};

}  // namespace batchd::apiserver
