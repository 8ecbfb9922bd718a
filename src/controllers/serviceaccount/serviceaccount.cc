#include "controllers/serviceaccount/serviceaccount.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "api/json_access.h"
#include "api/meta/object_meta.h"
#include "reconcile/controller.h"
#include "registry/errors.h"
#include "registry/registry.h"

namespace batchd::controllers {

namespace {

using api::Json;
using client::ObjectRef;

Json DefaultServiceAccount(const std::string& ns) {
  return {{"apiVersion", "v1"},
          {"kind", "ServiceAccount"},
          {"metadata", {{"name", kDefaultServiceAccount}, {"namespace", ns}}}};
}

class ServiceAccountsReconciler : public reconcile::Reconciler {
 public:
  explicit ServiceAccountsReconciler(reconcile::ControllerContext& ctx)
      : ctx_(ctx),
        sa_kind_(ctx.client.Kind("", "v1", "serviceaccounts")),
        namespaces_(ctx.informers.For("", "v1", "namespaces")),
        accounts_(ctx.informers.For(sa_kind_)) {}

  client::Informer& namespaces() { return namespaces_; }
  client::Informer& accounts() { return accounts_; }

  // `key` is a namespace's name.
  absl::StatusOr<reconcile::Result> Reconcile(const std::string& ns) override {
    ObjectRef n = namespaces_.Get("", ns);
    if (!n || api::meta::IsBeingDeleted(*n) ||
        api::StringMember(api::MemberObject(*n, "status"), "phase") == "Terminating") {
      return reconcile::Result::Done();
    }
    if (accounts_.Get(ns, kDefaultServiceAccount)) return reconcile::Result::Done();
    auto created = ctx_.client.Create(sa_kind_, ns, DefaultServiceAccount(ns));
    if (!created.ok()) {
      const std::string reason = registry::GetPayload(created.status()).reason;
      // Already there (the cache lags), or the namespace is going away.
      if (reason == "AlreadyExists" || reason == "NotFound" || reason == "Forbidden") {
        return reconcile::Result::Done();
      }
      return created.status();
    }
    return reconcile::Result::Done();
  }

 private:
  reconcile::ControllerContext& ctx_;
  const api::KindDef& sa_kind_;
  client::Informer& namespaces_;
  client::Informer& accounts_;
};

}  // namespace

void AddServiceAccountsController(reconcile::ControllerContext& ctx) {
  auto r = std::make_shared<ServiceAccountsReconciler>(ctx);
  reconcile::Controller& c = ctx.manager.AddController(
      std::make_unique<reconcile::Controller>("serviceaccount", *r, ctx.clock));
  client::WorkQueue* q = &c.queue();
  auto ns_changed = [r, q](const ObjectRef& n) {
    (void)r;  // The handlers own the reconciler.
    q->Add(api::meta::GetName(*n));
  };
  r->namespaces().AddHandlers(
      {.on_add = ns_changed,
       .on_update = [ns_changed](const ObjectRef&, const ObjectRef& n) { ns_changed(n); },
       .on_delete = nullptr});
  r->accounts().AddHandlers(
      {.on_add = nullptr,
       .on_update = nullptr,
       .on_delete = [q](const ObjectRef& sa) {
         if (api::meta::GetName(*sa) == kDefaultServiceAccount) {
           q->Add(api::meta::GetNamespace(*sa));
         }
       }});
}

absl::Status AddServiceAccountAdmission(registry::Registry& registry) {
  const api::KindDef* pods = registry.scheme().ByResource("", "v1", "pods");
  const api::KindDef* accounts = registry.scheme().ByResource("", "v1", "serviceaccounts");
  if (pods == nullptr || accounts == nullptr) {
    return absl::FailedPreconditionError("pods and serviceaccounts are not served");
  }
  registry::Registry* reg = &registry;
  registry.AddMutator(pods->GroupResource(), [reg, pods, accounts](Json& pod, const Json* old) {
    if (old != nullptr || !pod.is_object()) return absl::OkStatus();  // Create only.
    Json& spec = pod["spec"];
    if (!spec.is_object()) return absl::OkStatus();  // Validation answers.
    std::string name = api::CopyStringMember(spec, "serviceAccountName");
    if (name.empty()) name = api::CopyStringMember(spec, "serviceAccount");
    if (name.empty()) name = kDefaultServiceAccount;
    spec["serviceAccountName"] = name;
    spec["serviceAccount"] = name;
    const Json& meta = api::MemberObject(pod, "metadata");
    const std::string ns = api::CopyStringMember(meta, "namespace");
    if (reg->Get(*accounts, ns, name).ok()) return absl::OkStatus();
    if (name == kDefaultServiceAccount) {
      // The controller creates it moments after the namespace; a pod in
      // that moment gets it created here instead of a refusal (it exists
      // in every active namespace either way). A terminating or missing
      // namespace refuses the create.
      registry::WriteOptions wo;
      wo.field_manager = "service-account-controller";
      auto created = reg->Create(*accounts, ns, DefaultServiceAccount(ns), wo);
      if (created.ok() || registry::GetPayload(created.status()).reason == "AlreadyExists") {
        return absl::OkStatus();
      }
    }
    return registry::Forbidden(*pods, api::CopyStringMember(meta, "name"),
                               absl::StrCat("service account ", ns, "/", name,
                                            " was not found, retry after the service account "
                                            "is created"));
  });
  return absl::OkStatus();
}

}  // namespace batchd::controllers
