#include "api/jobset/v1alpha2/jobset_view.h"

#include "absl/strings/str_cat.h"
#include "api/json_access.h"
#include "api/meta/conditions.h"
#include "api/meta/time_util.h"
#include "common/string_view.h"

namespace batchd::api::jobset_v1alpha2 {
namespace {

int32_t Int32Member(const Json& obj, std::string_view key, int32_t def) {
  std::optional<int64_t> v = AsOptionalInt(Member(obj, key));
  return v ? static_cast<int32_t>(*v) : def;
}

std::vector<std::string_view> Strings(const Json& list) {
  std::vector<std::string_view> out;
  if (!list.is_array()) return out;
  for (const Json& s : list) {
    if (s.is_string()) out.push_back(AsString(s));
  }
  return out;
}

FailurePolicyAction ParseAction(std::string_view a) {
  if (a == kFailJobSet) return FailurePolicyAction::kFailJobSet;
  if (a == kRestartJobSet) return FailurePolicyAction::kRestartJobSet;
  if (a == kRestartJobSetAndIgnoreMaxRestarts) {
    return FailurePolicyAction::kRestartJobSetAndIgnoreMaxRestarts;
  }
  return FailurePolicyAction::kUnknown;
}

ReplicatedJobView ParseReplicatedJob(const Json& r) {
  ReplicatedJobView v;
  v.name = StringMember(r, "name");
  v.group_name = StringMember(r, "groupName");
  v.replicas = Int32Member(r, "replicas", 1);
  if (const Json* t = FindMember(r, "template"); t != nullptr && t->is_object()) {
    v.job_template = t;
    const Json& spec = Member(*t, "spec");
    v.parallelism = Int32Member(spec, "parallelism", 1);
    if (std::optional<int64_t> c = AsOptionalInt(Member(spec, "completions"))) {
      v.completions = static_cast<int32_t>(*c);
    }
  }
  for (const Json& d : MemberArray(r, "dependsOn")) {
    v.depends_on.push_back({StringMember(d, "name"), StringMember(d, "status") == kDependencyComplete
                                                         ? DependencyStatus::kComplete
                                                         : DependencyStatus::kReady});
  }
  return v;
}

FailurePolicyView ParseFailurePolicy(const Json& p) {
  FailurePolicyView v;
  v.max_restarts = Int32Member(p, "maxRestarts", 0);
  std::string_view strategy = StringMember(p, "restartStrategy");
  if (strategy == kBlockingRecreate) {
    v.restart_strategy = RestartStrategy::kBlockingRecreate;
  } else if (strategy == kInPlaceRestart) {
    v.restart_strategy = RestartStrategy::kInPlaceRestart;
  } else if (!strategy.empty() && strategy != kRecreate) {
    v.restart_strategy = RestartStrategy::kOther;
  }
  for (const Json& r : MemberArray(p, "rules")) {
    v.rules.push_back({StringMember(r, "name"), ParseAction(StringMember(r, "action")),
                       Strings(Member(r, "onJobFailureReasons")),
                       Strings(Member(r, "onJobFailureMessagePatterns")),
                       Strings(Member(r, "targetReplicatedJobs"))});
  }
  return v;
}

}  // namespace

bool SuccessPolicyView::Targets(std::string_view rjob) const {
  if (target_replicated_jobs.empty()) return true;
  for (std::string_view t : target_replicated_jobs) {
    if (t == rjob) return true;
  }
  return false;
}

JobSetSpecView JobSetSpecView::Parse(const Json& js) {
  JobSetSpecView v;
  const Json& spec = Member(js, "spec");
  for (const Json& r : MemberArray(spec, "replicatedJobs")) {
    v.replicated_jobs.push_back(ParseReplicatedJob(r));
  }
  const Json& network = Member(spec, "network");
  v.enable_dns_hostnames = BoolMember(network, "enableDNSHostnames", false);
  v.subdomain = StringMember(network, "subdomain");
  v.publish_not_ready_addresses = BoolMember(network, "publishNotReadyAddresses", true);
  const Json& success = Member(spec, "successPolicy");
  v.success_policy.any = StringMember(success, "operator") == kOperatorAny;
  v.success_policy.target_replicated_jobs = Strings(Member(success, "targetReplicatedJobs"));
  if (const Json& failure = Member(spec, "failurePolicy"); failure.is_object()) {
    v.failure_policy = ParseFailurePolicy(failure);
  }
  v.in_order_startup =
      StringMember(Member(spec, "startupPolicy"), "startupPolicyOrder") == kInOrder;
  v.suspend = BoolMember(spec, "suspend");
  if (const Json& c = Member(spec, "coordinator"); c.is_object()) {
    v.coordinator = CoordinatorView{StringMember(c, "replicatedJob"), IntMember(c, "jobIndex"),
                                    IntMember(c, "podIndex")};
  }
  if (const Json& m = Member(spec, "managedBy"); m.is_string()) v.managed_by = AsString(m);
  if (std::optional<int64_t> ttl = AsOptionalInt(Member(spec, "ttlSecondsAfterFinished"))) {
    v.ttl_seconds_after_finished = static_cast<int32_t>(*ttl);
  }
  for (const Json& p : MemberArray(spec, "volumeClaimPolicies")) {
    const bool del =
        StringMember(Member(p, "retentionPolicy"), "whenDeleted") != kRetentionRetain;
    for (const Json& t : MemberArray(p, "templates")) {
      v.volume_claims.push_back({StringMember(Member(t, "metadata"), "name"), del});
    }
  }
  return v;
}

bool JobSetSpecView::DeletesClaims() const {
  for (const VolumeClaimView& c : volume_claims) {
    if (c.delete_with_jobset) return true;
  }
  return false;
}

std::string ClaimName(std::string_view claim, std::string_view jobset) {
  return absl::StrCat(Sv(claim), "-", Sv(jobset));
}

const ReplicatedJobView* JobSetSpecView::ReplicatedJob(std::string_view name) const {
  for (const ReplicatedJobView& r : replicated_jobs) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

int64_t JobSetSpecView::TotalPods() const {
  int64_t total = 0;
  for (const ReplicatedJobView& r : replicated_jobs) total += int64_t{r.replicas} * r.parallelism;
  return total;
}

int64_t JobSetSpecView::GlobalReplicas() const {
  int64_t total = 0;
  for (const ReplicatedJobView& r : replicated_jobs) total += r.replicas;
  return total;
}

JobSetStatusView JobSetStatusView::Parse(const Json& js) {
  JobSetStatusView v;
  const Json& status = Member(js, "status");
  v.restarts = Int32Member(status, "restarts", 0);
  v.restarts_count_towards_max = Int32Member(status, "restartsCountTowardsMax", 0);
  v.terminal_state = StringMember(status, "terminalState");
  for (auto [field, dst] : {std::pair{"previousInPlaceRestartAttempt", &v.previous_in_place_attempt},
                            std::pair{"currentInPlaceRestartAttempt", &v.current_in_place_attempt}}) {
    if (const Json& a = Member(status, field); a.is_number_integer()) *dst = a.get<int32_t>();
  }
  for (const Json& r : MemberArray(status, "replicatedJobsStatus")) {
    v.replicated_jobs.push_back({StringMember(r, "name"), Int32Member(r, "ready", 0),
                                 Int32Member(r, "succeeded", 0), Int32Member(r, "failed", 0),
                                 Int32Member(r, "active", 0), Int32Member(r, "suspended", 0)});
  }
  if (const Json* c = FindMember(status, "conditions"); c != nullptr && c->is_array()) {
    v.conditions = c;
  }
  return v;
}

const ReplicatedJobStatusView* JobSetStatusView::ReplicatedJob(std::string_view name) const {
  for (const ReplicatedJobStatusView& r : replicated_jobs) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

bool JobSetStatusView::Finished() const {
  if (conditions == nullptr) return false;
  for (const char* type : {kConditionCompleted, kConditionFailed}) {
    const Json* c = meta::FindConditionIn(*conditions, type);
    if (c != nullptr && StringMember(*c, "status") == meta::kConditionTrue) return true;
  }
  return false;
}

std::optional<absl::Time> JobSetStatusView::FinishedTime() const {
  if (conditions == nullptr) return std::nullopt;
  for (const Json& c : *conditions) {
    std::string_view type = StringMember(c, "type");
    if ((type != kConditionCompleted && type != kConditionFailed) ||
        StringMember(c, "status") != meta::kConditionTrue) {
      continue;
    }
    absl::StatusOr<absl::Time> t = meta::ParseRfc3339(StringMember(c, "lastTransitionTime"));
    if (t.ok()) return *t;
    return std::nullopt;
  }
  return std::nullopt;
}

JobSetView JobSetView::Parse(const Json& js) {
  return {meta::ObjectMetaView::Parse(js), JobSetSpecView::Parse(js), JobSetStatusView::Parse(js)};
}

std::string_view JobSetView::Subdomain() const {
  return spec.subdomain.empty() ? meta.name : spec.subdomain;
}

bool JobSetView::ManagedByOther() const {
  return spec.managed_by && *spec.managed_by != kJobSetControllerName;
}

std::string JobSetView::CoordinatorEndpoint() const {
  if (!spec.coordinator) return "";
  return absl::StrCat(ChildJobName(meta.name, spec.coordinator->replicated_job,
                                   spec.coordinator->job_index),
                      "-", spec.coordinator->pod_index, ".", Sv(Subdomain()));
}

std::string ChildJobName(std::string_view jobset, std::string_view rjob, int64_t index) {
  return absl::StrCat(Sv(jobset), "-", Sv(rjob), "-", index);
}

}  // namespace batchd::api::jobset_v1alpha2
