// SetThreadName: names the calling thread (as `top -H`, `perf` and gdb show
// it), truncated to the kernel's 15 characters. Profiles of the server are
// read per thread role: controller workers by controller, informers by
// resource, HTTP connections, the clock.
#pragma once

#include <pthread.h>

#include <string>
#include <string_view>

namespace batchd {

inline void SetThreadName(std::string_view name) {
  std::string n(name.substr(0, 15));
  pthread_setname_np(pthread_self(), n.c_str());
}

}  // namespace batchd
