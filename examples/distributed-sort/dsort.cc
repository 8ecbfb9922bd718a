#include "dsort.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>

namespace dsort {
namespace {

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ULL;

uint64_t SplitMix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// MurmurHash3's 64-bit finalizer, a different bijection than SplitMix.
uint64_t Fmix(uint64_t k) {
  k ^= k >> 33;
  k *= 0xFF51AFD7ED558CCDULL;
  k ^= k >> 33;
  k *= 0xC4CEB9FE1A85EC53ULL;
  k ^= k >> 33;
  return k;
}

[[noreturn]] void Fail(const std::string& what, const std::string& path) {
  throw std::runtime_error(what + " " + path + ": " + std::strerror(errno));
}

void WriteAll(int fd, const void* data, size_t bytes, const std::string& path) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    ssize_t w = ::write(fd, p, bytes);
    if (w < 0) {
      if (errno == EINTR) continue;
      Fail("write", path);
    }
    p += w;
    bytes -= static_cast<size_t>(w);
  }
}

std::string TempName(const std::string& path) {
  return path + ".tmp." + std::to_string(::getpid());
}

void Rename(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) Fail("rename to", to);
}

}  // namespace

uint64_t Generate(uint64_t seed, uint64_t k) { return SplitMix(seed + (k + 1) * kGolden); }

Range ShardRange(uint64_t count, uint64_t shards, uint64_t i) {
  auto at = [&](uint64_t j) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(count) * j) / shards);
  };
  return {at(i), at(i + 1)};
}

void Checksum::Add(uint64_t v) {
  const uint64_t h = Fmix(v);
  ++count;
  sum += h;
  xored ^= h;
}

void Checksum::AddAll(const uint64_t* v, size_t n) {
  for (size_t i = 0; i < n; ++i) Add(v[i]);
}

void Checksum::Merge(const Checksum& o) {
  count += o.count;
  sum += o.sum;
  xored ^= o.xored;
}

std::string Checksum::ToString() const {
  char buf[96];
  std::snprintf(buf, sizeof buf, "count=%" PRIu64 " checksum=%016" PRIx64 "%016" PRIx64, count,
                sum, xored);
  return buf;
}

std::string ShardPath(const std::string& dir, uint64_t i) {
  return dir + "/input/shard-" + std::to_string(i) + ".u64";
}
std::string ShardMetaPath(const std::string& dir, uint64_t i) {
  return dir + "/input/shard-" + std::to_string(i) + ".meta";
}
std::string PartPath(const std::string& dir, uint64_t mapper, uint64_t reducer) {
  return dir + "/parts/m" + std::to_string(mapper) + "-r" + std::to_string(reducer) + ".u64";
}
std::string RunPath(const std::string& dir, uint64_t reducer) {
  return dir + "/runs/run-" + std::to_string(reducer) + ".u64";
}
std::string RunMetaPath(const std::string& dir, uint64_t reducer) {
  return dir + "/runs/run-" + std::to_string(reducer) + ".meta";
}

void MakeDirs(const std::string& path) {
  for (size_t pos = 1; pos <= path.size(); ++pos) {
    if (pos != path.size() && path[pos] != '/') continue;
    const std::string prefix = path.substr(0, pos);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) Fail("mkdir", prefix);
  }
}

uint64_t CountValues(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) Fail("stat", path);
  if (st.st_size % 8 != 0) {
    throw std::runtime_error(path + ": size is not a multiple of 8 bytes");
  }
  return static_cast<uint64_t>(st.st_size) / 8;
}

void ReadValues(const std::string& path, std::vector<uint64_t>& out) {
  const uint64_t n = CountValues(path);
  const size_t at = out.size();
  out.resize(at + n);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) Fail("open", path);
  char* p = reinterpret_cast<char*>(out.data() + at);
  size_t left = n * 8;
  while (left > 0) {
    ssize_t r = ::read(fd, p, left);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      ::close(fd);
      if (r == 0) throw std::runtime_error(path + ": file shrank while read");
      Fail("read", path);
    }
    p += r;
    left -= static_cast<size_t>(r);
  }
  ::close(fd);
}

void WriteValues(const std::string& path, const uint64_t* v, size_t n) {
  const std::string tmp = TempName(path);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) Fail("create", tmp);
  WriteAll(fd, v, n * 8, tmp);
  if (::close(fd) != 0) Fail("close", tmp);
  Rename(tmp, path);
}

void WriteChecksum(const std::string& path, const Checksum& c) {
  const std::string tmp = TempName(path);
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << "count " << c.count << "\nsum " << c.sum << "\nxor " << c.xored << "\n";
    f.close();
    if (!f) Fail("write", tmp);
  }
  Rename(tmp, path);
}

Checksum ReadChecksum(const std::string& path) {
  std::ifstream f(path);
  if (!f) Fail("open", path);
  Checksum c;
  std::string key;
  uint64_t value = 0;
  int seen = 0;
  while (f >> key >> value) {
    if (key == "count") c.count = value, seen |= 1;
    else if (key == "sum") c.sum = value, seen |= 2;
    else if (key == "xor") c.xored = value, seen |= 4;
  }
  if (seen != 7) throw std::runtime_error(path + ": not a checksum file");
  return c;
}

ValueWriter::ValueWriter(std::string path)
    : path_(std::move(path)), tmp_(TempName(path_)), buf_(kBuffer) {
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) Fail("create", tmp_);
}

ValueWriter::ValueWriter(ValueWriter&& o) noexcept
    : path_(std::move(o.path_)),
      tmp_(std::move(o.tmp_)),
      fd_(o.fd_),
      buf_(std::move(o.buf_)),
      used_(o.used_) {
  o.fd_ = -1;
  o.used_ = 0;
}

ValueWriter::~ValueWriter() {
  if (fd_ >= 0) {  // Not committed: leave nothing behind.
    ::close(fd_);
    ::unlink(tmp_.c_str());
  }
}

void ValueWriter::Flush() {
  WriteAll(fd_, buf_.data(), used_ * 8, tmp_);
  used_ = 0;
}

void ValueWriter::Commit() {
  Flush();
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) Fail("close", tmp_);
  Rename(tmp_, path_);
}

std::vector<uint64_t> SplittersFromSample(std::vector<uint64_t>& sample, uint64_t reducers) {
  std::sort(sample.begin(), sample.end());
  std::vector<uint64_t> out;
  for (uint64_t j = 1; j < reducers; ++j) {
    out.push_back(sample.empty() ? 0 : sample[j * sample.size() / reducers]);
  }
  return out;
}

std::vector<uint64_t> SampleSplitters(const std::string& dir, uint64_t shards,
                                      uint64_t reducers, uint64_t per_shard) {
  std::vector<uint64_t> sample;
  for (uint64_t s = 0; s < shards; ++s) {
    const std::string path = ShardPath(dir, s);
    const uint64_t n = CountValues(path);
    if (n == 0) continue;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) Fail("open", path);
    const uint64_t k_max = std::min(per_shard, n);
    for (uint64_t k = 0; k < k_max; ++k) {
      // Position k of k_max strata, jittered within its stratum by a fixed
      // pseudo-random fraction: the same for every mapper.
      const uint64_t lo = k * n / k_max, hi = (k + 1) * n / k_max;
      const uint64_t pos = lo + (hi > lo ? SplitMix(k) % (hi - lo) : 0);
      uint64_t v = 0;
      if (::pread(fd, &v, 8, static_cast<off_t>(pos * 8)) != 8) {
        ::close(fd);
        Fail("read", path);
      }
      sample.push_back(v);
    }
    ::close(fd);
  }
  return SplittersFromSample(sample, reducers);
}

void RadixSort(std::vector<uint64_t>& v) {
  const size_t n = v.size();
  if (n < 2) return;
  // All eight digit histograms in one pass over the data.
  std::vector<size_t> hist(8 * 256, 0);
  for (uint64_t x : v) {
    for (int d = 0; d < 8; ++d) ++hist[d * 256 + ((x >> (8 * d)) & 0xFF)];
  }
  std::vector<uint64_t> tmp(n);
  uint64_t* src = v.data();
  uint64_t* dst = tmp.data();
  for (int d = 0; d < 8; ++d) {
    size_t* h = &hist[d * 256];
    if (h[(src[0] >> (8 * d)) & 0xFF] == n) continue;  // One digit value: nothing moves.
    size_t offset = 0;
    for (int b = 0; b < 256; ++b) {
      const size_t c = h[b];
      h[b] = offset;
      offset += c;
    }
    const int shift = 8 * d;
    for (size_t i = 0; i < n; ++i) {
      const uint64_t x = src[i];
      dst[h[(x >> shift) & 0xFF]++] = x;
    }
    std::swap(src, dst);
  }
  if (src != v.data()) v.swap(tmp);
}

Flags::Flags(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) != 0) throw std::runtime_error("unexpected argument: " + a);
    a = a.substr(2);
    if (size_t eq = a.find('='); eq != std::string::npos) {
      kv_.emplace_back(a.substr(0, eq), a.substr(eq + 1));
    } else if (i + 1 < argc) {
      kv_.emplace_back(a, argv[++i]);
    } else {
      throw std::runtime_error("flag --" + a + " needs a value");
    }
  }
}

bool Flags::Has(const std::string& name) const {
  for (const auto& [k, v] : kv_) {
    if (k == name) return true;
  }
  return false;
}

std::string Flags::Str(const std::string& name, const std::string& def) const {
  std::string out = def;
  for (const auto& [k, v] : kv_) {
    if (k == name) out = v;
  }
  return out;
}

static uint64_t ParseU64(const std::string& what, const std::string& s) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno != 0 || s[0] == '-') {
    throw std::runtime_error(what + ": not a non-negative integer: \"" + s + "\"");
  }
  return v;
}

uint64_t Flags::U64(const std::string& name, uint64_t def) const {
  return Has(name) ? ParseU64("--" + name, Str(name)) : def;
}

uint64_t Flags::U64Required(const std::string& name) const {
  if (!Has(name)) throw std::runtime_error("missing --" + name);
  return U64(name, 0);
}

uint64_t Flags::Index() const {
  if (Has("index")) return U64("index", 0);
  const char* env = std::getenv("JOB_COMPLETION_INDEX");
  if (env == nullptr) throw std::runtime_error("missing --index and $JOB_COMPLETION_INDEX");
  return ParseU64("$JOB_COMPLETION_INDEX", env);
}

int RunProgram(int argc, char** argv, const char* usage, void (*body)(const Flags&)) {
  std::optional<Flags> flags;
  try {
    flags.emplace(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\nusage: %s %s\n", argv[0], e.what(), argv[0], usage);
    return 2;
  }
  try {
    body(*flags);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 1;
  }
  return 0;
}

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace dsort
