// EventRecorder: the EventSink seam. Controllers report transitions as core/v1
// Events ("Normal"/"Warning", a CamelCase reason, a message) about an object;
// `kubectl describe` and `kubectl get events` show them. The API-backed
// implementation aggregates repeats into `count` as Kubernetes does; tests use
// FakeEventRecorder.
//
// Thread-safety: implementations are thread-safe.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "api/field_error.h"
#include "client/client.h"
#include "common/clock.h"

namespace batchd::controllers {

class EventRecorder {
 public:
  virtual ~EventRecorder() = default;
  // `obj` is the involved object (apiVersion, kind, metadata).
  virtual void Event(const api::Json& obj, const std::string& type, const std::string& reason,
                     const std::string& message) = 0;
};

// Writes Events through a Client; a repeat of (object, type, reason,
// message) bumps `count` and `lastTimestamp` of the existing Event.
class ApiEventRecorder : public EventRecorder {
 public:
  ApiEventRecorder(client::Client& client, Clock& clock, std::string component)
      : client_(client), clock_(clock), component_(std::move(component)) {}
  void Event(const api::Json& obj, const std::string& type, const std::string& reason,
             const std::string& message) override;

 private:
  client::Client& client_;
  Clock& clock_;
  std::string component_;
  std::mutex mu_;
};

class FakeEventRecorder : public EventRecorder {
 public:
  struct Recorded {
    std::string object;  // "Kind ns/name"
    std::string type, reason, message;
  };
  void Event(const api::Json& obj, const std::string& type, const std::string& reason,
             const std::string& message) override {
    std::lock_guard<std::mutex> lock(mu_);
    const api::Json& m = obj.contains("metadata") ? obj["metadata"] : api::Json::object();
    events_.push_back({obj.value("kind", "") + " " + m.value("namespace", "") + "/" +
                           m.value("name", ""),
                       type, reason, message});
  }
  std::vector<Recorded> events() const {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }
  std::vector<std::string> Reasons() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> r;
    for (const auto& e : events_) r.push_back(e.reason);
    return r;
  }

 private:
  mutable std::mutex mu_;
  std::vector<Recorded> events_;
};

}  // namespace batchd::controllers
