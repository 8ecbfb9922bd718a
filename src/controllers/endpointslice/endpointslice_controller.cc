#include "controllers/endpointslice/endpointslice_controller.h"

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "api/core/v1/pod_view.h"
#include "api/core/v1/service_view.h"
#include "api/discovery/v1/endpoint_slice_view.h"
#include "api/json_access.h"
#include "common/status_macros.h"
#include "common/string_view.h"
#include "controllers/endpointslice/internal/desired.h"
#include "registry/errors.h"

namespace batchd::controllers::endpointslice {
namespace {

using api::Json;
using api::core_v1::PodView;
using api::core_v1::ServiceView;
using api::discovery_v1::EndpointSliceView;
using client::ObjectRef;
using reconcile::Controller;
using reconcile::ControllerContext;
using reconcile::Reconciler;
using reconcile::Result;

using registry::IsReason;

class EndpointSliceController : public Reconciler {
 public:
  explicit EndpointSliceController(ControllerContext& ctx)
      : ctx_(ctx),
        service_kind_(ctx.client.Kind("", "v1", "services")),
        slice_kind_(ctx.client.Kind(api::discovery_v1::kGroup, "v1", "endpointslices")),
        services_(ctx.informers.For(service_kind_)),
        pods_(ctx.informers.For("", "v1", "pods")),
        slices_(ctx.informers.For(slice_kind_)) {}

  void Register(std::shared_ptr<EndpointSliceController> self);
  absl::StatusOr<Result> Reconcile(const std::string& key) override;

 private:
  void OnService(const ObjectRef& svc, bool deleted);
  void OnPod(const ObjectRef& old_pod, const ObjectRef& pod);
  void OnSlice(const ObjectRef& slice);
  std::vector<ObjectRef> ManagedSlices(const std::string& ns, const std::string& service) const;
  absl::Status Apply(const ServiceView& svc, const std::vector<internal::DesiredSlice>& desired,
                     const Json& service_obj);

  ControllerContext& ctx_;
  const api::KindDef& service_kind_;
  const api::KindDef& slice_kind_;
  client::Informer& services_;
  client::Informer& pods_;
  client::Informer& slices_;
  Controller* controller_ = nullptr;

  absl::Mutex mu_;
  // Namespace -> service name -> selector: which services a pod event
  // concerns, without parsing every Service per pod event. Bounded by the
  // Services (an entry is erased with its Service).
  absl::flat_hash_map<std::string, std::map<std::string, std::map<std::string, std::string>>>
      selectors_ ABSL_GUARDED_BY(mu_);
};

void EndpointSliceController::Register(std::shared_ptr<EndpointSliceController> self) {
  controller_ = &ctx_.manager.AddController(
      std::make_unique<Controller>("endpointslice", *this, ctx_.clock));
  services_.AddHandlers({[self](const ObjectRef& o) { self->OnService(o, false); },
                         [self](const ObjectRef&, const ObjectRef& n) { self->OnService(n, false); },
                         [self](const ObjectRef& o) { self->OnService(o, true); }});
  pods_.AddHandlers({[self](const ObjectRef& o) { self->OnPod(nullptr, o); },
                     [self](const ObjectRef& o, const ObjectRef& n) { self->OnPod(o, n); },
                     [self](const ObjectRef& o) { self->OnPod(nullptr, o); }});
  auto on_slice = [self](const ObjectRef& o) { self->OnSlice(o); };
  slices_.AddHandlers(
      {on_slice, [on_slice](const ObjectRef&, const ObjectRef& n) { on_slice(n); }, on_slice});
}

void EndpointSliceController::OnService(const ObjectRef& svc, bool deleted) {
  const ServiceView v = ServiceView::Parse(*svc);
  {
    absl::MutexLock lock(&mu_);
    auto& in_ns = selectors_[std::string(v.meta.namespace_)];
    if (deleted) {
      in_ns.erase(std::string(v.meta.name));
      if (in_ns.empty()) selectors_.erase(std::string(v.meta.namespace_));
    } else {
      in_ns[std::string(v.meta.name)] = v.selector;
    }
  }
  if (!deleted) controller_->queue().Add(v.meta.Key());
}

void EndpointSliceController::OnPod(const ObjectRef& old_pod, const ObjectRef& pod) {
  // Only the namespace and labels are read (no view parsed: this runs on
  // every pod change, and most namespaces have no Service).
  const Json& meta = api::MemberObject(*pod, "metadata");
  const std::string_view pod_ns = api::StringMember(meta, "namespace");
  auto labels_of = [](const Json& p) -> const Json* {
    const Json* l = api::FindMember(api::MemberObject(p, "metadata"), "labels");
    return l != nullptr && l->is_object() ? l : nullptr;
  };
  std::vector<std::string> keys;
  {
    absl::MutexLock lock(&mu_);
    auto ns = selectors_.find(std::string(pod_ns));
    if (ns == selectors_.end()) return;
    const Json* now_labels = labels_of(*pod);
    const Json* before_labels = old_pod ? labels_of(*old_pod) : nullptr;
    auto matches = [](const std::map<std::string, std::string>& sel, const Json* labels) {
      if (sel.empty() || labels == nullptr || !labels->is_object()) return false;
      for (const auto& [k, v] : sel) {
        const Json* have = api::FindMember(*labels, k);
        if (have == nullptr || !have->is_string() || have->get_ref<const std::string&>() != v) {
          return false;
        }
      }
      return true;
    };
    for (const auto& [name, sel] : ns->second) {
      if (matches(sel, now_labels) || (old_pod && matches(sel, before_labels))) {
        keys.push_back(absl::StrCat(Sv(pod_ns), "/", name));
      }
    }
  }
  for (const std::string& k : keys) controller_->queue().Add(k);
}

void EndpointSliceController::OnSlice(const ObjectRef& slice) {
  const EndpointSliceView v = EndpointSliceView::Parse(*slice);
  if (v.managed_by != api::discovery_v1::kManagedByController || v.service_name.empty()) return;
  controller_->queue().Add(absl::StrCat(Sv(v.meta.namespace_), "/", Sv(v.service_name)));
}

std::vector<ObjectRef> EndpointSliceController::ManagedSlices(const std::string& ns,
                                                             const std::string& service) const {
  return slices_.ListMatching(
      ns, absl::StrCat(api::discovery_v1::kServiceNameLabel, "=", service, ",",
                       api::discovery_v1::kManagedByLabel, "=",
                       api::discovery_v1::kManagedByController));
}

absl::StatusOr<Result> EndpointSliceController::Reconcile(const std::string& key) {
  const size_t slash = key.find('/');
  if (slash == std::string::npos) return Result::Done();
  const std::string ns = key.substr(0, slash), name = key.substr(slash + 1);
  ObjectRef svc = services_.Get(ns, name);
  // A deleted Service's slices go with it (owner references, the garbage
  // collector); a Service being deleted keeps them until then.
  if (!svc) return Result::Done();
  const ServiceView view = ServiceView::Parse(*svc);
  std::vector<internal::DesiredSlice> desired;
  if (view.headless() && !view.selector.empty()) {
    std::vector<ObjectRef> matched = pods_.ListMatching(ns, view.SelectorString());
    std::vector<PodView> pods;
    pods.reserve(matched.size());
    for (const ObjectRef& p : matched) pods.push_back(PodView::Parse(*p));
    desired = internal::DesiredSlices(view, pods, api::discovery_v1::kMaxEndpoints);
  }
  BATCHD_RETURN_IF_ERROR(Apply(view, desired, *svc));
  return Result::Done();
}

// Creates, updates and deletes the Service's managed slices so that they
// are `desired` (none: all deleted). Stale caches surface as Conflict or
// AlreadyExists, which retry the key.
absl::Status EndpointSliceController::Apply(const ServiceView& svc,
                                            const std::vector<internal::DesiredSlice>& desired,
                                            const Json& service_obj) {
  const std::string ns(svc.meta.namespace_), name(svc.meta.name), uid(svc.meta.uid);
  std::map<std::string, ObjectRef> existing;
  for (const ObjectRef& s : ManagedSlices(ns, name)) {
    existing[std::string(api::StringMember(api::MemberObject(*s, "metadata"), "name"))] = s;
  }
  const api::discovery_v1::OwnerValue owner{name, uid};
  for (const internal::DesiredSlice& d : desired) {
    Json want = api::discovery_v1::BuildEndpointSlice(ns, d.name, owner, d.endpoints, d.ports);
    auto it = existing.find(d.name);
    if (it == existing.end()) {
      if (ObjectRef other = slices_.Get(ns, d.name)) {
        // A slice of that name that is not this Service's: leave it alone.
        ctx_.events.Event(service_obj, "Warning", "FailedToUpdateEndpointSlices",
                          absl::StrCat("EndpointSlice ", d.name, " exists and is not managed "
                                       "for this Service"));
        continue;
      }
      auto r = ctx_.client.Create(slice_kind_, ns, std::move(want));
      if (!r.ok()) return r.status();
      continue;
    }
    const EndpointSliceView have = EndpointSliceView::Parse(*it->second);
    const bool same = have.meta.ControllerUid() == uid && have.address_type == "IPv4" &&
                      api::discovery_v1::EndpointValues(have) == d.endpoints &&
                      api::discovery_v1::EndpointPortValues(have) == d.ports;
    if (!same) {
      Json updated = *it->second;
      for (const char* f : {"addressType", "endpoints", "ports"}) updated[f] = want[f];
      Json& meta = updated["metadata"];
      meta["ownerReferences"] = want["metadata"]["ownerReferences"];
      auto r = ctx_.client.Update(slice_kind_, std::move(updated));
      if (!r.ok()) return r.status();
    }
    existing.erase(it);
  }
  for (const auto& [slice_name, obj] : existing) {
    client::DeleteOptions del;
    del.precondition_uid = std::string(api::StringMember(api::MemberObject(*obj, "metadata"), "uid"));
    absl::Status s = ctx_.client.Delete(slice_kind_, ns, slice_name, del);
    if (!s.ok() && !IsReason(s, "NotFound")) return s;
  }
  return absl::OkStatus();
}

}  // namespace

void AddEndpointSliceController(ControllerContext& ctx) {
  auto c = std::make_shared<EndpointSliceController>(ctx);
  c->Register(c);
}

}  // namespace batchd::controllers::endpointslice
