#include "client/informer.h"

#include "absl/synchronization/mutex.h"
#include "api/json_access.h"
#include "api/labels/selector.h"
#include "common/logging.h"
#include "common/thread_name.h"

namespace batchd::client {

using api::Json;

Informer::Informer(Client& client, const api::KindDef& kind, std::string ns, Selector sel)
    : client_(client), kind_(kind), ns_(std::move(ns)), sel_(std::move(sel)) {}

Informer::~Informer() { Stop(); }

void Informer::AddHandlers(EventHandlers h) { handlers_.push_back(std::move(h)); }

std::string Informer::KeyOf(const Json& obj) {
  const Json& m = api::MemberObject(obj, "metadata");  // No copy.
  std::string ns = m.value("namespace", "");
  std::string name = m.value("name", "");
  return ns.empty() ? name : ns + "/" + name;
}

absl::Status Informer::Sync() {
  auto list = client_.List(kind_, ns_, sel_);
  if (!list.ok()) {
    synced_.store(false);
    return list.status();
  }
  std::map<std::string, ObjectRef> fresh;
  for (auto& item : list->items) {
    auto ref = std::make_shared<const Json>(std::move(item));
    fresh[KeyOf(*ref)] = ref;
  }
  std::map<std::string, ObjectRef> old;
  {
    absl::MutexLock lock(&mu_);
    old.swap(objects_);
    objects_ = fresh;
    resource_version_ = list->resource_version;
  }
  for (const auto& [key, obj] : fresh) {
    auto it = old.find(key);
    for (auto& h : handlers_) {
      if (it == old.end()) {
        if (h.on_add) h.on_add(obj);
      } else if (h.on_update) {
        h.on_update(it->second, obj);
      }
    }
  }
  for (const auto& [key, obj] : old) {
    if (fresh.count(key)) continue;
    for (auto& h : handlers_) {
      if (h.on_delete) h.on_delete(obj);
    }
  }
  auto w = client_.Watch(kind_, ns_, sel_, list->resource_version);
  if (!w.ok()) {
    synced_.store(false);
    return w.status();
  }
  watch_ = std::move(*w);
  synced_.store(true);
  return absl::OkStatus();
}

void Informer::Apply(WatchEvent&& ev) {
  if (ev.type == "BOOKMARK") {
    absl::MutexLock lock(&mu_);
    resource_version_ = ev.Object()["metadata"].value("resourceVersion", resource_version_);
    return;
  }
  ObjectRef ref =
      ev.shared ? std::move(ev.shared) : std::make_shared<const Json>(std::move(ev.object));
  std::string key = KeyOf(*ref);
  ObjectRef old;
  {
    absl::MutexLock lock(&mu_);
    auto it = objects_.find(key);
    if (it != objects_.end()) old = it->second;
    if (ev.type == "DELETED") {
      objects_.erase(key);
    } else {
      objects_[key] = ref;
    }
    resource_version_ = api::MemberObject(*ref, "metadata").value("resourceVersion", "");
  }
  for (auto& h : handlers_) {
    if (ev.type == "DELETED") {
      if (h.on_delete) h.on_delete(old ? old : ref);
    } else if (old) {
      if (h.on_update) h.on_update(old, ref);
    } else if (h.on_add) {
      h.on_add(ref);
    }
  }
}

int Informer::Pump() {
  int n = 0;
  if (!watch_) {
    if (!Sync().ok()) return 0;
  }
  WatchEvent ev;
  while (watch_->Next(&ev, absl::ZeroDuration())) {
    if (ev.type == "ERROR") {
      watch_.reset();  // Expired or failed: re-list on the next pump.
      return n;
    }
    Apply(std::move(ev));
    ++n;
  }
  if (watch_->done()) watch_.reset();
  return n;
}

absl::Status Informer::Start() {
  if (auto st = Sync(); !st.ok()) return st;
  thread_ = std::thread([this] {
    SetThreadName("inf-" + kind_.plural);
    bool resume = false;
    while (!stop_) {
      if (!watch_ && resume) {
        // A watch that ended (its server went away) resumes from the last
        // resourceVersion seen, as client-go's reflector does; only an
        // expired one (ERROR) or a failed resume relists.
        resume = false;
        std::string rv;
        {
          absl::MutexLock lock(&mu_);
          rv = resource_version_;
        }
        if (!rv.empty()) {
          auto w = client_.Watch(kind_, ns_, sel_, rv);
          if (w.ok()) watch_ = std::move(*w);
        }
      }
      if (!watch_) {
        if (!Sync().ok()) {
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
          continue;
        }
      }
      WatchEvent ev;
      if (watch_->Next(&ev, absl::Milliseconds(200))) {
        if (ev.type == "ERROR") {
          watch_.reset();
          continue;
        }
        Apply(std::move(ev));
      } else if (watch_->done()) {
        watch_.reset();
        resume = true;
      }
    }
  });
  return absl::OkStatus();
}

void Informer::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

ObjectRef Informer::Get(const std::string& ns, const std::string& name) const {
  absl::MutexLock lock(&mu_);
  auto it = objects_.find(ns.empty() ? name : ns + "/" + name);
  return it == objects_.end() ? nullptr : it->second;
}

std::vector<ObjectRef> Informer::List(const std::string& ns) const {
  std::vector<ObjectRef> out;
  absl::MutexLock lock(&mu_);
  if (ns.empty()) {
    for (const auto& [k, v] : objects_) out.push_back(v);
    return out;
  }
  std::string prefix = ns + "/";
  for (auto it = objects_.lower_bound(prefix); it != objects_.end() &&
                                               it->first.compare(0, prefix.size(), prefix) == 0;
       ++it) {
    out.push_back(it->second);
  }
  return out;
}

std::vector<ObjectRef> Informer::ListMatching(const std::string& ns,
                                              const std::string& selector) const {
  auto sel = api::labels::LabelSelector::Parse(selector);
  std::vector<ObjectRef> out;
  if (!sel.ok()) return out;
  for (auto& o : List(ns)) {
    const Json& m = (*o)["metadata"];
    if (sel->Matches(api::MemberObject(m, "labels"))) out.push_back(o);
  }
  return out;
}

std::string Informer::ResourceVersion() const {
  absl::MutexLock lock(&mu_);
  return resource_version_;
}

}  // namespace batchd::client
