// Pod management for one Job sync: how many pods should run (parallelism,
// remaining completions, work-queue mode, suspend), which to delete
// (duplicates and out-of-range indexes first, then the least advanced),
// which indexes to start, the failure backoff, and the pods themselves.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "api/batch/v1/batch_v1.h"
#include "api/batch/v1/job_pod_writer.h"
#include "api/meta/object_meta.h"
#include "api/meta/object_writers.h"
#include "common/status_macros.h"
#include "common/string_view.h"
#include "controllers/job/job_reconciler.h"
#include "registry/errors.h"

namespace batchd::controllers::job {

using api::Json;

namespace {

constexpr size_t kMaxGenerateNameLength = 58;  // 63 minus the 5-char random suffix.

using api::core_v1::PodPhase;

int PhaseRank(const PodView& p) {
  if (p.phase == PodPhase::kPending) return 0;
  if (p.phase == PodPhase::kUnknown) return 1;
  return 2;  // Running.
}

// Kubernetes' ActivePods order: earlier = better to delete.
bool DeleteFirst(const JobPod* a, const JobPod* b) {
  const PodView& va = a->view;
  const PodView& vb = b->view;
  const bool a_node = !va.node_name.empty();
  const bool b_node = !vb.node_name.empty();
  if (a_node != b_node) return !a_node;
  if (PhaseRank(va) != PhaseRank(vb)) return PhaseRank(va) < PhaseRank(vb);
  if (IsPodReady(va) != IsPodReady(vb)) return !IsPodReady(va);
  if (va.meta.creation_timestamp != vb.meta.creation_timestamp) {
    return va.meta.creation_timestamp > vb.meta.creation_timestamp;  // Newer first.
  }
  return va.meta.name > vb.meta.name;
}

// Pods to delete: for Indexed Jobs every pod with an out-of-range or failed
// index and every duplicate of an index; then the `at_least` least
// advanced of the rest.
std::vector<const JobPod*> ActivePodsForRemoval(const SyncCtx& c,
                                                std::vector<const JobPod*> pods, int at_least) {
  std::vector<const JobPod*> rm, left;
  if (c.indexed) {
    std::map<int, std::vector<const JobPod*>> by_index;
    for (const JobPod* p : pods) {
      const int ix = p->index;
      if (ix == kUnknownIndex || ix >= c.completions ||
          (c.failed_indexes && c.failed_indexes->Has(ix))) {
        rm.push_back(p);
      } else {
        by_index[ix].push_back(p);
      }
    }
    for (auto& [ix, group] : by_index) {
      std::sort(group.begin(), group.end(), DeleteFirst);
      rm.insert(rm.end(), group.begin(), group.end() - 1);
      left.push_back(group.back());
    }
  } else {
    left = std::move(pods);
  }
  if (static_cast<int>(rm.size()) < at_least) {
    std::sort(left.begin(), left.end(), DeleteFirst);
    int take = std::min<int>(at_least - static_cast<int>(rm.size()), left.size());
    rm.insert(rm.end(), left.begin(), left.begin() + take);
  }
  return rm;
}

// The first `n` indexes that are neither succeeded, failed, nor held by a
// pod that still counts (active, or terminating when only failed pods are
// replaced).
std::vector<int> FirstPendingIndexes(const SyncCtx& c, int n) {
  std::set<int> busy;
  const bool wait_terminating = c.spec.OnlyReplaceFailedPods();
  for (const JobPod& p : c.pods) {
    if (IsPodActive(p.view) || (wait_terminating && IsPodTerminating(p.view))) {
      busy.insert(p.index);
    }
  }
  std::vector<int> out;
  for (int ix = 0; ix < c.completions && static_cast<int>(out.size()) < n; ++ix) {
    if (c.succeeded_indexes.Has(ix) || busy.count(ix)) continue;
    if (c.failed_indexes && c.failed_indexes->Has(ix)) continue;
    out.push_back(ix);
  }
  return out;
}

}  // namespace

Json JobReconciler::NewPod(const SyncCtx& c, int index) const {
  const std::string job_name = api::meta::GetName(c.job);
  std::string prefix = index == kUnknownIndex ? absl::StrCat(job_name, "-")
                                              : absl::StrCat(job_name, "-", index, "-");
  if (prefix.size() > kMaxGenerateNameLength) prefix.resize(kMaxGenerateNameLength);
  Json pod = api::batch_v1::NewPodFromTemplate(c.spec.pod_template,
                                               api::meta::GetNamespace(c.job), prefix);
  if (index != kUnknownIndex) {
    api::batch_v1::SetPodCompletionIndex(pod, job_name, index);
    if (c.per_index) {
      int count = 0, ignored = 0;
      if (auto it = c.delayed_per_index.find(index); it != c.delayed_per_index.end()) {
        const PodView& last = it->second->view;
        count = IndexFailureCount(last.meta);
        ignored = IndexIgnoredFailureCount(last.meta);
        if (MatchPodFailurePolicy(c.spec, last).count_failed) {
          ++count;
        } else {
          ++ignored;
        }
      }
      api::batch_v1::SetPodIndexFailureCounts(pod, count, ignored);
    }
  }
  if (!c.pod_group.empty()) SetPodSchedulingGroup(pod, c.pod_group);
  api::meta::AddFinalizer(pod, api::batch_v1::kJobTrackingFinalizer);
  api::meta::SetOwnerReference(pod, api::meta::NewControllerRef(c.job));
  return pod;
}

absl::StatusOr<int> JobReconciler::CreatePods(SyncCtx& c, int n,
                                              const std::vector<int>& indexes) {
  expectations_.ExpectCreations(c.key, n, c.now);
  // Created with the sync's status write, in one chain (the pods first, as
  // Kubernetes orders them: a status never counts a pod that is not
  // there), or alone at the sync's end: CreateNewPods.
  c.new_pods.reserve(c.new_pods.size() + n);
  for (int i = 0; i < n; ++i) c.new_pods.push_back(NewPod(c, c.indexed ? indexes[i] : kUnknownIndex));
  return n;
}

absl::StatusOr<int> JobReconciler::DeleteJobPods(SyncCtx& c,
                                                 const std::vector<const JobPod*>& pods) {
  std::vector<std::string> uids;
  std::vector<const Json*> objects;
  for (const JobPod* p : pods) {
    uids.emplace_back(p->view.meta.uid);
    objects.push_back(p->object);
  }
  expectations_.ExpectDeletions(c.key, uids, c.now);
  absl::Status rm_err;
  std::vector<bool> released = RemoveFinalizers(c.key, objects, &rm_err);
  int deleted = 0;
  absl::Status first_err = rm_err;
  for (size_t i = 0; i < pods.size(); ++i) {
    if (!released[i]) {
      expectations_.DeletionObserved(c.key, uids[i]);
      continue;
    }
    client::DeleteOptions opts;
    opts.precondition_uid = uids[i];
    const api::meta::ObjectMetaView& meta = pods[i]->view.meta;
    absl::Status st = ctx_.client.Delete(pod_kind_, std::string(meta.namespace_),
                                         std::string(meta.name), opts);
    if (st.ok() || registry::GetPayload(st).reason == "NotFound") {
      ++deleted;
      if (st.ok()) {
        ctx_.events.Event(c.job, "Normal", "SuccessfulDelete",
                          absl::StrCat("Deleted pod: ", Sv(meta.name)));
      }
    } else {
      expectations_.DeletionObserved(c.key, uids[i]);
      ctx_.events.Event(c.job, "Warning", "FailedDelete",
                        absl::StrCat("Error deleting: ", st.message()));
      if (first_err.ok()) first_err = st;
    }
  }
  c.terminating += deleted;
  if (!first_err.ok()) return first_err;
  return deleted;
}

absl::StatusOr<int> JobReconciler::DeleteActivePods(SyncCtx& c,
                                                    const std::vector<const JobPod*>& pods) {
  int deleted = 0;
  absl::Status first_err;
  for (const JobPod* p : pods) {
    const api::meta::ObjectMetaView& meta = p->view.meta;
    client::DeleteOptions opts;
    opts.precondition_uid = std::string(meta.uid);
    absl::Status st = ctx_.client.Delete(pod_kind_, std::string(meta.namespace_),
                                         std::string(meta.name), opts);
    if (st.ok() || registry::GetPayload(st).reason == "NotFound") {
      ++deleted;
      if (st.ok()) {
        ctx_.events.Event(c.job, "Normal", "SuccessfulDelete",
                          absl::StrCat("Deleted pod: ", Sv(meta.name)));
      }
    } else if (first_err.ok()) {
      first_err = st;
    }
  }
  if (!first_err.ok()) return first_err;
  return deleted;
}

absl::StatusOr<int> JobReconciler::ManageJob(SyncCtx& c) {
  int active = static_cast<int>(c.active.size());
  const int parallelism = c.spec.parallelism;
  if (c.spec.suspend) {
    BATCHD_ASSIGN_OR_RETURN(int removed, DeleteJobPods(c, ActivePodsForRemoval(c, c.active,
                                                                               active)));
    return active - removed;
  }
  int want = 0;
  if (c.completions < 0) {
    want = c.succeeded > 0 ? active : parallelism;
  } else {
    want = std::max(0, std::min(c.completions - c.succeeded, parallelism));
  }
  std::vector<const JobPod*> rm = ActivePodsForRemoval(c, c.active, std::max(0, active - want));
  if (rm.size() > static_cast<size_t>(kMaxPodCreateDeletePerSync)) {
    rm.resize(kMaxPodCreateDeletePerSync);
  }
  if (!rm.empty()) {
    // Deleting and creating in one sync are exclusive; deletion wins.
    BATCHD_ASSIGN_OR_RETURN(int removed, DeleteJobPods(c, rm));
    return active - removed;
  }
  const int terminating = c.spec.OnlyReplaceFailedPods() ? c.terminating : 0;
  int diff = std::min(want - terminating - active, kMaxPodCreateDeletePerSync);
  if (diff <= 0) return active;
  if (!c.per_index) {
    absl::Duration wait = RemainingBackoff(c.new_backoff.failures_after_last_success,
                                           c.new_backoff.last_failure, c.now);
    if (wait > absl::ZeroDuration()) {
      c.RequeueAfter(wait);
      return active;
    }
  }
  std::vector<int> indexes;
  if (c.indexed) {
    indexes = FirstPendingIndexes(c, diff);
    if (c.per_index) {
      std::vector<int> now;
      std::optional<absl::Duration> min_wait;
      for (int ix : indexes) {
        absl::Duration wait = absl::ZeroDuration();
        if (auto it = c.delayed_per_index.find(ix); it != c.delayed_per_index.end()) {
          const PodView& last = it->second->view;
          wait = RemainingBackoff(
              IndexFailureCount(last.meta) + IndexIgnoredFailureCount(last.meta) + 1,
              PodFinishTime(last, c.now), c.now);
        }
        if (wait <= absl::ZeroDuration()) {
          now.push_back(ix);
        } else if (!min_wait || wait < *min_wait) {
          min_wait = wait;
        }
      }
      if (min_wait) c.RequeueAfter(*min_wait);
      indexes = std::move(now);
    }
    diff = static_cast<int>(indexes.size());
  }
  if (diff <= 0) return active;
  if (pod_groups_ != nullptr) {  // WorkloadWithJob: Workload, PodGroup, then the pods.
    const bool started = !c.pods.empty() || c.succeeded > 0 || c.failed > 0;
    // The informer's copy: the working copy has no spec (NewWorkloadForJob
    // reads its parallelism).
    Json typed;
    const Json* job = c.job_ref.get();
    if (!job->contains("apiVersion") || !job->contains("kind")) {
      typed = *job;
      api::meta::EnsureTypeMeta(typed, "batch/v1", "Job");
      job = &typed;
    }
    BATCHD_ASSIGN_OR_RETURN(c.pod_group, pod_groups_->EnsurePodGroup(c.spec, *job, started));
  }
  BATCHD_ASSIGN_OR_RETURN(int created, CreatePods(c, diff, indexes));
  return active + created;
}

}  // namespace batchd::controllers::job
