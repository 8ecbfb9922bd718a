// Registry deletes, namespace lifecycle, and start-up.
#include <deque>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "api/json_access.h"
#include "api/meta/time_util.h"
#include "common/logging.h"
#include "registry/errors.h"
#include "registry/internal/conflict_retry.h"
#include "registry/internal/selectors.h"
#include "registry/registry.h"

namespace batchd::registry {

using api::Json;

namespace {

bool IsPod(const api::KindDef& k) { return k.group.empty() && k.plural == "pods"; }
bool IsNamespace(const api::KindDef& k) { return k.group.empty() && k.plural == "namespaces"; }

void AddFinalizer(Json& meta, const std::string& f) {
  if (!meta.contains("finalizers") || !meta["finalizers"].is_array()) {
    meta["finalizers"] = Json::array();
  }
  for (const auto& x : meta["finalizers"]) {
    if (x == f) return;
  }
  meta["finalizers"].push_back(f);
}

// The grace period a pod deletion waits for its node agent to stop the pod,
// or 0 when it can go at once (never scheduled, or already finished).
int64_t PodGracePeriod(const Json& pod, std::optional<int64_t> requested) {
  const Json& spec = api::MemberObject(pod, "spec");
  std::string phase = api::MemberObject(pod, "status").value("phase", "");
  if (spec.value("nodeName", "").empty() || phase == "Succeeded" || phase == "Failed") return 0;
  if (requested) return std::max<int64_t>(*requested, 0);
  return spec.value("terminationGracePeriodSeconds", int64_t{30});
}

}  // namespace

struct Registry::NamespaceWorker {
  absl::Mutex mu;
  absl::CondVar cv;
  std::deque<std::string> queue ABSL_GUARDED_BY(mu);
  bool stop ABSL_GUARDED_BY(mu) = false;
  std::thread thread;
};

namespace {

// The server's watch cache. Its ring holds about 16 MiB of past versions
// (bytes, keys and records: WatchCache::RingCost), some ten thousand of Jobs
// or Pods; kube-apiserver keeps 100 events per resource, or its last 75 s. A
// watch from before the ring replays from the store's history instead.
std::unique_ptr<WatchCache> NewWatchCache(store::Store& store,
                                          std::shared_ptr<const api::Scheme> scheme) {
  constexpr size_t kRingEvents = 100000;
  constexpr size_t kMaxQueue = 100000;
  constexpr size_t kRingBytes = size_t{16} << 20;
  return std::make_unique<WatchCache>(store, std::move(scheme), kRingEvents, kMaxQueue, kRingBytes);
}

}  // namespace

Registry::Registry(store::Store& store, std::shared_ptr<const api::Scheme> scheme, Clock& clock,
                   absl::BitGenRef random)
    : store_(store), scheme_(std::move(scheme)), clock_(clock),
      cache_(NewWatchCache(store, scheme_)), random_(random),
      ns_worker_(std::make_shared<NamespaceWorker>()) {}

Registry::Registry(store::Store& store, std::shared_ptr<const api::Scheme> scheme, Clock& clock)
    : store_(store), scheme_(std::move(scheme)), clock_(clock),
      cache_(NewWatchCache(store, scheme_)),
      own_random_(std::make_unique<absl::BitGen>()), random_(*own_random_),
      ns_worker_(std::make_shared<NamespaceWorker>()) {}

absl::Status Registry::Start() {
  if (auto st = cache_->Start(); !st.ok()) return st;
  const api::KindDef* nsk = scheme_->ByResource("", "v1", "namespaces");
  for (const char* name : {"default", "kube-system", "kube-public", "kube-node-lease"}) {
    if (cache_->Get(StoreKey(*nsk, "", name))) continue;
    Json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}};
    auto r = Create(*nsk, "", ns, WriteOptions{});
    if (!r.ok() && r.status().code() != absl::StatusCode::kAlreadyExists) return r.status();
  }
  ns_worker_->thread = std::thread([this] {
    absl::MutexLock lock(&ns_worker_->mu);
    while (!ns_worker_->stop) {
      if (ns_worker_->queue.empty()) {
        ns_worker_->cv.Wait(&ns_worker_->mu);
        continue;
      }
      std::string ns = std::move(ns_worker_->queue.front());
      ns_worker_->queue.pop_front();
      ns_worker_->mu.Unlock();
      FinishNamespace(ns);
      ns_worker_->mu.Lock();
    }
  });
  // Resume namespaces whose deletion was interrupted by a restart.
  bool more = false;
  int64_t rev = 0;
  for (const auto& o : cache_->List(CollectionPrefix(*nsk, ""), "", 0, &more, &rev)) {
    Json j = o->Decode();
    if (j["metadata"].contains("deletionTimestamp")) {
      absl::MutexLock lock(&ns_worker_->mu);
      ns_worker_->queue.push_back(j["metadata"].value("name", ""));
      ns_worker_->cv.SignalAll();
    }
  }
  return absl::OkStatus();
}

Registry::~Registry() {
  if (ns_worker_ && ns_worker_->thread.joinable()) {
    {
      absl::MutexLock lock(&ns_worker_->mu);
      ns_worker_->stop = true;
    }
    ns_worker_->cv.SignalAll();
    ns_worker_->thread.join();
  }
}

absl::StatusOr<DeleteResult> Registry::DeleteNow(const api::KindDef& k, const ObjectPtr& current) {
  auto kv = store_.Delete(current->key, current->revision);
  if (!kv.ok()) {
    const auto& fields = current->fields();
    std::string name = fields.count("metadata.name") ? fields.at("metadata.name") : std::string();
    return StoreWriteError(k, name, kv.status());
  }
  DeleteResult r;
  r.deleted = true;
  r.object = current->Decode();
  r.object["metadata"]["resourceVersion"] = std::to_string(kv->mod_revision);
  return r;
}

absl::StatusOr<DeleteResult> Registry::Delete(const api::KindDef& k, std::string_view ns,
                                              std::string_view name, const DeleteOptions& opts) {
  if (k.storage) {
    auto res = Delete(*k.storage, ns, name, opts);
    if (res.ok() && k.from_storage) k.from_storage(res->object);
    return res;
  }
  for (const std::string& kept : k.undeletable_names) {
    if (name == kept) return Forbidden(k, name, k.undeletable_reason);
  }
  std::string policy = opts.propagation_policy;
  if (!policy.empty() && policy != "Orphan" && policy != "Background" && policy != "Foreground") {
    return Invalid(k, name, {api::NotSupported(api::Path("propagationPolicy"), policy,
                                               {"Foreground", "Background", "Orphan"})});
  }
  if (opts.grace_period_seconds && *opts.grace_period_seconds < 0) {
    return Invalid(k, name, {api::Invalid(api::Path("gracePeriodSeconds"),
                                          *opts.grace_period_seconds,
                                          "must be greater than or equal to 0")});
  }
  if (policy.empty()) policy = k.default_propagation_policy;
  using Outcome = internal::Attempt<DeleteResult>;
  return internal::RetryOnConflict<DeleteResult>(k, name, [&](bool) -> Outcome {
    ObjectPtr current = cache_->Get(StoreKey(k, ns, name));
    if (!current) return NotFound(k, name);
    // The current object as every in-process reader shares it (parsed at
    // most once), copied once to be edited.
    const std::shared_ptr<const Json> before = current->Shared();
    Json obj = *before;
    Json& meta = obj["metadata"];
    if (opts.precondition_uid && *opts.precondition_uid != meta.value("uid", "")) {
      return Conflict(k, name,
                      absl::StrCat("Precondition failed: UID in precondition: ",
                                   *opts.precondition_uid, ", UID in object meta: ",
                                   meta.value("uid", "")));
    }
    if (opts.precondition_resource_version &&
        *opts.precondition_resource_version != std::to_string(current->revision)) {
      return Conflict(k, name,
                      absl::StrCat("Precondition failed: ResourceVersion in precondition: ",
                                   *opts.precondition_resource_version,
                                   ", ResourceVersion in object meta: ", current->revision));
    }
    if (policy == "Orphan") AddFinalizer(meta, "orphan");
    if (policy == "Foreground") AddFinalizer(meta, "foregroundDeletion");
    int64_t grace = IsPod(k) ? PodGracePeriod(obj, opts.grace_period_seconds) : 0;
    if (IsNamespace(k)) {
      obj["status"]["phase"] = "Terminating";
    }
    bool has_finalizers = meta.contains("finalizers") && !meta["finalizers"].empty();
    bool keep = has_finalizers || grace > 0 || IsNamespace(k);
    if (!keep) {
      if (opts.dry_run) return DeleteResult{true, obj};
      // DeleteNow, answering with the copy made above (not decoded again).
      auto kv = store_.Delete(current->key, current->revision);
      if (!kv.ok()) {
        absl::Status st = StoreWriteError(k, std::string(name), kv.status());
        if (internal::IsWriteConflict(st)) return Outcome::Retry();
        return st;
      }
      obj["metadata"]["resourceVersion"] = std::to_string(kv->mod_revision);
      return DeleteResult{true, std::move(obj)};
    }
    // Graceful: mark for deletion; finalizers, the node agent or the
    // namespace worker finish it.
    absl::Time now = clock_.Now();
    if (!meta.contains("deletionTimestamp")) {
      meta["deletionTimestamp"] = api::meta::FormatRfc3339(now + absl::Seconds(grace));
      meta["deletionGracePeriodSeconds"] = grace;
    } else if (IsPod(k) && meta.value("deletionGracePeriodSeconds", int64_t{0}) > grace) {
      // A shorter grace period may only move deletion earlier.
      meta["deletionTimestamp"] = api::meta::FormatRfc3339(now + absl::Seconds(grace));
      meta["deletionGracePeriodSeconds"] = grace;
      if (grace == 0 && !has_finalizers) {
        if (opts.dry_run) return DeleteResult{true, obj};
        auto r = DeleteNow(k, current);
        if (internal::IsWriteConflict(r.status())) return Outcome::Retry();
        return r;
      }
    }
    if (opts.dry_run) return DeleteResult{false, obj};
    if (obj != *before) {
      meta.erase("resourceVersion");
      auto kv = Put(current->key, obj, current->revision);
      if (!kv.ok()) {
        if (kv.status().code() == absl::StatusCode::kAborted) {
          return Outcome::Retry();  // On the new version.
        }
        return StoreWriteError(k, name, kv.status());
      }
      obj["metadata"]["resourceVersion"] = std::to_string(kv->mod_revision);
    } else {
      obj["metadata"]["resourceVersion"] = std::to_string(current->revision);
    }
    if (IsNamespace(k)) {
      absl::MutexLock lock(&ns_worker_->mu);
      ns_worker_->queue.push_back(std::string(name));
      ns_worker_->cv.SignalAll();
    }
    return DeleteResult{false, obj};
  });
}

absl::StatusOr<std::vector<Json>> Registry::DeleteCollection(const api::KindDef& k,
                                                             std::string_view ns,
                                                             const ListOptions& list,
                                                             const DeleteOptions& opts) {
  if (k.storage) {
    auto res = DeleteCollection(*k.storage, ns, list, opts);
    if (res.ok() && k.from_storage) {
      for (Json& o : *res) k.from_storage(o);
    }
    return res;
  }
  ListOptions all = list;
  all.limit = 0;
  all.continue_token.clear();
  auto items = List(k, ns, all);
  if (!items.ok()) return items.status();
  std::vector<Json> out;
  for (const auto& o : items->items) {
    Json j = o->Decode();
    std::string ons = j["metadata"].value("namespace", "");
    std::string oname = j["metadata"].value("name", "");
    auto r = Delete(k, ons, oname, opts);
    if (r.ok()) {
      out.push_back(std::move(r->object));
    } else if (r.status().code() != absl::StatusCode::kNotFound) {
      return r.status();
    }
  }
  return out;
}

// Deletes everything in a terminating namespace, then the namespace itself.
// Objects held by finalizers are retried until they are gone.
void Registry::FinishNamespace(std::string ns) {
  const api::KindDef* nsk = scheme_->ByResource("", "v1", "namespaces");
  size_t remaining = 0;
  DeleteOptions opts;
  opts.propagation_policy = "Background";
  for (const auto& k : scheme_->All()) {
    if (!k->namespaced || k->storage) continue;  // Each resource once, in its storage version.
    bool more = false;
    int64_t rev = 0;
    for (const auto& o : cache_->List(CollectionPrefix(*k, ns), "", 0, &more, &rev)) {
      ++remaining;
      Json j = o->Decode();
      if (j["metadata"].contains("deletionTimestamp")) continue;
      auto r = Delete(*k, ns, j["metadata"].value("name", ""), opts);
      if (r.ok() && r->deleted) --remaining;
    }
  }
  if (remaining == 0) {
    ObjectPtr cur = cache_->Get(StoreKey(*nsk, "", ns));
    if (cur) {
      auto r = DeleteNow(*nsk, cur);
      if (!r.ok()) BATCHD_LOG_WARN("namespace {}: delete failed: {}", ns, r.status().ToString());
    }
    return;
  }
  // The timer holds only the worker, so it is harmless after the registry
  // is gone.
  std::weak_ptr<NamespaceWorker> weak = ns_worker_;
  clock_.ScheduleAfter(absl::Seconds(1), [weak, ns] {
    auto worker = weak.lock();
    if (!worker) return;
    absl::MutexLock lock(&worker->mu);
    if (worker->stop) return;
    worker->queue.push_back(ns);
    worker->cv.SignalAll();
  });
}

}  // namespace batchd::registry
