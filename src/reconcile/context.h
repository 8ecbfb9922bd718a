// What every controller is built from (STYLE.md practice 14: explicit wiring,
// no singletons): the client it writes through, shared informers, the
// manager that drives it, the Clock, and the event recorder.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "client/client.h"
#include "client/informer.h"
#include "common/clock.h"
#include "reconcile/controller.h"
#include "reconcile/events.h"
#include "reconcile/settled.h"

namespace batchd::reconcile {

// One shared informer per kind (all namespaces), created on first request;
// it keeps settled objects compact (settled.h). Controllers add their
// handlers before the manager starts.
class InformerFactory {
 public:
  InformerFactory(client::Client& client, Manager& manager) : client_(client), manager_(manager) {}
  client::Informer& For(const api::KindDef& k) {
    std::string key = k.ApiVersion() + "/" + k.plural;
    auto it = informers_.find(key);
    if (it != informers_.end()) return *it->second;
    auto made = std::make_unique<client::Informer>(client_, k);
    made->SetCompactWhen(SettledWhen(k));  // finished objects kept as bytes
    client::Informer& inf = manager_.AddInformer(std::move(made));
    informers_[key] = &inf;
    return inf;
  }
  client::Informer& For(std::string_view group, std::string_view version, std::string_view plural) {
    return For(client_.Kind(group, version, plural));
  }

 private:
  client::Client& client_;
  Manager& manager_;
  std::map<std::string, client::Informer*> informers_;
};

struct ControllerContext {
  client::Client& client;
  InformerFactory& informers;
  Manager& manager;
  Clock& clock;
  EventRecorder& events;
};

}  // namespace batchd::reconcile
