// apiserver_bench: a load client for a running `batchd server` (plain main,
// not google-benchmark: it measures a real server over real sockets).
//
//   apiserver_bench --port P [--tls-ca CA_FILE] [--creates 20000] [--conns 16] [--list-runs 5]
//                   [--watchers 100] [--updates 2000]
//
// Phases (each in its own namespace, created first):
//   create  N Job creates over C keep-alive connections -> creates/s, p50/p99
//   list    LIST of the 10,000 Jobs in one namespace (JSON and Table),
//           median of R runs
//   watch   W watchers on one namespace's jobs while U label patches happen
//           -> events delivered/s and time until every watcher saw the last
// Output: one `key=value` line per figure (bench/run.sh turns them into a
// table). Single-threaded setup, one thread per connection; exits 1 on any
// HTTP error.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

[[noreturn]] void Die(const std::string& msg) {
  std::fprintf(stderr, "apiserver_bench: %s\n", msg.c_str());
  std::exit(1);
}

// With --tls-ca FILE: HTTPS, verifying the server against FILE.
SSL_CTX* g_tls = nullptr;

// `--token T`: every request carries `Authorization: Bearer T` (the
// authentication + RBAC path; docs/security.md).
std::string g_auth_header;
// "?fieldManager=NAME" with --field-manager, appended to the create requests.
std::string g_create_query;

// A minimal HTTP/1.1 keep-alive client over one socket (TLS when g_tls).
class Conn {
 public:
  explicit Conn(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ < 0 || connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
      Die("cannot connect to 127.0.0.1:" + std::to_string(port));
    }
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (g_tls) {
      ssl_ = SSL_new(g_tls);
      SSL_set_fd(ssl_, fd_);
      SSL_set1_host(ssl_, "127.0.0.1");
      if (SSL_connect(ssl_) != 1) {
        ERR_print_errors_fp(stderr);
        Die("TLS handshake failed");
      }
    }
  }
  ~Conn() {
    if (ssl_) SSL_free(ssl_);
    close(fd_);
  }
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  void Send(const std::string& method, const std::string& target, const std::string& body = "",
            const std::string& content_type = "application/json",
            const std::string& accept = "application/json") {
    std::string req = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: " +
                      accept + "\r\n" + g_auth_header;
    if (!body.empty()) {
      req += "Content-Type: " + content_type + "\r\nContent-Length: " +
             std::to_string(body.size()) + "\r\n";
    }
    req += "\r\n" + body;
    size_t off = 0;
    while (off < req.size()) {
      ssize_t n = ssl_ ? SSL_write(ssl_, req.data() + off, static_cast<int>(req.size() - off))
                       : write(fd_, req.data() + off, req.size() - off);
      if (n <= 0) Die("write failed");
      off += static_cast<size_t>(n);
    }
  }

  // Reads the status line and headers; returns the status code.
  int ReadHead() {
    size_t end;
    while ((end = buf_.find("\r\n\r\n")) == std::string::npos) Fill();
    std::string head = buf_.substr(0, end);
    buf_.erase(0, end + 4);
    chunked_ = false;
    length_ = -1;
    for (char& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (head.find("transfer-encoding: chunked") != std::string::npos) chunked_ = true;
    size_t cl = head.find("content-length:");
    if (cl != std::string::npos) length_ = std::atol(head.c_str() + cl + 15);
    if (head.size() < 12) Die("bad status line");
    return std::atoi(head.c_str() + 9);
  }

  // Reads the next piece of the body into `out`; false at the end.
  bool ReadPiece(std::string* out) {
    out->clear();
    if (!chunked_) {
      if (length_ < 0) Die("response without length");
      while (buf_.size() < static_cast<size_t>(length_)) Fill();
      out->assign(buf_, 0, static_cast<size_t>(length_));
      buf_.erase(0, static_cast<size_t>(length_));
      length_ = -1;
      return !out->empty();
    }
    size_t eol;
    while ((eol = buf_.find("\r\n")) == std::string::npos) Fill();
    size_t size = std::strtoul(buf_.c_str(), nullptr, 16);
    while (buf_.size() < eol + 2 + size + 2) Fill();
    out->assign(buf_, eol + 2, size);
    buf_.erase(0, eol + 2 + size + 2);
    return size > 0;
  }

  // A whole response: status and body.
  int Do(const std::string& method, const std::string& target, const std::string& body,
         std::string* out, const std::string& content_type = "application/json",
         const std::string& accept = "application/json") {
    Send(method, target, body, content_type, accept);
    int code = ReadHead();
    out->clear();
    std::string piece;
    if (!chunked_) {
      if (length_ > 0) ReadPiece(out);
      return code;
    }
    while (ReadPiece(&piece)) out->append(piece);
    return code;
  }

 private:
  void Fill() {
    char tmp[65536];
    ssize_t n = ssl_ ? SSL_read(ssl_, tmp, sizeof(tmp)) : read(fd_, tmp, sizeof(tmp));
    if (n <= 0) Die("connection closed by the server");
    buf_.append(tmp, static_cast<size_t>(n));
  }

  int fd_ = -1;
  SSL* ssl_ = nullptr;
  std::string buf_;
  bool chunked_ = false;
  long length_ = -1;
};

std::string JobJson(const std::string& name) {
  return R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":")" + name +
         R"(","labels":{"app":"bench"}},"spec":{"template":{"spec":{"restartPolicy":"Never",)"
         R"("containers":[{"name":"c","image":"busybox","command":["true"]}]}}}})";
}

void CreateNamespace(int port, const std::string& ns) {
  Conn c(port);
  std::string out;
  int code = c.Do("POST", "/api/v1/namespaces",
                  R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" + ns + "\"}}",
                  &out);
  if (code != 201 && code != 409) Die("create namespace " + ns + ": HTTP " + std::to_string(code));
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

void Report(const char* key, double value) {
  if (value >= 100) {
    std::printf("%s=%.0f\n", key, value);
  } else {
    std::printf("%s=%.3g\n", key, value);
  }
}

// N creates over `conns` connections; the first `first_ns_count` go to ns_a.
void BenchCreates(int port, int total, int conns, int first_ns_count) {
  CreateNamespace(port, "bench-a");
  CreateNamespace(port, "bench-b");
  std::atomic<int> next{0};
  std::mutex mu;
  std::vector<double> lat;
  lat.reserve(static_cast<size_t>(total));
  auto start = Clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < conns; ++t) {
    threads.emplace_back([&] {
      Conn c(port);
      std::vector<double> mine;
      std::string out;
      for (int i; (i = next.fetch_add(1)) < total;) {
        std::string ns = i < first_ns_count ? "bench-a" : "bench-b";
        auto t0 = Clock::now();
        int code = c.Do("POST", "/apis/batch/v1/namespaces/" + ns + "/jobs" + g_create_query,
                        JobJson("j-" + std::to_string(i)), &out);
        mine.push_back(Seconds(Clock::now() - t0) * 1e3);
        if (code != 201) Die("create: HTTP " + std::to_string(code) + ": " + out.substr(0, 300));
      }
      std::lock_guard<std::mutex> l(mu);
      lat.insert(lat.end(), mine.begin(), mine.end());
    });
  }
  for (auto& t : threads) t.join();
  double secs = Seconds(Clock::now() - start);
  Report("create_total", total);
  Report("create_per_sec", total / secs);
  Report("create_p50_ms", Percentile(lat, 0.50));
  Report("create_p99_ms", Percentile(lat, 0.99));
}

void BenchList(int port, int runs, int want) {
  Conn c(port);
  for (const char* accept : {"application/json",
                             "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}) {
    bool table = std::strstr(accept, "Table") != nullptr;
    std::vector<double> ms;
    size_t bytes = 0;
    for (int r = 0; r < runs; ++r) {
      std::string out;
      auto t0 = Clock::now();
      int code = c.Do("GET", "/apis/batch/v1/namespaces/bench-a/jobs", "", &out,
                      "application/json", accept);
      ms.push_back(Seconds(Clock::now() - t0) * 1e3);
      if (code != 200) Die("list: HTTP " + std::to_string(code));
      bytes = out.size();
      // Count items (object names, or table rows) to be sure the list is complete.
      const char* marker = table ? "\"cells\":[" : "\"name\":\"j-";
      int items = 0;
      for (size_t p = 0; (p = out.find(marker, p)) != std::string::npos; ++p) ++items;
      if (items < want) Die("list returned " + std::to_string(items) + " jobs, want " +
                            std::to_string(want));
    }
    Report(table ? "list_table_median_ms" : "list_json_median_ms", Percentile(ms, 0.5));
    Report(table ? "list_table_bytes" : "list_json_bytes", static_cast<double>(bytes));
  }
}

// `watchers` watches on namespace bench-w while `updates` label patches go to
// its 100 jobs from 4 connections.
void BenchWatch(int port, int watchers, int updates) {
  const std::string ns = "bench-w";
  const int kJobs = 100;
  CreateNamespace(port, ns);
  const std::string base = "/apis/batch/v1/namespaces/" + ns + "/jobs";
  std::string rv;
  {
    Conn c(port);
    std::string out;
    for (int i = 0; i < kJobs; ++i) {
      int code = c.Do("POST", base, JobJson("w-" + std::to_string(i)), &out);
      if (code != 201 && code != 409) Die("watch setup create: HTTP " + std::to_string(code));
    }
    if (c.Do("GET", base, "", &out) != 200) Die("watch setup list failed");
    // The list's revision is the largest resourceVersion in the response.
    long long max_rv = 0;
    const std::string key = "\"resourceVersion\":\"";
    for (size_t p = 0; (p = out.find(key, p)) != std::string::npos; ++p) {
      max_rv = std::max(max_rv, std::atoll(out.c_str() + p + key.size()));
    }
    if (max_rv == 0) Die("list without resourceVersion");
    rv = std::to_string(max_rv);
  }
  std::atomic<int> ready{0};
  std::vector<Clock::time_point> done_at(static_cast<size_t>(watchers));
  std::vector<int> seen(static_cast<size_t>(watchers), 0);
  std::vector<std::thread> threads;
  for (int w = 0; w < watchers; ++w) {
    threads.emplace_back([&, w] {
      Conn c(port);
      c.Send("GET", base + "?watch=1&resourceVersion=" + rv + "&timeoutSeconds=120");
      if (c.ReadHead() != 200) Die("watch: not 200");
      ready.fetch_add(1);
      std::string piece;
      int n = 0;
      while (n < updates && c.ReadPiece(&piece)) {
        n += static_cast<int>(std::count(piece.begin(), piece.end(), '\n'));
      }
      seen[static_cast<size_t>(w)] = n;
      done_at[static_cast<size_t>(w)] = Clock::now();
    });
  }
  while (ready.load() < watchers) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  auto start = Clock::now();
  std::atomic<int> next{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&] {
      Conn c(port);
      std::string out;
      for (int i; (i = next.fetch_add(1)) < updates;) {
        std::string patch = R"({"metadata":{"labels":{"seq":")" + std::to_string(i) + "\"}}}";
        int code = c.Do("PATCH", base + "/w-" + std::to_string(i % kJobs), patch, &out,
                        "application/merge-patch+json");
        if (code != 200) Die("watch update: HTTP " + std::to_string(code) + ": " + out);
      }
    });
  }
  for (auto& t : writers) t.join();
  auto writes_done = Clock::now();
  for (auto& t : threads) t.join();
  auto last = *std::max_element(done_at.begin(), done_at.end());
  int min_seen = *std::min_element(seen.begin(), seen.end());
  if (min_seen < updates) Die("a watcher saw only " + std::to_string(min_seen) + " events");
  Report("watch_watchers", watchers);
  Report("watch_updates", updates);
  Report("watch_updates_per_sec", updates / Seconds(writes_done - start));
  Report("watch_events_per_sec", static_cast<double>(watchers) * updates / Seconds(last - start));
  Report("watch_all_seen_ms", Seconds(last - start) * 1e3);
  // Watchers often see the last event before its writer has read the reply.
  Report("watch_lag_after_last_write_ms", std::max(0.0, Seconds(last - writes_done) * 1e3));
}

int IntFlag(int argc, char** argv, const char* name, int def) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) return std::atoi(argv[i + 1]);
  }
  return def;
}

}  // namespace

int main(int argc, char** argv) {
  int port = IntFlag(argc, argv, "--port", 0);
  if (port <= 0) Die("usage: apiserver_bench --port P [--creates N] [--conns C] [--list-runs R] "
                     "[--watchers W] [--updates U] [--token T] [--tls-ca CA_FILE] "
                     "[--field-manager NAME]");
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--field-manager") == 0) {
      // Creates name a field manager, as kubectl's do: the server records
      // managedFields (without it, creates record none).
      g_create_query = std::string("?fieldManager=") + argv[i + 1];
    }
    if (std::strcmp(argv[i], "--token") == 0) {
      g_auth_header = std::string("Authorization: Bearer ") + argv[i + 1] + "\r\n";
    }
    if (std::strcmp(argv[i], "--tls-ca") != 0) continue;
    g_tls = SSL_CTX_new(TLS_client_method());
    if (SSL_CTX_load_verify_locations(g_tls, argv[i + 1], nullptr) != 1) Die("cannot load the CA");
    SSL_CTX_set_verify(g_tls, SSL_VERIFY_PEER, nullptr);
  }
  int creates = IntFlag(argc, argv, "--creates", 20000);
  int list_n = std::min(creates, 10000);
  BenchCreates(port, creates, IntFlag(argc, argv, "--conns", 16), list_n);
  BenchList(port, IntFlag(argc, argv, "--list-runs", 5), list_n);
  BenchWatch(port, IntFlag(argc, argv, "--watchers", 100), IntFlag(argc, argv, "--updates", 2000));
  return 0;
}
