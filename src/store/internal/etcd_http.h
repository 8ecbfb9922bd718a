// EtcdHttp: the HTTP/1.1 transport of EtcdStore to etcd's v3 JSON gateway
// (POST /v3/kv/range, /v3/kv/txn, /v3/kv/compaction, /v3/watch), over the
// shared client connections of common/http_transport.h (keep-alive
// connections pooled per member). A request goes to the member that last
// answered and moves to the next one when it cannot be reached (connect
// failure, or a reused connection closed before it was written). A request
// that was sent and then lost its answer is not repeated (a write may have
// been applied): it fails Unavailable.
//
// Thread-safety: Post may be called concurrently; a Stream is used by one
// thread, except Stop, which any thread may call.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace batchd::store::internal {

struct EtcdHttpOptions {
  // "http://host:port" or "https://host:port", one per member.
  std::vector<std::string> servers;
  // TLS (https servers): CA file, client certificate and key files (PEM).
  std::string ca_file, cert_file, key_file;
  absl::Duration connect_timeout = absl::Seconds(5);
  absl::Duration request_timeout = absl::Seconds(15);
  // The largest response body accepted.
  size_t max_response_bytes = size_t{256} << 20;
  int max_idle_per_member = 16;
};

struct EtcdHttpResponse {
  int code = 0;
  std::string body;
};

// A streaming POST (a watch): `on_line` gets each newline-terminated line of
// the answer's body, in order, on the thread that calls Run.
class EtcdHttpStream {
 public:
  virtual ~EtcdHttpStream() = default;
  // Reads until the stream ends, `on_line` returns false, or Stop is
  // called. Returns the reason it ended (OK after Stop or false).
  virtual absl::Status Run(const std::function<bool(const std::string&)>& on_line) = 0;
  // Makes Run return soon; thread-safe.
  virtual void Stop() = 0;
};

class EtcdHttp {
 public:
  static absl::StatusOr<std::unique_ptr<EtcdHttp>> Create(EtcdHttpOptions opts);
  ~EtcdHttp();

  // POSTs `body` (JSON) to `path` and returns the answer (any HTTP code).
  // Unavailable when no member could be reached or the answer was lost;
  // DeadlineExceeded after request_timeout.
  absl::StatusOr<EtcdHttpResponse> Post(const std::string& path, const std::string& body);

  // Opens a stream on the next member in turn (each call tries the members
  // from the one after the last stream's, so a dead member is left).
  absl::StatusOr<std::unique_ptr<EtcdHttpStream>> OpenStream(const std::string& path,
                                                     const std::string& body);

  struct Impl;

 private:
  explicit EtcdHttp(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace batchd::store::internal
