// LazyVfs: a test-only SQLite VFS that, like the LazyFS file system etcd's
// robustness tests run on, can drop every write that was not synced: it
// passes all I/O to the default VFS, remembers the pre-image of each region
// written or truncated since a file's last xSync, and `DropUnsynced()` puts
// those pre-images back (newest first) and cuts each file to its size at the
// last sync — the state a power loss would leave. Call it at a simulated
// crash point, then end the process (_exit) without touching SQLite again.
//
// Thread-safety: thread-safe. Register once per process, before opening a
// database with `vfs_name()`.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace batchd::store::testing {

class LazyVfs {
 public:
  // Registers the VFS (not as the default); idempotent.
  static absl::Status Register();
  static const char* vfs_name() { return "batchd-lazy"; }
  // Reverts every unsynced write of every file opened through the VFS.
  static void DropUnsynced();
  // Unsynced bytes currently remembered (for tests of the VFS itself).
  static size_t UnsyncedRegions();
};

}  // namespace batchd::store::testing
