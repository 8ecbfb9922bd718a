#include "agent/runtime/usage.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/runtime/proc_identity.h"

namespace batchd::agent {
namespace {

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path);
  if (!in) return false;
  std::stringstream buf;
  buf << in.rdbuf();
  *out = buf.str();
  return true;
}

// The value of `key` in a "key value" per line file (cpu.stat, memory.stat,
// /proc/meminfo with its "key:" and " kB").
std::optional<int64_t> Field(const std::string& text, absl::string_view key) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (f.size() < 2) continue;
    absl::string_view k = f[0];
    if (!k.empty() && k.back() == ':') k.remove_suffix(1);
    if (k != key) continue;
    int64_t v = 0;
    if (absl::SimpleAtoi(f[1], &v)) return v;
  }
  return std::nullopt;
}

int64_t TicksToUsec(int64_t ticks) {
  static const int64_t hz = [] {
    long v = sysconf(_SC_CLK_TCK);
    return v > 0 ? static_cast<int64_t>(v) : int64_t{100};
  }();
  return ticks * 1000000 / hz;
}

}  // namespace

Usage ReadCgroupUsage(const std::string& dir) {
  Usage u;
  std::string text;
  if (ReadFile(dir + "/cpu.stat", &text)) {
    if (auto v = Field(text, "usage_usec")) u.cpu_usec = *v;
  }
  std::string current;
  int64_t mem = 0;
  if (ReadFile(dir + "/memory.current", &current) &&
      absl::SimpleAtoi(absl::StripAsciiWhitespace(current), &mem)) {
    std::string stat;
    int64_t inactive = 0;
    if (ReadFile(dir + "/memory.stat", &stat)) inactive = Field(stat, "inactive_file").value_or(0);
    u.memory_bytes = mem > inactive ? mem - inactive : 0;
  }
  return u;
}

Usage ReadProcessUsage(const std::string& proc_root, int pid, uint64_t start_ticks) {
  Usage u;
  if (pid <= 0) return u;
  const std::string dir = absl::StrCat(proc_root, "/", pid);
  std::string stat;
  if (!ReadFile(dir + "/stat", &stat)) return u;
  if (start_ticks != 0) {
    std::optional<uint64_t> t = ParseStartTicks(stat);
    if (!t || *t != start_ticks) return u;  // another process now has the pid
  }
  // After the ")" that ends the command name: field 3 (state) onwards;
  // utime, stime, cutime, cstime are fields 14..17.
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return u;
  std::vector<absl::string_view> f =
      absl::StrSplit(absl::string_view(stat).substr(close + 1), ' ', absl::SkipEmpty());
  if (f.size() < 15) return u;
  int64_t ticks = 0;
  for (size_t i = 11; i <= 14; ++i) {  // f[0] is field 3
    int64_t v = 0;
    if (!absl::SimpleAtoi(f[i], &v)) return u;
    ticks += v;
  }
  u.cpu_usec = TicksToUsec(ticks);
  std::string statm;
  if (ReadFile(dir + "/statm", &statm)) {
    std::vector<absl::string_view> m = absl::StrSplit(statm, ' ', absl::SkipEmpty());
    int64_t pages = 0;
    if (m.size() >= 2 && absl::SimpleAtoi(m[1], &pages)) {
      u.memory_bytes = pages * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
    }
  }
  return u;
}

Usage ReadNodeUsage(const std::string& proc_root) {
  Usage u;
  std::string stat;
  if (ReadFile(proc_root + "/stat", &stat)) {
    absl::string_view first = absl::string_view(stat).substr(0, stat.find('\n'));
    std::vector<absl::string_view> f = absl::StrSplit(first, ' ', absl::SkipEmpty());
    // cpu user nice system idle iowait irq softirq steal ...
    if (f.size() >= 5 && f[0] == "cpu") {
      int64_t busy = 0;
      bool ok = true;
      for (size_t i = 1; i < f.size() && i <= 8; ++i) {
        if (i == 4 || i == 5) continue;  // idle, iowait
        int64_t v = 0;
        ok = ok && absl::SimpleAtoi(f[i], &v);
        busy += v;
      }
      if (ok) u.cpu_usec = TicksToUsec(busy);
    }
  }
  std::string meminfo;
  if (ReadFile(proc_root + "/meminfo", &meminfo)) {
    auto total = Field(meminfo, "MemTotal");
    auto available = Field(meminfo, "MemAvailable");
    if (total && available) u.memory_bytes = (*total - *available) * 1024;
  }
  return u;
}

Usage MergeUsage(const Usage& cgroup, const Usage& process) {
  Usage u = process;
  if (cgroup.cpu_usec >= 0) u.cpu_usec = cgroup.cpu_usec;
  if (cgroup.memory_bytes >= 0) u.memory_bytes = cgroup.memory_bytes;
  return u;
}

}  // namespace batchd::agent
