#include "controllers/runtime/events.h"

#include <functional>

#include "absl/strings/str_cat.h"
#include "api/meta/time_util.h"
#include "common/logging.h"

namespace batchd::controllers {

using api::Json;

void ApiEventRecorder::Event(const Json& obj, const std::string& type, const std::string& reason,
                             const std::string& message) {
  static const Json* const kEmpty = new Json(Json::object());
  // Not `cond ? obj["metadata"] : Json::object()`: that copies the metadata.
  const Json& m = obj.contains("metadata") ? obj["metadata"] : *kEmpty;
  std::string ns = m.value("namespace", "");
  if (ns.empty()) ns = "default";
  std::string name = m.value("name", "");
  // A stable name per (object, type, reason, message) so repeats aggregate.
  size_t h = std::hash<std::string>{}(absl::StrCat(m.value("uid", ""), type, reason, message));
  std::string event_name = absl::StrCat(name, ".", absl::Hex(h, absl::kZeroPad16));
  std::string now = api::meta::FormatRfc3339(clock_.Now());
  const api::KindDef& events = client_.Kind("", "v1", "events");
  Json ev = {{"apiVersion", "v1"},
             {"kind", "Event"},
             {"metadata", {{"name", event_name}, {"namespace", ns}}},
             {"involvedObject",
              {{"apiVersion", obj.value("apiVersion", "")},
               {"kind", obj.value("kind", "")},
               {"name", name},
               {"namespace", m.value("namespace", "")},
               {"uid", m.value("uid", "")},
               {"resourceVersion", m.value("resourceVersion", "")}}},
             {"reason", reason},
             {"message", message},
             {"type", type},
             {"source", {{"component", component_}}},
             {"reportingComponent", component_},
             {"firstTimestamp", now},
             {"lastTimestamp", now},
             {"count", 1}};
  // Most events are new: create first, and only a repeat (AlreadyExists) is
  // read and counted. mu_ orders this recorder's count updates.
  auto r = client_.Create(events, ns, ev);
  if (r.ok()) return;
  if (!absl::IsAlreadyExists(r.status())) {
    BATCHD_LOG_DEBUG("event {}/{}: {}", ns, event_name, r.status().ToString());
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto existing = client_.Get(events, ns, event_name);
  if (!existing.ok()) return;
  Json e = *std::move(existing);
  e["count"] = e.value("count", 1) + 1;
  e["lastTimestamp"] = now;
  if (!client_.Update(events, e).ok()) {
    BATCHD_LOG_DEBUG("event {}/{}: update failed", ns, event_name);
  }
}

}  // namespace batchd::controllers
