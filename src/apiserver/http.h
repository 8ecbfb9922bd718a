// The HTTP seam of the API server: a parsed request and a response writer
// that can send one whole response or stream chunks (watch, log follow).
// `HttpServer` (http_server.h) implements the writer over Boost.Beast; tests
// and fuzz targets use `BufferWriter`, so the request path runs without
// sockets.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"

namespace batchd::apiserver {

struct HttpRequest {
  std::string method;                         // "GET", "POST", ...
  std::string path;                           // Decoded path without the query.
  std::multimap<std::string, std::string> query;  // Decoded query parameters.
  std::map<std::string, std::string> headers; // Lower-case names.
  std::string body;
  std::string remote;                         // "ip:port", for logs.
  // Set when the client presented a certificate that verified against the client CA.
  struct PeerCertificate { std::string common_name; std::vector<std::string> organizations; };
  std::optional<PeerCertificate> peer_cert;
  bool loopback = false;  // The peer address is 127.0.0.0/8 or ::1.
  // The server answers 504 once this has passed since the request arrived
  // (its --request-timeout or the request's `timeout=`; long-running
  // requests: none), so a handler need not wait longer.
  absl::Duration timeout = absl::InfiniteDuration();

  std::string Header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? std::string() : it->second;
  }
  // The last value of a query parameter, or "".
  std::string Param(const std::string& name) const {
    auto range = query.equal_range(name);
    std::string v;
    for (auto it = range.first; it != range.second; ++it) v = it->second;
    return v;
  }
  bool HasParam(const std::string& name) const { return query.count(name) > 0; }
};

using HeaderList = std::vector<std::pair<std::string, std::string>>;

class ResponseWriter {
 public:
  virtual ~ResponseWriter() = default;
  // Sends a complete response.
  virtual void Send(int code, const HeaderList& headers, std::string body) = 0;
  // Starts a chunked response; then WriteChunk any number of times and End.
  // Each returns false once the client is gone.
  virtual bool StartStream(int code, const HeaderList& headers) = 0;
  virtual bool WriteChunk(std::string_view data) = 0;
  virtual void EndStream() = 0;
  // True when the peer has closed the connection (checked while idle).
  virtual bool ClientGone() = 0;
};

// Collects a response in memory.
class BufferWriter : public ResponseWriter {
 public:
  void Send(int code, const HeaderList& headers, std::string body) override {
    code_ = code;
    headers_ = headers;
    body_ = std::move(body);
  }
  bool StartStream(int code, const HeaderList& headers) override {
    code_ = code;
    headers_ = headers;
    return true;
  }
  bool WriteChunk(std::string_view data) override {
    body_.append(data);
    return ++chunks_ < max_chunks_;
  }
  void EndStream() override {}
  bool ClientGone() override { return chunks_ >= max_chunks_; }

  void set_max_chunks(int n) { max_chunks_ = n; }
  int code() const { return code_; }
  const std::string& body() const { return body_; }
  const HeaderList& headers() const { return headers_; }
  std::string Header(const std::string& name) const {
    for (const auto& [k, v] : headers_) {
      if (k == name) return v;
    }
    return "";
  }

 private:
  int code_ = 0;
  HeaderList headers_;
  std::string body_;
  int chunks_ = 0;
  int max_chunks_ = 1 << 30;
};

// Percent-decodes `s` (and '+' as space when `form` is true).
std::string UrlDecode(std::string_view s, bool form);
// Splits "a=b&c=d" into decoded pairs.
std::multimap<std::string, std::string> ParseQuery(std::string_view q);

}  // namespace batchd::apiserver
