// Fluent builder of JobSet test fixtures (STYLE.md practice 12):
//   MakeJobSet("js").ReplicatedJob("leader", 1, 1).ReplicatedJob("workers", 4, 2)
//       .DependsOn("workers", "leader", "Ready").Obj()
// A replicated job added with `ReplicatedJob(name, replicas, pods)` has an
// Indexed template of `pods` completions and parallelism running busybox.
// Header-only; tests only.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace batchd::api::testing {

using Json = nlohmann::json;

class JobSetBuilder {
 public:
  JobSetBuilder(std::string name, std::string ns) {
    obj_ = {{"apiVersion", "jobset.x-k8s.io/v1alpha2"},
            {"kind", "JobSet"},
            {"metadata", {{"name", std::move(name)}, {"namespace", std::move(ns)}}},
            {"spec", {{"replicatedJobs", Json::array()}}}};
  }
  JobSetBuilder& ReplicatedJob(const std::string& name, int replicas, int pods = 1) {
    Json pod_spec = {{"restartPolicy", "Never"},
                     {"containers",
                      {{{"name", "main"}, {"image", "busybox"}, {"command", {"true"}}}}}};
    Json job_spec = {{"completionMode", "Indexed"},
                     {"completions", pods},
                     {"parallelism", pods},
                     {"backoffLimit", 0},
                     {"template", {{"spec", pod_spec}}}};
    obj_["spec"]["replicatedJobs"].push_back(
        {{"name", name}, {"replicas", replicas}, {"template", {{"spec", job_spec}}}});
    return *this;
  }
  // Sets `value` at `ptr` inside the replicated job `rjob` (e.g.
  // "/template/spec/template/spec/nodeSelector").
  JobSetBuilder& InReplicatedJob(const std::string& rjob, const std::string& ptr, Json value) {
    for (Json& r : obj_["spec"]["replicatedJobs"]) {
      if (r["name"] == rjob) r[Json::json_pointer(ptr)] = std::move(value);
    }
    return *this;
  }
  JobSetBuilder& DependsOn(const std::string& rjob, const std::string& on,
                           const std::string& status) {
    return InReplicatedJob(rjob, "/dependsOn", Json::array({{{"name", on}, {"status", status}}}));
  }
  JobSetBuilder& SuccessPolicy(const std::string& op, std::vector<std::string> targets = {}) {
    obj_["spec"]["successPolicy"] = {{"operator", op}};
    if (!targets.empty()) obj_["spec"]["successPolicy"]["targetReplicatedJobs"] = targets;
    return *this;
  }
  JobSetBuilder& MaxRestarts(int n) {
    obj_["spec"]["failurePolicy"]["maxRestarts"] = n;
    return *this;
  }
  JobSetBuilder& RestartStrategy(const std::string& s) {
    obj_["spec"]["failurePolicy"]["restartStrategy"] = s;
    return *this;
  }
  // A failure policy rule; `reasons` / `targets` empty means any.
  JobSetBuilder& Rule(const std::string& name, const std::string& action,
                      std::vector<std::string> reasons = {},
                      std::vector<std::string> targets = {},
                      std::vector<std::string> patterns = {}) {
    Json rule = {{"action", action}};
    if (!name.empty()) rule["name"] = name;
    if (!reasons.empty()) rule["onJobFailureReasons"] = reasons;
    if (!targets.empty()) rule["targetReplicatedJobs"] = targets;
    if (!patterns.empty()) rule["onJobFailureMessagePatterns"] = patterns;
    obj_["spec"]["failurePolicy"]["rules"].push_back(rule);
    return *this;
  }
  JobSetBuilder& InOrder() {
    obj_["spec"]["startupPolicy"] = {{"startupPolicyOrder", "InOrder"}};
    return *this;
  }
  JobSetBuilder& Suspend(bool s) {
    obj_["spec"]["suspend"] = s;
    return *this;
  }
  JobSetBuilder& Ttl(int seconds) {
    obj_["spec"]["ttlSecondsAfterFinished"] = seconds;
    return *this;
  }
  JobSetBuilder& ManagedBy(const std::string& m) {
    obj_["spec"]["managedBy"] = m;
    return *this;
  }
  JobSetBuilder& Coordinator(const std::string& rjob, int job_index, int pod_index) {
    obj_["spec"]["coordinator"] = {
        {"replicatedJob", rjob}, {"jobIndex", job_index}, {"podIndex", pod_index}};
    return *this;
  }
  JobSetBuilder& Subdomain(const std::string& s) {
    obj_["spec"]["network"]["subdomain"] = s;
    return *this;
  }
  JobSetBuilder& Set(const std::string& ptr, Json v) {
    obj_[Json::json_pointer(ptr)] = std::move(v);
    return *this;
  }
  Json Obj() const { return obj_; }

 private:
  Json obj_;
};

inline JobSetBuilder MakeJobSet(std::string name, std::string ns = "default") {
  return JobSetBuilder(std::move(name), std::move(ns));
}

}  // namespace batchd::api::testing
