#include "client/informer.h"

#include <algorithm>

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

void Informer::SetCompactWhen(std::function<bool(const Json&)> settled) {
  settled_ = std::move(settled);
}

Informer::Entry Informer::MakeEntry(const ObjectRef& ref,
                                    std::shared_ptr<const std::string> bytes) const {
  Entry e;
  if (settled_ && ref->is_object() && settled_(*ref)) {
    e.bytes = bytes ? std::move(bytes) : std::make_shared<const std::string>(ref->dump());
    e.decoded = ref;  // shared while the caller's handlers (or readers) hold it
  } else {
    e.obj = ref;
  }
  return e;
}

ObjectRef Informer::Resolve(const std::string& key, const Entry& e) const {
  if (e.obj) return e.obj;
  if (!e.bytes) return nullptr;
  if (ObjectRef live = e.decoded.lock()) return live;
  Json parsed = Json::parse(*e.bytes, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    // Bytes this process serialized (or the watch cache holds): never expected.
    BATCHD_LOG_ERROR("informer {}: cannot decode the kept bytes of {}", kind_.plural, key);
    return nullptr;
  }
  ObjectRef ref = std::make_shared<const Json>(std::move(parsed));
  absl::MutexLock lock(&mu_);
  auto it = objects_.find(key);
  if (it != objects_.end() && it->second.bytes == e.bytes) {
    // Another reader may have decoded it meanwhile: share theirs.
    if (ObjectRef other = it->second.decoded.lock()) return other;
    it->second.decoded = ref;
  }
  return ref;
}

size_t Informer::CompactCount() const {
  absl::MutexLock lock(&mu_);
  size_t n = 0;
  for (const auto& [key, e] : objects_) n += e.obj == nullptr;
  return n;
}

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
  // The decodings, held for the handlers below; the map keeps settled ones compact.
  std::map<std::string, ObjectRef> fresh;
  std::map<std::string, Entry> entries;
  for (auto& item : list->items) {
    auto ref = std::make_shared<const Json>(std::move(item));
    std::string key = KeyOf(*ref);
    entries[key] = MakeEntry(ref, nullptr);
    fresh[key] = std::move(ref);
  }
  std::map<std::string, Entry> old;
  {
    absl::MutexLock lock(&mu_);
    old.swap(objects_);
    objects_ = std::move(entries);
    resource_version_ = list->resource_version;
  }
  for (const auto& [key, obj] : fresh) {
    auto it = old.find(key);
    ObjectRef prev = it == old.end() || handlers_.empty() ? nullptr : Resolve("", it->second);
    for (auto& h : handlers_) {
      if (it == old.end()) {
        if (h.on_add) h.on_add(obj);
      } else if (h.on_update && prev) {
        h.on_update(prev, obj);
      }
    }
  }
  for (const auto& [key, e] : old) {
    if (fresh.count(key) || handlers_.empty()) continue;
    ObjectRef obj = Resolve("", e);
    if (!obj) continue;
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
  Entry entry;
  if (ev.type != "DELETED") entry = MakeEntry(ref, std::move(ev.bytes));
  Entry old_entry;
  bool had_old = false;
  {
    absl::MutexLock lock(&mu_);
    auto it = objects_.find(key);
    if (it != objects_.end()) {
      had_old = true;
      old_entry = std::move(it->second);  // replaced or erased below
    }
    if (ev.type == "DELETED") {
      if (it != objects_.end()) objects_.erase(it);
    } else if (it != objects_.end()) {
      it->second = std::move(entry);
    } else {
      objects_.emplace(std::move(key), std::move(entry));
    }
    resource_version_ = api::MemberObject(*ref, "metadata").value("resourceVersion", "");
  }
  // The previous state, for the handlers (decoded again if it was compact).
  ObjectRef old = had_old && !handlers_.empty() ? Resolve("", old_entry) : nullptr;
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
  std::string key = ns.empty() ? name : ns + "/" + name;
  Entry e;
  {
    absl::MutexLock lock(&mu_);
    auto it = objects_.find(key);
    if (it == objects_.end()) return nullptr;
    if (it->second.obj) return it->second.obj;
    e = it->second;
  }
  return Resolve(key, e);
}

ObjectRef Informer::GetUnlessCompact(const std::string& ns, const std::string& name) const {
  std::string key = ns.empty() ? name : ns + "/" + name;
  absl::MutexLock lock(&mu_);
  auto it = objects_.find(key);
  return it == objects_.end() ? nullptr : it->second.obj;
}

std::vector<ObjectRef> Informer::List(const std::string& ns) const {
  std::vector<ObjectRef> out;
  // Compact entries are decoded after the lock is released.
  std::vector<std::pair<size_t, std::pair<std::string, Entry>>> compact;
  {
    absl::MutexLock lock(&mu_);
    auto take = [&](const std::string& key, const Entry& e) {
      if (e.obj) {
        out.push_back(e.obj);
        return;
      }
      compact.push_back({out.size(), {key, e}});
      out.push_back(nullptr);
    };
    if (ns.empty()) {
      for (const auto& [k, v] : objects_) take(k, v);
    } else {
      std::string prefix = ns + "/";
      for (auto it = objects_.lower_bound(prefix);
           it != objects_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
        take(it->first, it->second);
      }
    }
  }
  if (compact.empty()) return out;
  for (const auto& [at, ke] : compact) out[at] = Resolve(ke.first, ke.second);
  out.erase(std::remove(out.begin(), out.end(), nullptr), out.end());
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
