// The API server over an in-memory registry on a fake clock, as the HTTP fuzz
// targets drive it (watches end at once: max_watch is zero).
#pragma once

#include <cstdlib>
#include <memory>

#include "absl/time/time.h"
#include "api/kind.h"
#include "apiserver/apiserver.h"
#include "common/testing/fake_clock.h"
#include "registry/registry.h"
#include "store/memory/memory_store.h"

namespace batchd::fuzz {

struct ApiServerEnv {
  FakeClock clock;
  store::MemoryStore store;
  std::unique_ptr<registry::Registry> registry;
  std::unique_ptr<apiserver::ApiServer> server;

  ApiServerEnv() {
    registry = std::make_unique<registry::Registry>(store, api::BuiltinScheme(), clock);
    if (!registry->Start().ok()) std::abort();
    apiserver::ApiServerOptions opts;
    opts.max_watch = absl::ZeroDuration();
    server = std::make_unique<apiserver::ApiServer>(*registry, clock, opts);
  }
  ~ApiServerEnv() {
    server.reset();
    registry.reset();
  }
};

}  // namespace batchd::fuzz
