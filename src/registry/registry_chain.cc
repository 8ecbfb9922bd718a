// Registry::WriteChain: creates and updates that each depend on the ones
// before them, in one store commit (see registry.h). Each is prepared by
// Create / Update itself as a dry run (every rule of a real write:
// normalization, mutators, managed fields, validation), then the prepared
// objects are written with one chained store UpdateMany.
#include "absl/strings/str_cat.h"
#include "api/codec/codec.h"
#include "api/json_access.h"
#include "registry/errors.h"
#include "registry/registry.h"

namespace batchd::registry {

using api::Json;

namespace {

std::string MetaString(const Json& obj, const char* field) {
  return api::CopyStringMember(api::MemberObject(obj, "metadata"), field);
}

absl::Status NotWritten(const api::KindDef& k, const std::string& name) {
  return Conflict(k, name, "not written: an update before it in its chain failed");
}

// `a` == `b` but for metadata.resourceVersion (an update that changes
// nothing is not written, as in Update).
bool SameButVersion(const Json& a, const Json& b) {
  if (!a.is_object() || !b.is_object() || a.size() != b.size()) return a == b;
  for (auto ia = a.begin(); ia != a.end(); ++ia) {
    auto ib = b.find(ia.key());
    if (ib == b.end()) return false;
    if (ia.key() != "metadata" || !ia->is_object() || !ib->is_object()) {
      if (*ia != *ib) return false;
      continue;
    }
    size_t compared = 0;
    for (auto im = ia->begin(); im != ia->end(); ++im) {
      if (im.key() == "resourceVersion") continue;
      auto jm = ib->find(im.key());
      if (jm == ib->end() || *im != *jm) return false;
      ++compared;
    }
    if (compared != ib->size() - (ib->contains("resourceVersion") ? 1 : 0)) return false;
  }
  return true;
}

}  // namespace

std::vector<absl::StatusOr<Json>> Registry::WriteChain(std::vector<ChainedWrite> writes,
                                                       const WriteOptions& opts) {
  const size_t n = writes.size();
  std::vector<absl::StatusOr<Json>> out;
  out.reserve(n);
  std::vector<std::string> names;  // For errors: the objects move into the writes.
  names.reserve(n);
  for (const ChainedWrite& w : writes) names.push_back(MetaString(w.obj, "name"));
  WriteOptions dry = opts;
  dry.dry_run = true;
  // The prepared writes, in order. What is not deferred (a dry run, a
  // converted kind, a deleting object) is written, with everything after
  // it, one by one once the chain before it landed.
  std::vector<size_t> batched;  // Index into `out` of each op.
  std::vector<store::Store::UpdateOp> ops;
  std::vector<WatchCache::DecodedOffer> offers;
  size_t i = 0;
  for (; i < n && !opts.dry_run; ++i) {
    ChainedWrite& w = writes[i];
    const api::KindDef& k = *w.kind;
    if (k.storage) break;
    const std::string ns = MetaString(w.obj, "namespace");
    if (w.create) {
      // Create's every step but the store's (a dry run draws the name).
      absl::StatusOr<Json> r = Create(k, ns, std::move(w.obj), dry);
      if (!r.ok()) {
        out.push_back(std::move(r));
        ++i;
        break;
      }
      names[i] = MetaString(*r, "name");
      std::string key = StoreKey(k, ns, names[i]);
      std::string bytes = api::DumpCompact(*r);
      offers.push_back(cache_->OfferDecoded(key, bytes, *r));
      store::Store::UpdateOp op{std::move(key), std::move(bytes), 0, /*after_previous=*/true};
      op.create = true;
      ops.push_back(std::move(op));
      batched.push_back(out.size());
      out.push_back(std::move(r));
      continue;
    }
    const std::string rv = MetaString(w.obj, "resourceVersion");
    if (rv.empty()) {
      out.push_back(BadRequest("an update of a chain needs metadata.resourceVersion"));
      ++i;
      break;
    }
    std::string key = StoreKey(k, ns, names[i]);
    ObjectPtr current = cache_->Get(key);
    if (current == nullptr || std::to_string(current->revision) != rv) {
      out.push_back(current == nullptr ? NotFound(k, names[i]) : StaleConflict(k, names[i]));
      ++i;
      break;
    }
    // A deleting object's update may be its delete (its last finalizer
    // gone): written on its own, below. One that starts deleting after this
    // fails the store's revision check.
    if (api::MemberObject(*current->Shared(), "metadata").contains("deletionTimestamp")) break;
    const int64_t revision = current->revision;
    absl::StatusOr<Json> r = Update(k, ns, names[i], std::move(w.obj), w.status, dry);
    if (!r.ok()) {
      out.push_back(std::move(r));
      ++i;
      break;
    }
    (*r)["metadata"].erase("resourceVersion");
    if (SameButVersion(*r, *current->Shared())) {
      (*r)["metadata"]["resourceVersion"] = rv;  // Nothing to write.
    } else {
      std::string bytes = api::DumpCompact(*r);
      offers.push_back(OfferWritten(key, bytes, *r, w.version_only));
      ops.push_back({std::move(key), std::move(bytes), revision, /*after_previous=*/true});
      batched.push_back(out.size());
    }
    out.push_back(std::move(r));
  }
  if (!ops.empty()) {
    std::vector<absl::StatusOr<store::KeyValue>> written = store_.UpdateMany(std::move(ops));
    offers.clear();
    for (size_t j = 0; j < batched.size(); ++j) {
      const size_t at = batched[j];
      if (j < written.size() && written[j].ok()) {
        (*out[at])["metadata"]["resourceVersion"] = std::to_string(written[j]->mod_revision);
        continue;
      }
      // The first failure: what came before it landed, so Aborted is a
      // stale revision (written since it was prepared).
      const ChainedWrite& w = writes[at];
      const api::KindDef& k = *w.kind;
      const absl::Status st =
          j < written.size() ? written[j].status() : absl::InternalError("no store result");
      if (w.create) {
        out[at] = absl::IsAlreadyExists(st) ? AlreadyExists(k, names[at]) : StoreUnavailable(st);
      } else {
        out[at] = st.code() == absl::StatusCode::kAborted ? StaleConflict(k, names[at])
                                                          : StoreWriteError(k, names[at], st);
      }
      for (size_t later = at + 1; later < out.size(); ++later) {
        out[later] = NotWritten(*writes[later].kind, names[later]);
      }
      break;
    }
  }
  bool failed = false;
  for (const auto& r : out) failed = failed || !r.ok();
  for (; i < n; ++i) {
    ChainedWrite& w = writes[i];
    const api::KindDef& k = *w.kind;
    if (failed) {
      out.push_back(NotWritten(k, names[i]));
      continue;
    }
    const std::string ns = MetaString(w.obj, "namespace");
    WriteOptions one = opts;
    one.version_only = w.version_only;
    out.push_back(w.create ? Create(k, ns, std::move(w.obj), opts)
                           : Update(k, ns, names[i], std::move(w.obj), w.status, one));
    failed = !out.back().ok();
  }
  return out;
}

}  // namespace batchd::registry
