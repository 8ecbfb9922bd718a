#include "store/internal/etcd_http.h"

#include <atomic>
#include <string_view>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/http_transport.h"

namespace batchd::store::internal {

namespace {

HttpOutgoing EtcdRequest(const std::string& path, const std::string& body) {
  HttpOutgoing req;
  req.method = "POST";
  req.target = path;
  req.headers = {{"User-Agent", "batchd-etcd"},
                 {"Content-Type", "application/json"},
                 // Refuse (rather than hang on) a member that has no leader.
                 {"Grpc-Metadata-Hasleader", "true"}};
  req.body = body;
  return req;
}

// The transport's error, naming the member.
absl::Status AtMember(const HttpEndpoint& ep, const absl::Status& st) {
  return absl::Status(st.code(), absl::StrCat("etcd ", ep.Url(), ": ", st.message()));
}

class HttpStream : public EtcdHttpStream {
 public:
  HttpStream(std::unique_ptr<HttpBodyStream> body, std::string name)
      : body_(std::move(body)), name_(std::move(name)) {}

  absl::Status Run(const std::function<bool(const std::string&)>& on_line) override {
    std::string line;
    bool stopped_by_caller = false;
    absl::Status st = body_->Read([&](std::string_view data) {
      for (char ch : data) {
        if (ch != '\n') {
          line.push_back(ch);
          continue;
        }
        if (!line.empty() && !on_line(line)) {
          stopped_by_caller = true;
          return false;
        }
        line.clear();
      }
      return true;
    });
    if (stopped_by_caller || absl::IsCancelled(st)) return absl::OkStatus();
    if (!st.ok()) return absl::UnavailableError(absl::StrCat("etcd ", name_, ": watch: ", st.message()));
    if (!line.empty()) on_line(line);
    return absl::UnavailableError(absl::StrCat("etcd ", name_, ": watch stream ended"));
  }

  void Stop() override { body_->Stop(); }

 private:
  std::unique_ptr<HttpBodyStream> body_;
  std::string name_;
};

}  // namespace

struct EtcdHttp::Impl {
  std::unique_ptr<HttpTransport> transport;
  std::atomic<size_t> current{0};      // the member requests go to first
  std::atomic<size_t> next_stream{0};  // the member the next stream tries first
};

EtcdHttp::EtcdHttp(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EtcdHttp::~EtcdHttp() = default;

absl::StatusOr<std::unique_ptr<EtcdHttp>> EtcdHttp::Create(EtcdHttpOptions opts) {
  if (opts.servers.empty()) return absl::InvalidArgumentError("no etcd server given");
  std::vector<HttpEndpoint> eps;
  for (const std::string& s : opts.servers) {
    auto ep = ParseHttpEndpoint(s, "etcd server");
    if (!ep.ok()) return ep.status();
    eps.push_back(*ep);
  }
  HttpTransportOptions t;
  t.connect_timeout = opts.connect_timeout;
  t.request_timeout = opts.request_timeout;
  t.idle_timeout = absl::Seconds(30);
  t.max_idle = opts.max_idle_per_member * static_cast<int>(eps.size());
  // A dead member is noticed within 10 + 3 x 5 s.
  t.keepalive_idle = absl::Seconds(10);
  t.keepalive_interval = absl::Seconds(5);
  t.keepalive_count = 3;
  t.max_response_bytes = opts.max_response_bytes;
  t.ca_file = opts.ca_file;
  t.cert_file = opts.cert_file;
  t.key_file = opts.key_file;
  t.ca_name = "--etcd-cafile";
  t.cert_name = "--etcd-certfile";
  t.key_name = "--etcd-keyfile";
  auto transport = HttpTransport::Create(std::move(eps), std::move(t));
  if (!transport.ok()) return transport.status();
  auto impl = std::make_unique<Impl>();
  impl->transport = std::move(*transport);
  return std::unique_ptr<EtcdHttp>(new EtcdHttp(std::move(impl)));
}

absl::StatusOr<EtcdHttpResponse> EtcdHttp::Post(const std::string& path, const std::string& body) {
  HttpTransport& t = *impl_->transport;
  const size_t n = t.size();
  const size_t first = impl_->current.load() % n;
  const HttpOutgoing req = EtcdRequest(path, body);
  absl::Status last = absl::UnavailableError("no etcd member answered");
  for (size_t i = 0; i < n; ++i) {
    const size_t member = (first + i) % n;
    bool sent = false;
    absl::StatusOr<HttpIncoming> r = t.RoundTrip(member, req, &sent);
    // A member without a leader answers 503 through the gateway: try another.
    if (r.ok() && r->code == 503 && i + 1 < n && absl::StrContains(r->body, "leader")) {
      last = absl::UnavailableError("etcd member has no leader");
      impl_->current.store((member + 1) % n);
      continue;
    }
    if (r.ok()) return EtcdHttpResponse{r->code, std::move(r->body)};
    t.DropIdle(member);
    impl_->current.store((member + 1) % n);
    last = AtMember(t.endpoint(member), r.status());
    // Sent and lost: not repeated elsewhere (a write may have been applied).
    if (sent) return last;
  }
  return last;
}

absl::StatusOr<std::unique_ptr<EtcdHttpStream>> EtcdHttp::OpenStream(const std::string& path,
                                                                       const std::string& body) {
  HttpTransport& t = *impl_->transport;
  const size_t n = t.size();
  const size_t first = impl_->next_stream.fetch_add(1) % n;
  const HttpOutgoing req = EtcdRequest(path, body);
  absl::Status last = absl::UnavailableError("no etcd member answered");
  for (size_t i = 0; i < n; ++i) {
    const size_t member = (first + i) % n;
    const HttpEndpoint& ep = t.endpoint(member);
    auto s = t.OpenStream(member, req);
    if (!s.ok()) {
      last = AtMember(ep, s.status());
      if (!absl::IsUnavailable(last)) last = absl::UnavailableError(last.message());
      continue;
    }
    if (const int code = (*s)->code(); code < 200 || code >= 300) {
      last = absl::UnavailableError(absl::StrCat("etcd ", ep.Url(), ": watch answered HTTP ", code));
      continue;
    }
    impl_->next_stream.store(member);
    return std::unique_ptr<EtcdHttpStream>(new HttpStream(std::move(*s), ep.Url()));
  }
  return last;
}

}  // namespace batchd::store::internal
