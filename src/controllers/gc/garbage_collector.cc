// The garbage collector: see gc_controller.h for the semantics.
//
// Work items are objects, keyed "<kind index>|<namespace>|<name>". An item is
// queued when it has owner references (to check its owners), when it is
// being deleted with a GC finalizer (to process its dependents), and when
// an owner or dependent of it goes away.
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "api/json_access.h"
#include "api/meta/object_meta.h"
#include "api/meta/object_writers.h"
#include "client/update_loop.h"
#include "common/status_macros.h"
#include "controllers/gc/gc_controller.h"
#include "registry/errors.h"

namespace batchd::controllers {

using reconcile::Controller;
using reconcile::ControllerContext;
using reconcile::Reconciler;
using reconcile::Result;

namespace {

using api::Json;
using client::ObjectRef;
namespace meta = api::meta;

constexpr char kOrphanFinalizer[] = "orphan";
constexpr char kForegroundFinalizer[] = "foregroundDeletion";
// Optimistic-concurrency retries of one metadata edit before giving up to
// the queue's backoff.
constexpr int kUpdateAttempts = 5;

std::string Reason(const absl::Status& s) { return registry::GetPayload(s).reason; }

bool DeletingDependents(const Json& obj) {
  return meta::IsBeingDeleted(obj) && meta::HasFinalizer(obj, kForegroundFinalizer);
}

bool HasGcFinalizer(const Json& obj) {
  return meta::IsBeingDeleted(obj) && (meta::HasFinalizer(obj, kOrphanFinalizer) ||
                                       meta::HasFinalizer(obj, kForegroundFinalizer));
}

std::vector<std::string> OwnerUids(const Json& obj) {
  std::vector<std::string> uids;
  for (const auto& r : meta::GetOwnerReferences(obj)) uids.push_back(r.uid);
  return uids;
}

// "batch/v1" -> "batch"; "v1" -> "".
std::string GroupOf(const std::string& api_version) {
  size_t slash = api_version.find('/');
  return slash == std::string::npos ? "" : api_version.substr(0, slash);
}

class GarbageCollector : public Reconciler {
 public:
  explicit GarbageCollector(ControllerContext& ctx);
  // Registers the informer handlers that feed `c` (the controller running
  // `self`); the handlers share ownership of `self`.
  static void Bind(const std::shared_ptr<GarbageCollector>& self, Controller* c);
  absl::StatusOr<Result> Reconcile(const std::string& key) override;

 private:
  struct Watched {
    const api::KindDef* kind;
    client::Informer* informer;
  };
  // Where an object is, for the index.
  struct Node {
    size_t kind;
    std::string ns, name;
    std::vector<std::string> owners;
  };
  enum class OwnerState { kSolid, kDangling, kWaiting };

  // Index maintenance (informer threads) and queueing.
  void Upsert(size_t kind, const Json& obj);
  void Remove(const Json& obj);
  void EnqueueObject(size_t kind, const Json& obj);
  void EnqueueUids(const std::vector<std::string>& uids);
  std::vector<std::string> DependentsOf(const std::string& uid);

  absl::StatusOr<Result> AttemptToDelete(size_t kind, const Json& obj);
  // Whether `obj` (not being deleted) has every owner alive and not deleting
  // its dependents in the informers' caches: StateOf's kSolid without a
  // live read, so AttemptToDelete would do nothing.
  bool OwnersSolidInCache(size_t dep_kind, const Json& obj,
                          const std::vector<meta::OwnerReference>& refs) const;
  absl::StatusOr<OwnerState> StateOf(const meta::OwnerReference& ref, size_t dep_kind,
                                     const std::string& ns);
  absl::Status OrphanDependents(const Json& owner);
  absl::StatusOr<Result> ProcessForeground(size_t kind, const Json& owner);
  // Live read-modify-write of one object's metadata with conflict retries.
  absl::Status EditMeta(size_t kind, const std::string& ns, const std::string& name,
                        const std::string& uid, const std::function<bool(Json&)>& edit);
  absl::Status DeleteObject(size_t kind, const Json& obj, const std::string& policy);

  ControllerContext& ctx_;
  Controller* controller_ = nullptr;
  std::vector<Watched> kinds_;
  std::map<std::pair<std::string, std::string>, size_t> by_group_kind_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, Node> nodes_ ABSL_GUARDED_BY(mu_);  // By uid.
  absl::flat_hash_map<std::string, absl::flat_hash_set<std::string>> dependents_ ABSL_GUARDED_BY(mu_);
};

GarbageCollector::GarbageCollector(ControllerContext& ctx) : ctx_(ctx) {
  std::set<std::pair<std::string, std::string>> seen;  // (group, plural): one version each.
  for (const auto& k : ctx.client.scheme().All()) {
    bool listable = false, watchable = false;
    for (const auto& v : k->verbs) {
      listable |= v == "list";
      watchable |= v == "watch";
    }
    if (k->kind == "Event" || !listable || !watchable) continue;
    if (!seen.insert({k->group, k->plural}).second) continue;
    by_group_kind_[{k->group, k->kind}] = kinds_.size();
    kinds_.push_back({k.get(), &ctx.informers.For(*k)});
  }
}

void GarbageCollector::Bind(const std::shared_ptr<GarbageCollector>& self, Controller* c) {
  self->controller_ = c;
  for (size_t i = 0; i < self->kinds_.size(); ++i) {
    client::EventHandlers h;
    h.on_add = [self, i](const ObjectRef& o) {
      self->Upsert(i, *o);
      if (HasGcFinalizer(*o)) {
        self->EnqueueObject(i, *o);
        return;
      }
      std::vector<meta::OwnerReference> refs = meta::GetOwnerReferences(*o);
      // A new dependent of owners that are all alive (the usual pod of a
      // Job) would be reconciled to nothing: an owner's deletion enqueues it
      // later (its on_delete, or the foreground owner's own processing).
      if (!refs.empty() && !self->OwnersSolidInCache(i, *o, refs)) self->EnqueueObject(i, *o);
    };
    h.on_update = [self, i](const ObjectRef& old_obj, const ObjectRef& o) {
      // The index keeps uid, place and owners: most updates (every status
      // write) change none, which is told without parsing the references.
      const Json& old_meta = api::MemberObject(*old_obj, "metadata");
      const Json& new_meta = api::MemberObject(*o, "metadata");
      if (api::StringMember(old_meta, "uid") == api::StringMember(new_meta, "uid") &&
          api::Member(old_meta, "ownerReferences") == api::Member(new_meta, "ownerReferences")) {
        if (HasGcFinalizer(*o)) self->EnqueueObject(i, *o);
        return;
      }
      self->Upsert(i, *o);
      std::vector<std::string> before = OwnerUids(*old_obj), after = OwnerUids(*o);
      if (before != after || HasGcFinalizer(*o)) self->EnqueueObject(i, *o);
      // An owner deleted in the foreground may wait for this reference to go.
      if (before != after) self->EnqueueUids(before);
    };
    h.on_delete = [self](const ObjectRef& o) {
      self->Remove(*o);
      self->EnqueueUids(self->DependentsOf(meta::GetUid(*o)));
      self->EnqueueUids(OwnerUids(*o));
    };
    self->kinds_[i].informer->AddHandlers(std::move(h));
  }
}

void GarbageCollector::Upsert(size_t kind, const Json& obj) {
  std::string uid = meta::GetUid(obj);
  if (uid.empty()) return;
  std::vector<std::string> owners = OwnerUids(obj);
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(uid);
  if (it != nodes_.end()) {
    for (const auto& o : it->second.owners) {
      auto d = dependents_.find(o);
      if (d == dependents_.end()) continue;
      d->second.erase(uid);
      if (d->second.empty()) dependents_.erase(d);
    }
  }
  for (const auto& o : owners) dependents_[o].insert(uid);
  nodes_[uid] = Node{kind, meta::GetNamespace(obj), meta::GetName(obj), std::move(owners)};
}

void GarbageCollector::Remove(const Json& obj) {
  std::string uid = meta::GetUid(obj);
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(uid);
  if (it == nodes_.end()) return;
  for (const auto& o : it->second.owners) {
    auto d = dependents_.find(o);
    if (d == dependents_.end()) continue;
    d->second.erase(uid);
    if (d->second.empty()) dependents_.erase(d);
  }
  nodes_.erase(it);
}

void GarbageCollector::EnqueueObject(size_t kind, const Json& obj) {
  controller_->queue().Add(
      absl::StrCat(kind, "|", meta::GetNamespace(obj), "|", meta::GetName(obj)));
}

void GarbageCollector::EnqueueUids(const std::vector<std::string>& uids) {
  std::vector<std::string> keys;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& u : uids) {
      auto it = nodes_.find(u);
      if (it == nodes_.end()) continue;
      keys.push_back(absl::StrCat(it->second.kind, "|", it->second.ns, "|", it->second.name));
    }
  }
  for (const auto& k : keys) controller_->queue().Add(k);
}

std::vector<std::string> GarbageCollector::DependentsOf(const std::string& uid) {
  absl::MutexLock lock(&mu_);
  auto it = dependents_.find(uid);
  if (it == dependents_.end()) return {};
  return std::vector<std::string>(it->second.begin(), it->second.end());
}

absl::StatusOr<Result> GarbageCollector::Reconcile(const std::string& key) {
  std::vector<std::string> parts = absl::StrSplit(key, '|');
  size_t kind = 0;
  if (parts.size() != 3 || !absl::SimpleAtoi(parts[0], &kind) || kind >= kinds_.size()) {
    return Result::Done();
  }
  ObjectRef obj = kinds_[kind].informer->Get(parts[1], parts[2]);
  if (!obj) return Result::Done();
  if (meta::IsBeingDeleted(*obj) && meta::HasFinalizer(*obj, kOrphanFinalizer)) {
    BATCHD_RETURN_IF_ERROR(OrphanDependents(*obj));
    BATCHD_RETURN_IF_ERROR(EditMeta(kind, parts[1], parts[2], meta::GetUid(*obj), [](Json& o) {
      return meta::RemoveFinalizer(o, kOrphanFinalizer);
    }));
    return Result::Done();
  }
  if (DeletingDependents(*obj)) return ProcessForeground(kind, *obj);
  if (meta::GetOwnerReferences(*obj).empty()) return Result::Done();
  return AttemptToDelete(kind, *obj);
}

// Classifies one owner of a dependent: gone (or replaced by another uid),
// being deleted in the foreground, or alive. A cache miss is confirmed with
// a live read: the owner's informer may lag behind the dependent's.
absl::StatusOr<GarbageCollector::OwnerState> GarbageCollector::StateOf(
    const meta::OwnerReference& ref, size_t dep_kind, const std::string& ns) {
  auto it = by_group_kind_.find({GroupOf(ref.api_version), ref.kind});
  if (it == by_group_kind_.end()) return OwnerState::kSolid;  // Unknown kind: never collect.
  const Watched& w = kinds_[it->second];
  if (w.kind->namespaced && !kinds_[dep_kind].kind->namespaced) return OwnerState::kSolid;
  std::string owner_ns = w.kind->namespaced ? ns : "";
  // The cached owner is read in place (shared, not copied).
  ObjectRef owner = w.informer->Get(owner_ns, ref.name);
  if (!owner || meta::GetUid(*owner) != ref.uid) {
    auto live = ctx_.client.Get(*w.kind, owner_ns, ref.name);
    if (!live.ok() && Reason(live.status()) == "NotFound") return OwnerState::kDangling;
    if (!live.ok()) return live.status();
    if (meta::GetUid(*live) != ref.uid) return OwnerState::kDangling;
    owner = std::make_shared<const Json>(*std::move(live));
  }
  return DeletingDependents(*owner) ? OwnerState::kWaiting : OwnerState::kSolid;
}

bool GarbageCollector::OwnersSolidInCache(size_t dep_kind, const Json& obj,
                                          const std::vector<meta::OwnerReference>& refs) const {
  if (meta::IsBeingDeleted(obj)) return false;
  const std::string ns = meta::GetNamespace(obj);
  for (const auto& ref : refs) {
    auto it = by_group_kind_.find({GroupOf(ref.api_version), ref.kind});
    if (it == by_group_kind_.end()) continue;  // Unknown kind: never collected.
    const Watched& w = kinds_[it->second];
    if (w.kind->namespaced && !kinds_[dep_kind].kind->namespaced) continue;
    ObjectRef owner = w.informer->Get(w.kind->namespaced ? ns : "", ref.name);
    if (!owner || meta::GetUid(*owner) != ref.uid || DeletingDependents(*owner)) return false;
  }
  return true;
}

absl::StatusOr<Result> GarbageCollector::AttemptToDelete(size_t kind, const Json& obj) {
  if (meta::IsBeingDeleted(obj) && !DeletingDependents(obj)) return Result::Done();
  std::string ns = meta::GetNamespace(obj);
  std::set<std::string> dangling, waiting;
  bool solid = false;
  for (const auto& ref : meta::GetOwnerReferences(obj)) {
    BATCHD_ASSIGN_OR_RETURN(OwnerState st, StateOf(ref, kind, ns));
    if (st == OwnerState::kSolid) solid = true;
    if (st == OwnerState::kDangling) dangling.insert(ref.uid);
    if (st == OwnerState::kWaiting) waiting.insert(ref.uid);
  }
  if (solid) {
    if (dangling.empty() && waiting.empty()) return Result::Done();
    // Keep the object for its live owners; drop the references to the rest.
    std::set<std::string, std::less<>> drop(dangling.begin(), dangling.end());
    drop.insert(waiting.begin(), waiting.end());
    BATCHD_RETURN_IF_ERROR(EditMeta(kind, ns, meta::GetName(obj), meta::GetUid(obj), [&](Json& o) {
      return meta::RemoveOwnerReferences(o,
                                         [&](std::string_view uid) { return drop.count(uid) > 0; });
    }));
    return Result::Done();
  }
  std::string policy = "Background";
  if (!waiting.empty() && !DependentsOf(meta::GetUid(obj)).empty()) policy = "Foreground";
  if (meta::HasFinalizer(obj, kOrphanFinalizer)) policy = "Orphan";
  if (meta::HasFinalizer(obj, kForegroundFinalizer)) policy = "Foreground";
  BATCHD_RETURN_IF_ERROR(DeleteObject(kind, obj, policy));
  return Result::Done();
}

absl::Status GarbageCollector::OrphanDependents(const Json& owner) {
  std::string owner_uid = meta::GetUid(owner);
  for (const auto& dep_uid : DependentsOf(owner_uid)) {
    Node n;
    {
      absl::MutexLock lock(&mu_);
      auto it = nodes_.find(dep_uid);
      if (it == nodes_.end()) continue;
      n = it->second;
    }
    BATCHD_RETURN_IF_ERROR(EditMeta(n.kind, n.ns, n.name, dep_uid, [&owner_uid](Json& o) {
      return meta::RemoveOwnerReferences(o, [&](std::string_view uid) { return uid == owner_uid; });
    }));
  }
  return absl::OkStatus();
}

// Deletes the dependents of a foreground-deleted owner (by queueing them:
// AttemptToDelete sees this owner as "waiting") and lets the owner go once
// no blocking dependent is left.
absl::StatusOr<Result> GarbageCollector::ProcessForeground(size_t kind, const Json& owner) {
  std::string owner_uid = meta::GetUid(owner);
  bool blocked = false;
  for (const auto& dep_uid : DependentsOf(owner_uid)) {
    Node n;
    {
      absl::MutexLock lock(&mu_);
      auto it = nodes_.find(dep_uid);
      if (it == nodes_.end()) continue;
      n = it->second;
    }
    ObjectRef dep = kinds_[n.kind].informer->Get(n.ns, n.name);
    if (!dep || meta::GetUid(*dep) != dep_uid) continue;
    for (const auto& ref : meta::GetOwnerReferences(*dep)) {
      if (ref.uid == owner_uid && ref.block_owner_deletion) blocked = true;
    }
    if (!meta::IsBeingDeleted(*dep) || DeletingDependents(*dep)) EnqueueObject(n.kind, *dep);
  }
  if (blocked) return Result::Done();  // A dependent's deletion re-queues the owner.
  BATCHD_RETURN_IF_ERROR(
      EditMeta(kind, meta::GetNamespace(owner), meta::GetName(owner), owner_uid,
               [](Json& o) { return meta::RemoveFinalizer(o, kForegroundFinalizer); }));
  return Result::Done();
}

absl::Status GarbageCollector::EditMeta(size_t kind, const std::string& ns, const std::string& name,
                                        const std::string& uid,
                                        const std::function<bool(Json&)>& edit) {
  client::UpdateLoopOptions opts;
  opts.attempts = kUpdateAttempts;
  // Gone or replaced by a namesake: nothing left to edit.
  return client::UpdateLoop(ctx_.client, *kinds_[kind].kind, ns, name, uid, std::nullopt, edit,
                            opts)
      .status();
}

absl::Status GarbageCollector::DeleteObject(size_t kind, const Json& obj,
                                            const std::string& policy) {
  client::DeleteOptions opts;
  opts.propagation_policy = policy;
  opts.precondition_uid = meta::GetUid(obj);
  absl::Status st =
      ctx_.client.Delete(*kinds_[kind].kind, meta::GetNamespace(obj), meta::GetName(obj), opts);
  // Gone already, or replaced by a namesake (uid precondition): nothing to do.
  if (!st.ok() && (Reason(st) == "NotFound" || Reason(st) == "Conflict")) return absl::OkStatus();
  return st;
}

}  // namespace

void AddGarbageCollector(ControllerContext& ctx) {
  // The reconciler is kept alive by the handlers the manager's informers
  // hold (they outlive its controllers).
  auto gc = std::make_shared<GarbageCollector>(ctx);
  Controller& c =
      ctx.manager.AddController(std::make_unique<Controller>("garbage-collector", *gc, ctx.clock));
  GarbageCollector::Bind(gc, &c);
}

}  // namespace batchd::controllers
