#include "store/testing/lazy_vfs.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace batchd::store::testing {
namespace {

struct Region {
  sqlite3_int64 offset;
  std::string old_bytes;  // what the file held there before the write
};

// Per path: the file's size at its last sync (-1: unknown yet) and the
// pre-images written since.
struct FileLog {
  sqlite3_int64 synced_size = -1;
  std::vector<Region> undo;
};

absl::Mutex g_mu(absl::kConstInit);
std::map<std::string, FileLog>* g_files ABSL_GUARDED_BY(g_mu) = new std::map<std::string, FileLog>();
// Set once by Register (under g_mu), read by the VFS methods afterwards.
sqlite3_vfs* g_base = nullptr;
sqlite3_vfs g_vfs;

struct LazyFile {
  sqlite3_file base;  // pMethods: ours
  std::string* path;
  sqlite3_file* real() { return reinterpret_cast<sqlite3_file*>(this + 1); }
};

LazyFile* L(sqlite3_file* f) { return reinterpret_cast<LazyFile*>(f); }

sqlite3_int64 SizeOf(sqlite3_file* real) {
  sqlite3_int64 n = 0;
  if (real->pMethods->xFileSize(real, &n) != SQLITE_OK) return 0;
  return n;
}

// Saves [offset, offset+n) as it is now (the part inside the file).
void SavePreImage(LazyFile* f, sqlite3_int64 offset, sqlite3_int64 n) {
  sqlite3_file* real = f->real();
  const sqlite3_int64 size = SizeOf(real);
  absl::MutexLock lock(&g_mu);
  FileLog& log = (*g_files)[*f->path];
  if (log.synced_size < 0) log.synced_size = size;
  if (offset >= size) return;
  const sqlite3_int64 len = std::min(n, size - offset);
  Region r{offset, std::string(static_cast<size_t>(len), '\0')};
  if (real->pMethods->xRead(real, r.old_bytes.data(), static_cast<int>(len), offset) != SQLITE_OK) {
    return;
  }
  log.undo.push_back(std::move(r));
}

int Close(sqlite3_file* f) {
  int rc = L(f)->real()->pMethods->xClose(L(f)->real());
  delete L(f)->path;
  return rc;
}
int Read(sqlite3_file* f, void* buf, int n, sqlite3_int64 off) {
  return L(f)->real()->pMethods->xRead(L(f)->real(), buf, n, off);
}
int Write(sqlite3_file* f, const void* buf, int n, sqlite3_int64 off) {
  SavePreImage(L(f), off, n);
  return L(f)->real()->pMethods->xWrite(L(f)->real(), buf, n, off);
}
int Truncate(sqlite3_file* f, sqlite3_int64 size) {
  const sqlite3_int64 cur = SizeOf(L(f)->real());
  if (size < cur) SavePreImage(L(f), size, cur - size);
  return L(f)->real()->pMethods->xTruncate(L(f)->real(), size);
}
int Sync(sqlite3_file* f, int flags) {
  int rc = L(f)->real()->pMethods->xSync(L(f)->real(), flags);
  if (rc == SQLITE_OK) {
    const sqlite3_int64 size = SizeOf(L(f)->real());
    absl::MutexLock lock(&g_mu);
    FileLog& log = (*g_files)[*L(f)->path];
    log.undo.clear();
    log.synced_size = size;
  }
  return rc;
}
int FileSize(sqlite3_file* f, sqlite3_int64* n) {
  return L(f)->real()->pMethods->xFileSize(L(f)->real(), n);
}
int Lock(sqlite3_file* f, int l) { return L(f)->real()->pMethods->xLock(L(f)->real(), l); }
int Unlock(sqlite3_file* f, int l) { return L(f)->real()->pMethods->xUnlock(L(f)->real(), l); }
int CheckReservedLock(sqlite3_file* f, int* out) {
  return L(f)->real()->pMethods->xCheckReservedLock(L(f)->real(), out);
}
int FileControl(sqlite3_file* f, int op, void* arg) {
  return L(f)->real()->pMethods->xFileControl(L(f)->real(), op, arg);
}
int SectorSize(sqlite3_file* f) { return L(f)->real()->pMethods->xSectorSize(L(f)->real()); }
int DeviceCharacteristics(sqlite3_file* f) {
  // Never claim atomic or safe-append writes: SQLite then journals fully.
  return 0;
}
int ShmMap(sqlite3_file* f, int pg, int sz, int extend, void volatile** p) {
  return L(f)->real()->pMethods->xShmMap(L(f)->real(), pg, sz, extend, p);
}
int ShmLock(sqlite3_file* f, int off, int n, int flags) {
  return L(f)->real()->pMethods->xShmLock(L(f)->real(), off, n, flags);
}
void ShmBarrier(sqlite3_file* f) { L(f)->real()->pMethods->xShmBarrier(L(f)->real()); }
int ShmUnmap(sqlite3_file* f, int del) {
  return L(f)->real()->pMethods->xShmUnmap(L(f)->real(), del);
}
// No memory-mapped reads: every byte read goes through xRead, consistent
// with the pre-images.
int Fetch(sqlite3_file*, sqlite3_int64, int, void** p) {
  *p = nullptr;
  return SQLITE_OK;
}
int Unfetch(sqlite3_file*, sqlite3_int64, void*) { return SQLITE_OK; }

const sqlite3_io_methods kMethods = {
    3,        Close,   Read,     Write,       Truncate,         Sync,
    FileSize, Lock,    Unlock,   CheckReservedLock, FileControl, SectorSize,
    DeviceCharacteristics, ShmMap, ShmLock, ShmBarrier, ShmUnmap, Fetch, Unfetch};

int Open(sqlite3_vfs*, const char* name, sqlite3_file* f, int flags, int* out_flags) {
  LazyFile* lf = L(f);
  lf->base.pMethods = nullptr;
  int rc = g_base->xOpen(g_base, name, lf->real(), flags, out_flags);
  if (rc != SQLITE_OK) return rc;
  lf->path = new std::string(name ? name : "");
  lf->base.pMethods = &kMethods;
  return SQLITE_OK;
}
int Delete(sqlite3_vfs*, const char* name, int sync_dir) {
  {
    absl::MutexLock lock(&g_mu);
    g_files->erase(name);
  }
  return g_base->xDelete(g_base, name, sync_dir);
}
int Access(sqlite3_vfs*, const char* name, int flags, int* out) {
  return g_base->xAccess(g_base, name, flags, out);
}
int FullPathname(sqlite3_vfs*, const char* name, int n, char* out) {
  return g_base->xFullPathname(g_base, name, n, out);
}
void* DlOpen(sqlite3_vfs*, const char* f) { return g_base->xDlOpen(g_base, f); }
void DlError(sqlite3_vfs*, int n, char* msg) { g_base->xDlError(g_base, n, msg); }
void (*DlSym(sqlite3_vfs*, void* h, const char* s))(void) { return g_base->xDlSym(g_base, h, s); }
void DlClose(sqlite3_vfs*, void* h) { g_base->xDlClose(g_base, h); }
int Randomness(sqlite3_vfs*, int n, char* out) { return g_base->xRandomness(g_base, n, out); }
int Sleep(sqlite3_vfs*, int us) { return g_base->xSleep(g_base, us); }
int CurrentTime(sqlite3_vfs*, double* t) { return g_base->xCurrentTime(g_base, t); }
int GetLastError(sqlite3_vfs*, int n, char* s) { return g_base->xGetLastError(g_base, n, s); }
int CurrentTimeInt64(sqlite3_vfs*, sqlite3_int64* t) {
  return g_base->xCurrentTimeInt64(g_base, t);
}

}  // namespace

absl::Status LazyVfs::Register() {
  absl::MutexLock lock(&g_mu);
  if (g_base != nullptr) return absl::OkStatus();
  g_base = sqlite3_vfs_find(nullptr);
  if (g_base == nullptr) return absl::InternalError("no default SQLite VFS");
  std::memset(&g_vfs, 0, sizeof(g_vfs));
  g_vfs.iVersion = 2;
  g_vfs.szOsFile = static_cast<int>(sizeof(LazyFile)) + g_base->szOsFile;
  g_vfs.mxPathname = g_base->mxPathname;
  g_vfs.zName = vfs_name();
  g_vfs.xOpen = Open;
  g_vfs.xDelete = Delete;
  g_vfs.xAccess = Access;
  g_vfs.xFullPathname = FullPathname;
  g_vfs.xDlOpen = DlOpen;
  g_vfs.xDlError = DlError;
  g_vfs.xDlSym = DlSym;
  g_vfs.xDlClose = DlClose;
  g_vfs.xRandomness = Randomness;
  g_vfs.xSleep = Sleep;
  g_vfs.xCurrentTime = CurrentTime;
  g_vfs.xGetLastError = GetLastError;
  g_vfs.xCurrentTimeInt64 = CurrentTimeInt64;
  if (sqlite3_vfs_register(&g_vfs, /*makeDflt=*/0) != SQLITE_OK) {
    g_base = nullptr;
    return absl::InternalError("cannot register the lazy VFS");
  }
  return absl::OkStatus();
}

void LazyVfs::DropUnsynced() {
  absl::MutexLock lock(&g_mu);
  for (auto& [path, log] : *g_files) {
    int fd = ::open(path.c_str(), O_WRONLY);
    if (fd < 0) continue;
    for (auto it = log.undo.rbegin(); it != log.undo.rend(); ++it) {
      ssize_t w = ::pwrite(fd, it->old_bytes.data(), it->old_bytes.size(), it->offset);
      (void)w;
    }
    if (log.synced_size >= 0) {
      int r = ::ftruncate(fd, log.synced_size);
      (void)r;
    }
    ::close(fd);
    log.undo.clear();
  }
}

size_t LazyVfs::UnsyncedRegions() {
  absl::MutexLock lock(&g_mu);
  size_t n = 0;
  for (const auto& [path, log] : *g_files) n += log.undo.size();
  return n;
}

}  // namespace batchd::store::testing
