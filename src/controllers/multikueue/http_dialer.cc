#include "controllers/multikueue/http_dialer.h"

#include "api/kind.h"
#include "client/http_client.h"

namespace batchd::controllers::multikueue {
namespace {

class HttpDialer : public Dialer {
 public:
  explicit HttpDialer(HttpDialerOptions opts) : opts_(opts) {}
  absl::StatusOr<std::shared_ptr<client::Client>> Dial(const std::string& kubeconfig,
                                                       const std::string& source,
                                                       const std::string& dir) override {
    client::HttpClientOptions base;
    base.user_agent = "batchd-multikueue";
    base.connect_timeout = opts_.connect_timeout;
    base.request_timeout = opts_.request_timeout;
    base.max_idle_connections = 2;
    auto k = client::ParseKubeconfig(kubeconfig, source, dir, base);
    if (!k.ok()) return k.status();
    auto c = client::HttpClient::Create(k->server, api::BuiltinScheme(), k->options);
    if (!c.ok()) return c.status();
    return std::shared_ptr<client::Client>(std::move(*c));
  }

 private:
  HttpDialerOptions opts_;
};

}  // namespace

std::shared_ptr<Dialer> MakeHttpDialer(HttpDialerOptions opts) {
  return std::make_shared<HttpDialer>(opts);
}

}  // namespace batchd::controllers::multikueue
