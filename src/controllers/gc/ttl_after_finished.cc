// The TTL-after-finished controller: see gc_controller.h.
#include <memory>
#include <optional>
#include <string>

#include "api/batch/v1/batch_v1.h"
#include "api/batch/v1/job_view.h"
#include "api/meta/object_meta.h"
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

// When a finished Job with a TTL may be deleted; nullopt when it never
// expires (no TTL, not finished, already being deleted, or no finish time).
std::optional<absl::Time> ExpiresAt(const Json& job) {
  const api::batch_v1::JobView v = api::batch_v1::JobView::Parse(job);
  const std::optional<int32_t>& ttl = v.spec.ttl_seconds_after_finished;
  if (!ttl || v.meta.being_deleted() || !v.Finished()) return std::nullopt;
  const std::optional<absl::Time> finished = v.status.FinishedTime();
  if (!finished) return std::nullopt;
  return *finished + absl::Seconds(*ttl);
}

class TtlAfterFinished : public Reconciler {
 public:
  explicit TtlAfterFinished(ControllerContext& ctx)
      : ctx_(ctx),
        job_kind_(ctx.client.Kind("batch", "v1", "jobs")),
        jobs_(ctx.informers.For(job_kind_)) {}

  client::Informer& jobs() { return jobs_; }

  absl::StatusOr<Result> Reconcile(const std::string& key) override {
    size_t slash = key.find('/');
    if (slash == std::string::npos) return Result::Done();
    std::string ns = key.substr(0, slash), name = key.substr(slash + 1);
    ObjectRef cached = jobs_.Get(ns, name);
    if (!cached) return Result::Done();
    auto expires = ExpiresAt(*cached);
    absl::Time now = ctx_.clock.Now();
    if (!expires) return Result::Done();
    if (now < *expires) return Result::After(*expires - now);
    // The cache may be stale (TTL changed, Job replaced): decide on a live read.
    auto live = ctx_.client.Get(job_kind_, ns, name);
    if (!live.ok() && registry::GetPayload(live.status()).reason == "NotFound") {
      return Result::Done();
    }
    if (!live.ok()) return live.status();
    expires = ExpiresAt(*live);
    if (!expires) return Result::Done();
    if (now < *expires) return Result::After(*expires - now);
    client::DeleteOptions opts;
    opts.propagation_policy = "Background";
    opts.precondition_uid = meta::GetUid(*live);
    absl::Status st = ctx_.client.Delete(job_kind_, ns, name, opts);
    std::string reason = st.ok() ? "" : registry::GetPayload(st).reason;
    if (!st.ok() && reason != "NotFound" && reason != "Conflict") return st;
    return Result::Done();
  }

 private:
  ControllerContext& ctx_;
  const api::KindDef& job_kind_;
  client::Informer& jobs_;
};

}  // namespace

void AddTtlAfterFinishedController(ControllerContext& ctx) {
  auto ttl = std::make_shared<TtlAfterFinished>(ctx);
  Controller& c = ctx.manager.AddController(
      std::make_unique<Controller>("ttl-after-finished", *ttl, ctx.clock));
  Controller* cp = &c;
  auto maybe_enqueue = [ttl, cp](const ObjectRef& job) {
    if (ExpiresAt(*job)) cp->Enqueue(*job);
  };
  ttl->jobs().AddHandlers(client::EventHandlers{
      maybe_enqueue, [maybe_enqueue](const ObjectRef&, const ObjectRef& j) { maybe_enqueue(j); },
      nullptr});
}

}  // namespace batchd::controllers
