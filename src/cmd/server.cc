#include "cmd/server.h"

#include <filesystem>

#include "absl/strings/numbers.h"
#include "api/kind.h"
#include "apiserver/apiserver.h"
#include "apiserver/http_server.h"
#include "common/clock.h"
#include "common/logging.h"
#include "registry/registry.h"
#include "store/memory/memory_store.h"
#include "store/observable_store.h"
#include "store/sqlite/sqlite_store.h"

namespace batchd::cmd {

struct Server::Impl {
  ServerOptions opts;
  RealClock clock;
  std::unique_ptr<store::Store> backend;
  std::unique_ptr<store::ObservableStore> store;
  std::unique_ptr<registry::Registry> registry;
  std::unique_ptr<apiserver::ApiServer> api;
  std::unique_ptr<apiserver::HttpServer> http;
};

Server::Server() : impl_(std::make_unique<Impl>()) {}
Server::~Server() { Stop(); }

absl::StatusOr<std::unique_ptr<Server>> Server::Create(const ServerOptions& opts) {
  std::unique_ptr<Server> s(new Server());
  Impl& i = *s->impl_;
  i.opts = opts;
  if (opts.store == "memory") {
    i.backend = std::make_unique<store::MemoryStore>();
  } else if (opts.store == "sqlite") {
    std::error_code ec;
    std::filesystem::create_directories(opts.data_dir, ec);
    if (ec) return absl::InvalidArgumentError("cannot create data dir " + opts.data_dir);
    store::SqliteOptions so;
    so.path = (std::filesystem::path(opts.data_dir) / "state.db").string();
    if (opts.sync == "normal") {
      so.sync = store::SqliteSync::kNormal;
    } else if (opts.sync == "full") {
      so.sync = store::SqliteSync::kFull;
    } else {
      return absl::InvalidArgumentError("--store-sync must be full or normal");
    }
    auto st = store::SqliteStore::Open(so);
    if (!st.ok()) return st.status();
    i.backend = std::move(*st);
  } else {
    return absl::InvalidArgumentError("unknown store " + opts.store);
  }
  i.store = std::make_unique<store::ObservableStore>(*i.backend, i.clock);
  i.registry = std::make_unique<registry::Registry>(*i.store, api::BuiltinScheme(), i.clock);
  if (auto st = i.registry->Start(); !st.ok()) return st;
  apiserver::ApiServerOptions ao;
  store::ObservableStore* obs = i.store.get();
  ao.extra_metrics = [obs](std::string* out) { obs->AppendPrometheus(out); };
  i.api = std::make_unique<apiserver::ApiServer>(*i.registry, i.clock, ao);
  return s;
}

absl::StatusOr<int> Server::Start() {
  Impl& i = *impl_;
  apiserver::HttpServerOptions ho;
  auto colon = i.opts.listen.rfind(':');
  if (colon == std::string::npos || !absl::SimpleAtoi(i.opts.listen.substr(colon + 1), &ho.port)) {
    return absl::InvalidArgumentError("--listen must be HOST:PORT");
  }
  ho.address = i.opts.listen.substr(0, colon);
  apiserver::ApiServer* api = i.api.get();
  i.http = std::make_unique<apiserver::HttpServer>(
      ho, [api](const apiserver::HttpRequest& req, apiserver::ResponseWriter& w) {
        api->Handle(req, w);
      });
  return i.http->Start();
}

void Server::Stop() {
  if (impl_ && impl_->http) impl_->http->Stop();
}

}  // namespace batchd::cmd
