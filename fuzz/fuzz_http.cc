// Fuzzes the whole request path: ApiServer::Handle on an in-process server
// over a MemoryStore. The input is split into lines:
//   METHOD \n TARGET(path?query) \n CONTENT-TYPE \n ACCEPT \n BODY...
// Watches end at once (max_watch = 0) and streamed responses are cut after a
// few chunks. The server is rebuilt every few hundred inputs so state stays
// small. No request may crash the server, and every response has a status.
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
#include "common/testing/fake_clock.h"
#include "registry/registry.h"
#include "store/memory/memory_store.h"

namespace {

namespace as = batchd::apiserver;

using Env = batchd::fuzz::ApiServerEnv;

// Takes the next '\n'-terminated line off `in`.
std::string_view NextLine(std::string_view& in) {
  size_t nl = in.find('\n');
  std::string_view line = in.substr(0, nl);
  in = nl == std::string_view::npos ? std::string_view() : in.substr(nl + 1);
  return line;
}

as::HttpRequest BuildRequest(std::string_view in) {
  static const char* const kMethods[] = {"GET", "POST", "PUT", "PATCH", "DELETE"};
  as::HttpRequest r;
  std::string_view m = NextLine(in);
  if (m.size() == 1) {
    r.method = kMethods[static_cast<unsigned char>(m[0]) % 5];
  } else {
    r.method = std::string(m);
  }
  std::string_view target = NextLine(in);
  size_t q = target.find('?');
  r.path = as::UrlDecode(target.substr(0, q), /*form=*/false);
  if (q != std::string_view::npos) r.query = as::ParseQuery(target.substr(q + 1));
  std::string_view ct = NextLine(in);
  if (!ct.empty()) r.headers["content-type"] = std::string(ct);
  std::string_view accept = NextLine(in);
  if (!accept.empty()) r.headers["accept"] = std::string(accept);
  r.body = std::string(in);
  r.remote = "127.0.0.1:1";
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static std::unique_ptr<Env> env;
  static int uses = 0;
  if (!env || ++uses % 500 == 0) {
    env.reset();
    env = std::make_unique<Env>();
  }
  as::HttpRequest req =
      BuildRequest(std::string_view(reinterpret_cast<const char*>(data), size));
  as::BufferWriter w;
  w.set_max_chunks(4);
  env->server->Handle(req, w);
  if (w.code() < 100 || w.code() > 599) {
    std::fprintf(stderr, "fuzz_http: %s %s answered with status %d\n", req.method.c_str(),
                 req.path.c_str(), w.code());
    std::abort();
  }
  return 0;
}
