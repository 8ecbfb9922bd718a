// "resource-in-use": Kueue's `kueue.k8s.io/resource-in-use` finalizer on
// ClusterQueues, ResourceFlavors and AdmissionChecks (see controllers.h).
// Added to every live object; removed from one being deleted once nothing
// uses it: no unfinished workload holds quota in the ClusterQueue, no
// ClusterQueue references the flavor or check.
#include <set>
#include <string>

#include "api/json_access.h"
#include "api/kueue/kueue.h"
#include "api/meta/compare.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "common/logging.h"
#include "controllers/admissioncheck/admission_checks.h"
#include "controllers/admissioncheck/internal/controllers_impl.h"

namespace batchd::controllers::admissioncheck::internal {

using api::MemberArray;
using api::MemberObject;
using api::StringMember;
using client::ObjectRef;
using reconcile::Result;

ResourceInUse::ResourceInUse(reconcile::ControllerContext& ctx)
    : ctx_(ctx),
      cq_kind_(ctx.client.Kind(api::kueue::kGroup, api::kueue::kStorageVersion,
                               api::kueue::kClusterQueues)),
      rf_kind_(ctx.client.Kind(api::kueue::kGroup, api::kueue::kStorageVersion,
                               api::kueue::kResourceFlavors)),
      ac_kind_(ctx.client.Kind(api::kueue::kGroup, api::kueue::kStorageVersion,
                               api::kueue::kAdmissionChecks)),
      cqs_(ctx.informers.For(cq_kind_)),
      flavors_(ctx.informers.For(rf_kind_)),
      checks_(ctx.informers.For(ac_kind_)),
      workloads_(ctx.informers.For(api::kueue::kGroup, api::kueue::kStorageVersion,
                                   api::kueue::kWorkloads)) {}

void ResourceInUse::EnqueueDeleting() {
  for (const ObjectRef& o : flavors_.List()) {
    if (api::meta::IsBeingDeleted(*o)) controller_->queue().Add("rf/" + api::meta::GetName(*o));
  }
  for (const ObjectRef& o : checks_.List()) {
    if (api::meta::IsBeingDeleted(*o)) controller_->queue().Add("ac/" + api::meta::GetName(*o));
  }
}

void ResourceInUse::Register() {
  controller_ = &ctx_.manager.AddController(
      std::make_unique<reconcile::Controller>("resource-in-use", *this, ctx_.clock));
  reconcile::Controller* c = controller_;
  auto keyed = [c](const char* prefix) {
    auto add = [c, prefix](const ObjectRef& o) {
      c->queue().Add(std::string(prefix) + api::meta::GetName(*o));
    };
    return client::EventHandlers{add, [add](const ObjectRef&, const ObjectRef& b) { add(b); },
                                 {}};
  };
  // ClusterQueues: their own finalizer, and (when their spec changes or they
  // go) the flavors and checks being deleted they may have let go of. Status
  // writes (every admission cycle) are ignored.
  auto track = [this](const ObjectRef& o, bool gone) {
    absl::MutexLock lock(&mu_);
    if (!gone && api::meta::IsBeingDeleted(*o)) {
      deleting_cqs_.insert(api::meta::GetName(*o));
    } else {
      deleting_cqs_.erase(api::meta::GetName(*o));
    }
  };
  client::EventHandlers cq;
  cq.on_add = [c, track](const ObjectRef& o) {
    track(o, false);
    c->queue().Add("cq/" + api::meta::GetName(*o));
  };
  cq.on_update = [this, c, track](const ObjectRef& a, const ObjectRef& b) {
    track(b, false);
    // A status write (every queue-status flush of a ClusterQueue) changes
    // neither spec nor metadata but its resourceVersion, and Reconcile reads
    // only metadata (finalizers, deletion) besides what other events enqueue.
    if (MemberObject(*a, "spec") == MemberObject(*b, "spec") &&
        api::meta::MetadataEqualButResourceVersion(MemberObject(*a, "metadata"),
                                                   MemberObject(*b, "metadata"))) {
      return;
    }
    c->queue().Add("cq/" + api::meta::GetName(*b));
    EnqueueDeleting();
  };
  cq.on_delete = [this, track](const ObjectRef& o) {
    track(o, true);
    EnqueueDeleting();
  };
  cqs_.AddHandlers(cq);
  flavors_.AddHandlers(keyed("rf/"));
  checks_.AddHandlers(keyed("ac/"));
  // A workload releasing quota may free a ClusterQueue being deleted.
  // Only while some ClusterQueue is being deleted (O(1) otherwise).
  auto on_wl = [this, c](const ObjectRef& o) {
    std::set<std::string> deleting;
    {
      absl::MutexLock lock(&mu_);
      if (deleting_cqs_.empty()) return;
      deleting = deleting_cqs_;
    }
    std::string cq_name(
        StringMember(MemberObject(MemberObject(*o, "status"), "admission"), "clusterQueue"));
    for (const std::string& q : deleting) {
      // Released (no admission): any of them may be free now.
      if (cq_name.empty() || cq_name == q) c->queue().Add("cq/" + q);
    }
  };
  workloads_.AddHandlers({on_wl, [on_wl](const ObjectRef&, const ObjectRef& b) { on_wl(b); },
                          on_wl});
}

bool ResourceInUse::ClusterQueueInUse(const std::string& name) const {
  for (const ObjectRef& w : workloads_.List()) {
    const Json& adm = MemberObject(MemberObject(*w, "status"), "admission");
    if (StringMember(adm, "clusterQueue") == name &&
        !api::meta::IsConditionTrue(*w, api::kueue::kFinished)) {
      return true;
    }
  }
  return false;
}

bool ResourceInUse::ReferencedByClusterQueue(bool flavor, const std::string& name) const {
  for (const ObjectRef& q : cqs_.List()) {
    if (flavor) {
      for (const Json& g : MemberArray(MemberObject(*q, "spec"), "resourceGroups")) {
        for (const Json& f : MemberArray(g, "flavors")) {
          if (StringMember(f, "name") == name) return true;
        }
      }
    } else {
      for (const std::string& c : ReferencedChecks(*q)) {
        if (c == name) return true;
      }
    }
  }
  return false;
}

absl::StatusOr<Result> ResourceInUse::Reconcile(const std::string& key) {
  const size_t slash = key.find('/');
  if (slash == std::string::npos) return Result::Done();
  const std::string type = key.substr(0, slash), name = key.substr(slash + 1);
  const api::KindDef* kind = nullptr;
  client::Informer* inf = nullptr;
  if (type == "cq") {
    kind = &cq_kind_;
    inf = &cqs_;
  } else if (type == "rf") {
    kind = &rf_kind_;
    inf = &flavors_;
  } else if (type == "ac") {
    kind = &ac_kind_;
    inf = &checks_;
  } else {
    return Result::Done();
  }
  ObjectRef obj = inf->Get("", name);
  if (!obj) return Result::Done();
  // Copied only when it is written.
  Json next;
  if (!api::meta::IsBeingDeleted(*obj)) {
    if (api::meta::HasFinalizer(*obj, kResourceInUseFinalizer)) return Result::Done();
    next = *obj;
    api::meta::AddFinalizer(next, kResourceInUseFinalizer);
  } else {
    if (!api::meta::HasFinalizer(*obj, kResourceInUseFinalizer)) return Result::Done();
    const bool in_use = type == "cq" ? ClusterQueueInUse(name)
                                     : ReferencedByClusterQueue(type == "rf", name);
    if (in_use) return Result::Done();  // A workload or queue change enqueues it again.
    next = *obj;
    api::meta::RemoveFinalizer(next, kResourceInUseFinalizer);
  }
  auto r = ctx_.client.Update(*kind, std::move(next));
  if (!r.ok()) {
    if (absl::IsNotFound(r.status())) return Result::Done();  // Gone.
    // Changed since read, or failed: again, with backoff. (Not left to the
    // newer version's event: a status write, e.g. a queue-status flush
    // racing this update, wakes nothing here.)
    return r.status();
  }
  return Result::Done();
}

}  // namespace batchd::controllers::admissioncheck::internal
