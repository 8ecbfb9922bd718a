#include "agent/internal/logs.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "api/meta/object_meta.h"
#include "api/meta/time_util.h"
#include "apiserver/status_mapping.h"
#include "registry/errors.h"

namespace batchd::agent::internal {

using api::Json;
using apiserver::PodLogSource;
using WriteFn = std::function<bool(std::string_view)>;

namespace {

constexpr size_t kMaxTailWindow = 16 << 20;  // tailLines looks at the last 16 MiB.

// Applies timestamps and limitBytes to what it is given, in order.
class Emitter {
 public:
  Emitter(const WriteFn& write, const PodLogSource::Options& o) : write_(write), o_(o) {
    if (o.limit_bytes) left_ = *o.limit_bytes;
  }
  // Sends nothing; false once the client is gone (see PodLogSource).
  bool Alive() { return write_(std::string_view()); }
  // False once the client is gone or the limit is reached.
  bool Emit(std::string_view data, absl::Time stamp) {
    if (!o_.timestamps) return Raw(data);
    std::string out;
    std::string ts = api::meta::FormatRfc3339(stamp);
    for (char ch : data) {
      if (at_line_start_) absl::StrAppend(&out, ts, " ");
      out.push_back(ch);
      at_line_start_ = ch == '\n';
    }
    return Raw(out);
  }

 private:
  bool Raw(std::string_view data) {
    if (data.empty()) return left_ != 0;
    if (left_ >= 0 && static_cast<int64_t>(data.size()) >= left_) {
      if (left_ > 0) write_(data.substr(0, left_));
      left_ = 0;
      return false;
    }
    if (left_ > 0) left_ -= data.size();
    return write_(data);
  }
  const WriteFn& write_;
  const PodLogSource::Options& o_;
  int64_t left_ = -1;  // -1: no limit.
  bool at_line_start_ = true;
};

const ContainerStatus* FindContainer(const PodSandboxStatus& rt, const std::string& name) {
  for (const auto* list : {&rt.app, &rt.init}) {
    for (const auto& c : *list) {
      if (c.name == name) return &c;
    }
  }
  return nullptr;
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void reset(int fd) {
    if (fd_ >= 0) close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

// Reads from `fd` at `*pos` until EOF, emitting; false when the emitter stops.
bool Drain(int fd, off_t* pos, Emitter& em, absl::Time stamp, size_t* total) {
  char buf[64 * 1024];
  for (;;) {
    ssize_t n = pread(fd, buf, sizeof(buf), *pos);
    if (n <= 0) return true;
    *pos += n;
    *total += n;
    if (!em.Emit(std::string_view(buf, n), stamp)) return false;
  }
}

class LocalLogSource : public PodLogSource {
 public:
  LocalLogSource(PodRuntime& rt, Clock& clock) : rt_(rt), clock_(clock) {}

  absl::Status StreamLog(const Json& pod, const Options& o, const WriteFn& write) override {
    std::string uid = api::meta::GetUid(pod), name = api::meta::GetName(pod);
    auto status = rt_.Status(uid);
    if (!status.ok()) return status.status();
    const ContainerStatus* cs = FindContainer(*status, o.container);
    std::string path = rt_.LogPath(uid, o.container, o.previous);
    if (path.empty()) {
      if (o.previous) {
        return registry::BadRequest(absl::StrCat("previous terminated container \"", o.container,
                                                 "\" in pod \"", name, "\" not found"));
      }
      std::string why = cs && !cs->reason.empty() ? cs->reason : "ContainerCreating";
      return registry::BadRequest(absl::StrCat("container \"", o.container, "\" in pod \"",
                                               name, "\" is waiting to start: ", why));
    }
    absl::Time started = absl::InfinitePast(), finished = absl::InfinitePast();
    if (o.previous && cs && cs->last_terminated) {
      started = cs->last_terminated->started_at;
      finished = cs->last_terminated->finished_at;
    } else if (cs) {
      started = cs->started_at;
      if (cs->state == ContainerStatus::State::kTerminated) finished = cs->finished_at;
    }
    // Files hold no per-line times: a run that ended before the window
    // shows nothing; otherwise the whole run is shown.
    if (o.since_seconds && finished != absl::InfinitePast() &&
        finished < clock_.Now() - absl::Seconds(*o.since_seconds)) {
      return absl::OkStatus();
    }
    Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) return absl::OkStatus();
    Emitter em(write, o);
    off_t pos = StartOffset(fd.get(), o);
    size_t total = 0;
    if (!Drain(fd.get(), &pos, em, started, &total)) return absl::OkStatus();
    if (!o.follow || o.previous) return absl::OkStatus();
    Follow(uid, o.container, started, path, fd, &pos, em);
    return absl::OkStatus();
  }

 private:
  off_t StartOffset(int fd, const Options& o) {
    if (!o.tail_lines) return 0;
    if (*o.tail_lines <= 0) return lseek(fd, 0, SEEK_END);
    off_t size = lseek(fd, 0, SEEK_END);
    off_t from = size > static_cast<off_t>(kMaxTailWindow) ? size - kMaxTailWindow : 0;
    std::string data(size - from, '\0');
    ssize_t n = pread(fd, data.data(), data.size(), from);
    if (n < 0) return 0;
    data.resize(n);
    return from + static_cast<off_t>(TailOffset(data, *o.tail_lines));
  }

  // Streams what the running container appends until it stops running (or
  // restarts into a new log) or the client goes away (noticed within the
  // poll period even while the container is silent). Woken by inotify. When
  // the shim rotates the file (log_files.h: the path now names a new file),
  // the old one is read to its end and the new one followed from its start,
  // so nothing written is skipped.
  void Follow(const std::string& uid, const std::string& container, absl::Time started,
              const std::string& path, Fd& fd, off_t* pos, Emitter& em) {
    Fd in(inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
    int wd = in.get() >= 0 ? inotify_add_watch(in.get(), path.c_str(), IN_MODIFY | IN_CLOSE_WRITE)
                           : -1;
    size_t total = 0;
    for (;;) {
      size_t before = total;
      if (!Drain(fd.get(), pos, em, clock_.Now(), &total)) return;
      if (total != before) continue;
      struct stat now_at_path, following;
      if (stat(path.c_str(), &now_at_path) == 0 && fstat(fd.get(), &following) == 0 &&
          (now_at_path.st_ino != following.st_ino || now_at_path.st_dev != following.st_dev)) {
        // Rotated: the old file is complete (the shim closed it before the
        // rename); what is left of it was drained above.
        const int next = open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (next >= 0) {
          fd.reset(next);
          *pos = 0;
          if (in.get() >= 0) {
            if (wd >= 0) inotify_rm_watch(in.get(), wd);
            wd = inotify_add_watch(in.get(), path.c_str(), IN_MODIFY | IN_CLOSE_WRITE);
          }
          continue;
        }
      }
      if (!em.Alive()) return;
      auto st = rt_.Status(uid);
      if (!st.ok()) return;
      const ContainerStatus* cs = FindContainer(*st, container);
      if (!cs || cs->state != ContainerStatus::State::kRunning || cs->started_at != started) {
        Drain(fd.get(), pos, em, clock_.Now(), &total);
        return;
      }
      struct pollfd p = {in.get(), POLLIN, 0};
      if (in.get() >= 0 && poll(&p, 1, 250) > 0) {
        char buf[4096];
        while (read(in.get(), buf, sizeof(buf)) > 0) {
        }
      } else if (in.get() < 0) {
        poll(nullptr, 0, 250);  // No inotify: fall back to a bounded wait.
      }
    }
  }

  PodRuntime& rt_;
  Clock& clock_;
};

}  // namespace

std::unique_ptr<PodLogSource> NewLocalLogSource(PodRuntime& runtime, Clock& clock) {
  return std::make_unique<LocalLogSource>(runtime, clock);
}

size_t TailOffset(std::string_view data, int64_t n) {
  if (n <= 0) return data.size();
  size_t end = data.size();
  if (end > 0 && data[end - 1] == '\n') --end;  // The final newline ends the last line.
  int64_t seen = 0;
  for (size_t i = end; i > 0; --i) {
    if (data[i - 1] == '\n' && ++seen == n) return i;
  }
  return 0;
}

PodLogSource::Options ParseLogOptions(const apiserver::HttpRequest& req) {
  PodLogSource::Options o;
  o.container = req.Param("container");
  o.follow = req.Param("follow") == "true";
  o.previous = req.Param("previous") == "true";
  o.timestamps = req.Param("timestamps") == "true";
  auto int_param = [&](const char* name, std::optional<int64_t>* out) {
    int64_t n = 0;
    if (absl::SimpleAtoi(req.Param(name), &n)) *out = n;
  };
  int_param("tailLines", &o.tail_lines);
  int_param("sinceSeconds", &o.since_seconds);
  int_param("limitBytes", &o.limit_bytes);
  return o;
}

std::string LogQuery(const PodLogSource::Options& o) {
  std::vector<std::string> q;
  if (o.follow) q.push_back("follow=true");
  if (o.previous) q.push_back("previous=true");
  if (o.timestamps) q.push_back("timestamps=true");
  if (o.tail_lines) q.push_back(absl::StrCat("tailLines=", *o.tail_lines));
  if (o.since_seconds) q.push_back(absl::StrCat("sinceSeconds=", *o.since_seconds));
  if (o.limit_bytes) q.push_back(absl::StrCat("limitBytes=", *o.limit_bytes));
  return absl::StrJoin(q, "&");
}

void ServeContainerLogs(const apiserver::HttpRequest& req, apiserver::ResponseWriter& w,
                        const PodLookup& lookup, PodLogSource& logs) {
  auto fail = [&](const absl::Status& s) {
    w.Send(apiserver::HttpCodeFor(s), {{"Content-Type", "application/json"}},
           apiserver::StatusBodyFor(s).dump());
  };
  std::vector<std::string> parts = absl::StrSplit(req.path, '/', absl::SkipEmpty());
  if (req.method != "GET" || parts.size() != 4 || parts[0] != "containerLogs") {
    return fail(registry::ApiError(absl::StatusCode::kNotFound, "NotFound",
                                   "not found: " + req.path));
  }
  client::ObjectRef pod = lookup(parts[1], parts[2]);
  if (!pod) {
    return fail(registry::ApiError(absl::StatusCode::kNotFound, "NotFound",
                                   absl::StrCat("pods \"", parts[2], "\" not found")));
  }
  PodLogSource::Options o = ParseLogOptions(req);
  o.container = parts[3];
  bool started = false;
  auto write = [&](std::string_view data) {
    if (data.empty()) return !w.ClientGone();  // a liveness check (PodLogSource)
    if (!started) {
      started = true;
      if (!w.StartStream(200, {{"Content-Type", "text/plain"}})) return false;
    }
    return w.WriteChunk(data) && !w.ClientGone();
  };
  absl::Status st = logs.StreamLog(*pod, o, write);
  if (!started) {
    if (!st.ok()) return fail(st);
    w.Send(200, {{"Content-Type", "text/plain"}}, "");
    return;
  }
  w.EndStream();
}

}  // namespace batchd::agent::internal
