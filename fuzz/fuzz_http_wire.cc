// Fuzzes the HTTP path from the raw wire: bytes as a client sends them
// (request line, headers, chunked or sized body; truncated, oversized,
// with invalid UTF-8, wrong content types, absurd numbers) go through the
// server's own parser (ParseRawRequest, the limits `batchd server` uses),
// its request classification and `timeout=` parsing, then, when complete,
// ApiServer::Handle on an in-process server over a MemoryStore. A malformed
// request must get a 4xx (or need more bytes), never a crash, never a 5xx.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "api/kind.h"
#include "apiserver/apiserver.h"
#include "apiserver/http.h"
#include "api_server_env.h"
#include "apiserver/http_server.h"
#include "common/testing/fake_clock.h"
#include "registry/registry.h"
#include "store/memory/memory_store.h"

namespace {

namespace as = batchd::apiserver;

using Env = batchd::fuzz::ApiServerEnv;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static std::unique_ptr<Env> env;
  static int uses = 0;
  if (!env || ++uses % 500 == 0) {
    env.reset();
    env = std::make_unique<Env>();
  }
  const as::HttpServerOptions limits;
  as::RawRequest raw = as::ParseRawRequest(
      std::string_view(reinterpret_cast<const char*>(data), size), limits.max_header_bytes,
      limits.max_body_bytes);
  if (raw.error_code != 0) {
    if (raw.error_code < 400 || raw.error_code > 499) {
      std::fprintf(stderr, "fuzz_http_wire: parser answered %d\n", raw.error_code);
      std::abort();
    }
    return 0;
  }
  if (!raw.complete) return 0;
  const as::HttpRequest& req = raw.request;
  (void)as::ClassifyRequest(req);
  if (req.HasParam("timeout")) (void)as::ParseGoDuration(req.Param("timeout"));
  as::BufferWriter w;
  w.set_max_chunks(4);
  env->server->Handle(req, w);
  if (w.code() < 100 || w.code() > 599) {
    std::fprintf(stderr, "fuzz_http_wire: %s %s answered with status %d\n", req.method.c_str(),
                 req.path.c_str(), w.code());
    std::abort();
  }
  if (w.code() >= 500) {
    std::fprintf(stderr, "fuzz_http_wire: %s %s answered %d: %s\n", req.method.c_str(),
                 req.path.c_str(), w.code(), w.body().substr(0, 300).c_str());
    std::abort();
  }
  return 0;
}
