#include "client/in_process_client.h"

#include "api/meta/object_meta.h"

namespace batchd::client {

using api::Json;

const api::KindDef& Client::Kind(std::string_view group, std::string_view version,
                                 std::string_view plural) const {
  const api::KindDef* k = scheme().ByResource(group, version, plural);
  if (!k) {
    // Built-in kinds are always registered; asking for another is a programming error.
    std::abort();
  }
  return *k;
}

absl::StatusOr<std::string> Client::UpdateStatusForVersion(const api::KindDef& k, Json obj) {
  absl::StatusOr<Json> r = UpdateStatus(k, std::move(obj));
  if (!r.ok()) return r.status();
  return api::meta::GetResourceVersion(*r);
}

std::vector<absl::StatusOr<Json>> Client::UpdateStatusMany(const api::KindDef& k,
                                                           std::vector<StatusEdit> edits) {
  // Read, edit, write at that resourceVersion; a Conflict (someone wrote
  // meanwhile) starts over on the newer version, as the registry does.
  constexpr int kTries = 16;
  std::vector<absl::StatusOr<Json>> out;
  out.reserve(edits.size());
  for (StatusEdit& e : edits) {
    absl::StatusOr<Json> r = absl::AbortedError("conflict");
    for (int i = 0; i < kTries && !r.ok() && r.status().code() == absl::StatusCode::kAborted; ++i) {
      absl::StatusOr<Json> obj = Get(k, e.ns, e.name);
      if (!obj.ok()) {
        r = obj.status();
        break;
      }
      if (absl::Status st = e.edit(*obj); !st.ok()) {
        r = st;
        break;
      }
      r = UpdateStatus(k, *std::move(obj));
    }
    out.push_back(std::move(r));
  }
  return out;
}

registry::WriteOptions InProcessClient::Opts() {
  registry::WriteOptions o;
  o.field_validation = registry::FieldValidation::kIgnore;
  // A controller's status write carries the object it read with a new
  // status: only that status (and metadata) is decoded again.
  o.status_body_only = true;
  // No field manager: the registry records managedFields for the writes of
  // field managers, and the controllers' writes are too many to pay for it
  // (docs/api.md, "Field ownership of in-process writers is not recorded").
  // `field_manager_` is unused until they are.
  return o;
}

absl::StatusOr<Json> InProcessClient::Get(const api::KindDef& k, const std::string& ns,
                                          const std::string& name) {
  auto o = registry_.Get(k, ns, name);
  if (!o.ok()) return o.status();
  return (*o)->Decode();
}

absl::StatusOr<ListResult> InProcessClient::List(const api::KindDef& k, const std::string& ns,
                                                 const Selector& sel) {
  registry::ListOptions lo;
  lo.label_selector = sel.labels;
  lo.field_selector = sel.fields;
  auto r = registry_.List(k, ns, lo);
  if (!r.ok()) return r.status();
  ListResult out;
  out.resource_version = std::to_string(r->revision);
  out.items.reserve(r->items.size());
  for (const auto& o : r->items) out.items.push_back(o->Decode());
  return out;
}

absl::StatusOr<Json> InProcessClient::Create(const api::KindDef& k, const std::string& ns,
                                             Json obj) {
  return registry_.Create(k, ns, std::move(obj), Opts());
}

std::vector<absl::StatusOr<Json>> InProcessClient::CreateMany(
    const api::KindDef& k, std::vector<std::pair<std::string, Json>> objs) {
  return registry_.CreateMany(k, std::move(objs), Opts());
}

namespace {
std::string MetaString(const Json& obj, const char* field) {
  if (!obj.contains("metadata") || !obj["metadata"].is_object()) return "";
  return obj["metadata"].value(field, "");
}
}  // namespace

absl::StatusOr<Json> InProcessClient::Update(const api::KindDef& k, Json obj) {
  std::string ns = MetaString(obj, "namespace"), name = MetaString(obj, "name");
  return registry_.Update(k, ns, name, std::move(obj), false, Opts());
}

absl::StatusOr<Json> InProcessClient::UpdateStatus(const api::KindDef& k, Json obj) {
  std::string ns = MetaString(obj, "namespace"), name = MetaString(obj, "name");
  return registry_.Update(k, ns, name, std::move(obj), true, Opts());
}

absl::StatusOr<std::string> InProcessClient::UpdateStatusForVersion(const api::KindDef& k,
                                                                    Json obj) {
  std::string ns = MetaString(obj, "namespace"), name = MetaString(obj, "name");
  registry::WriteOptions o = Opts();
  o.version_only = true;
  absl::StatusOr<Json> r = registry_.Update(k, ns, name, std::move(obj), true, o);
  if (!r.ok()) return r.status();
  return api::meta::GetResourceVersion(*r);
}

std::vector<absl::StatusOr<Json>> InProcessClient::UpdateStatusMany(const api::KindDef& k,
                                                                    std::vector<StatusEdit> edits) {
  std::vector<registry::Registry::StatusEdit> r;
  r.reserve(edits.size());
  for (StatusEdit& e : edits) r.push_back({std::move(e.ns), std::move(e.name), std::move(e.edit)});
  return registry_.UpdateStatusMany(k, std::move(r), Opts());
}

absl::StatusOr<Json> InProcessClient::MergePatch(const api::KindDef& k, const std::string& ns,
                                                 const std::string& name, const Json& patch,
                                                 bool status) {
  return registry_.Patch(k, ns, name, registry::PatchType::kMerge, patch, status, Opts());
}

absl::Status InProcessClient::Delete(const api::KindDef& k, const std::string& ns,
                                     const std::string& name, const DeleteOptions& opts) {
  registry::DeleteOptions d;
  d.grace_period_seconds = opts.grace_period_seconds;
  d.propagation_policy = opts.propagation_policy;
  d.precondition_uid = opts.precondition_uid;
  return registry_.Delete(k, ns, name, d).status();
}

namespace {

class RegistryWatchStream : public WatchStream {
 public:
  explicit RegistryWatchStream(std::unique_ptr<registry::Watcher> w) : w_(std::move(w)) {}
  bool Next(WatchEvent* ev, absl::Duration timeout) override {
    registry::Watcher::Event e;
    if (!w_->Next(&e, timeout)) return false;
    ev->type = e.type;
    if (e.type == "ERROR" || !e.object) {
      ev->object = e.error;
      ev->shared.reset();
      ev->bytes.reset();
    } else {
      ev->object = nullptr;
      ev->shared = e.object->Shared();
      // Aliases the cached object: its bytes live as long as this pointer.
      ev->bytes = std::shared_ptr<const std::string>(e.object, &e.object->json);
    }
    return true;
  }
  bool done() const override { return w_->done(); }

 private:
  std::unique_ptr<registry::Watcher> w_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<WatchStream>> InProcessClient::Watch(
    const api::KindDef& k, const std::string& ns, const Selector& sel,
    const std::string& resource_version) {
  registry::ListOptions lo;
  lo.label_selector = sel.labels;
  lo.field_selector = sel.fields;
  lo.resource_version = resource_version;
  lo.decodes = true;
  auto w = registry_.Watch(k, ns, lo);
  if (!w.ok()) return w.status();
  return std::unique_ptr<WatchStream>(new RegistryWatchStream(std::move(*w)));
}

std::vector<absl::StatusOr<Json>> InProcessClient::WriteChain(std::vector<ChainedWrite> writes) {
  std::vector<registry::Registry::ChainedWrite> chain;
  chain.reserve(writes.size());
  for (ChainedWrite& w : writes) {
    chain.push_back({w.kind, std::move(w.obj), w.status, w.create, w.version_only});
  }
  return registry_.WriteChain(std::move(chain), Opts());
}

}  // namespace batchd::client
