// The Dialer of `batchd server`: kubeconfig text -> HttpClient (TLS, client
// certificates and tokens as the kubeconfig says), with bounded timeouts so
// that a worker that hangs costs a reconcile at most `request_timeout`.
#pragma once

#include <memory>

#include "controllers/multikueue/multikueue.h"

namespace batchd::controllers::multikueue {

struct HttpDialerOptions {
  absl::Duration connect_timeout = absl::Seconds(5);
  absl::Duration request_timeout = absl::Seconds(15);
};

std::shared_ptr<Dialer> MakeHttpDialer(HttpDialerOptions opts = {});

}  // namespace batchd::controllers::multikueue
