// Registry: admission mutators and serving a resource in more than one
// version (KindDef::storage): conversion of requests to the storage version
// and of results, list items and watch events back.
#include "absl/synchronization/mutex.h"
#include "api/codec/codec.h"
#include "registry/errors.h"
#include "registry/internal/versions.h"
#include "registry/registry.h"

namespace batchd::registry {

using api::Json;

void Registry::AddMutator(std::string group_resource, Mutator m) {
  absl::MutexLock lock(&mutators_mu_);
  auto next = mutators_ ? std::make_shared<std::map<std::string, std::vector<Mutator>>>(*mutators_)
                        : std::make_shared<std::map<std::string, std::vector<Mutator>>>();
  (*next)[group_resource].push_back(std::move(m));
  mutators_ = std::move(next);
}

absl::Status Registry::RunMutators(const api::KindDef& k, Json& obj, const Json* old) {
  std::shared_ptr<const std::map<std::string, std::vector<Mutator>>> all;
  {
    absl::MutexLock lock(&mutators_mu_);
    all = mutators_;
  }
  if (!all) return absl::OkStatus();
  auto it = all->find(k.GroupResource());
  if (it == all->end()) return absl::OkStatus();
  for (const Mutator& m : it->second) {
    absl::Status st = m(obj, old);
    if (!st.ok()) return st;
    if (!obj.is_object()) return Internal("an admission mutator did not return an object");
  }
  return absl::OkStatus();
}

ObjectPtr Registry::Served(const api::KindDef& k, ObjectPtr o) const {
  if (!k.storage || !o || !k.from_storage) return o;
  Json j = o->Decode();
  if (j.contains("metadata") && j["metadata"].is_object()) j["metadata"].erase("resourceVersion");
  k.from_storage(j);
  return cache_->MakeObject(o->key, api::DumpCompact(j), o->revision);
}

absl::StatusOr<Json> Registry::Served(const api::KindDef& k, absl::StatusOr<Json> j) const {
  if (j.ok() && k.storage && k.from_storage) k.from_storage(*j);
  return j;
}

absl::StatusOr<Json> Registry::CreateConverted(const api::KindDef& k, std::string_view ns,
                                               Json obj, const WriteOptions& opts) {
  if (auto st = NormalizeBody(k, obj, opts); !st.ok()) return st;
  k.to_storage(obj);
  WriteOptions inner = opts;
  inner.duplicate_fields.clear();  // Reported by the outer decode already.
  return Served(k, Create(*k.storage, ns, std::move(obj), inner));
}

absl::StatusOr<Json> Registry::UpdateConverted(const api::KindDef& k, std::string_view ns,
                                               std::string_view name, Json obj, bool status,
                                               const WriteOptions& opts) {
  if (auto st = NormalizeBody(k, obj, opts); !st.ok()) return st;
  k.to_storage(obj);
  WriteOptions inner = opts;
  inner.duplicate_fields.clear();
  inner.version_only = false;  // Served converts the whole object.
  return Served(k, Update(*k.storage, ns, name, std::move(obj), status, inner));
}

namespace {

// Converts the objects of another watcher's events to a served version.
class ConvertingWatcher : public Watcher {
 public:
  ConvertingWatcher(std::unique_ptr<Watcher> inner,
                    std::function<ObjectPtr(ObjectPtr)> convert)
      : inner_(std::move(inner)), convert_(std::move(convert)) {}

  bool Next(Event* ev, absl::Duration timeout) override {
    if (!inner_->Next(ev, timeout)) return false;
    if (ev->object) ev->object = convert_(ev->object);
    return true;
  }
  bool done() const override { return inner_->done(); }
  int64_t Revision() const override { return inner_->Revision(); }

 private:
  std::unique_ptr<Watcher> inner_;
  std::function<ObjectPtr(ObjectPtr)> convert_;
};

}  // namespace

namespace internal {

std::unique_ptr<Watcher> NewConvertingWatcher(std::unique_ptr<Watcher> inner,
                                              std::function<ObjectPtr(ObjectPtr)> convert) {
  return std::make_unique<ConvertingWatcher>(std::move(inner), std::move(convert));
}

}  // namespace internal

}  // namespace batchd::registry
