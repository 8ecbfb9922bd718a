#include "controllers/queueing/config.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace batchd::controllers::queueing {
namespace {

using ::testing::HasSubstr;
using Labels = std::map<std::string, std::string>;

TEST(QueueingConfigTest, BuiltinDefaultIsOff) {
  QueueingConfig cfg;
  EXPECT_FALSE(cfg.wait_for_pods_ready.enable);
  EXPECT_FALSE(cfg.fair_sharing.enable);
  EXPECT_FALSE(cfg.manage_jobs_without_queue_name);
  EXPECT_EQ(cfg.frameworks, (std::vector<std::string>{"batch/job", "jobset.x-k8s.io/jobset"}));
}

TEST(QueueingConfigTest, VersionDefaults) {
  struct Case {
    std::string name, yaml;
    bool wfpr_enable;
    absl::Duration timeout;
    bool block;
    std::optional<absl::Duration> recovery;
    bool fs_enable;
  };
  const Case cases[] = {
      {"v1beta2 empty", "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n", true,
       absl::Minutes(30), false, absl::Minutes(30), false},
      {"v1beta2 gate off",
       "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
       "featureGates: {DisableWaitForPodsReady: true}\n",
       false, absl::Minutes(30), false, absl::Minutes(30), false},
      {"v1beta2 timeout and fairSharing",
       "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
       "waitForPodsReady: {timeout: 2m, blockAdmission: true}\nfairSharing: {}\n",
       true, absl::Minutes(2), true, absl::Minutes(2), true},
      {"v1beta2 zero timeout defaults",
       "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
       "waitForPodsReady: {timeout: 0s, recoveryTimeout: 1m}\n",
       true, absl::Minutes(30), false, absl::Minutes(1), false},
      {"v1beta1 empty", "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n", false,
       absl::Minutes(5), false, std::nullopt, false},
      {"v1beta1 enabled: blockAdmission follows enable",
       "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"
       "waitForPodsReady: {enable: true}\nfairSharing: {enable: true}\n",
       true, absl::Minutes(5), true, std::nullopt, true},
      {"v1beta1 block off",
       "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"
       "waitForPodsReady: {enable: true, blockAdmission: false, timeout: 90s}\n"
       "fairSharing: {enable: false}\n",
       true, absl::Seconds(90), false, std::nullopt, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto cfg = ParseQueueingConfig(c.yaml);
    ASSERT_TRUE(cfg.ok()) << cfg.status();
    const auto& w = cfg->wait_for_pods_ready;
    EXPECT_EQ(w.enable, c.wfpr_enable);
    EXPECT_EQ(w.timeout, c.timeout);
    EXPECT_EQ(w.block_admission, c.block);
    EXPECT_EQ(w.recovery_timeout, c.recovery);
    EXPECT_EQ(w.requeuing.timestamp, RequeuingTimestamp::kEviction);
    EXPECT_EQ(w.requeuing.backoff_base_seconds, 60);
    EXPECT_EQ(w.requeuing.backoff_max_seconds, 3600);
    EXPECT_FALSE(w.requeuing.backoff_limit_count.has_value());
    EXPECT_EQ(cfg->fair_sharing.enable, c.fs_enable);
    EXPECT_EQ(cfg->fair_sharing.preemption_strategies.size(), 2u);
  }
}

TEST(QueueingConfigTest, FullDocument) {
  auto cfg = ParseQueueingConfig(R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
health: {healthProbeBindAddress: ":8081"}
metrics: {bindAddress: ":8443"}
manageJobsWithoutQueueName: true
waitForPodsReady:
  timeout: 10m
  recoveryTimeout: 0s
  requeuingStrategy:
    timestamp: Creation
    backoffLimitCount: 5
    backoffBaseSeconds: 10
    backoffMaxSeconds: 100
fairSharing:
  preemptionStrategies: [LessThanInitialShare]
integrations:
  frameworks: ["batch/job", "jobset.x-k8s.io/jobset"]
)");
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_EQ(cfg->api_version, "config.kueue.x-k8s.io/v1beta2");
  EXPECT_TRUE(cfg->manage_jobs_without_queue_name);
  const auto& w = cfg->wait_for_pods_ready;
  EXPECT_EQ(w.timeout, absl::Minutes(10));
  EXPECT_EQ(w.recovery_timeout, absl::ZeroDuration());
  EXPECT_EQ(w.requeuing.timestamp, RequeuingTimestamp::kCreation);
  EXPECT_EQ(w.requeuing.backoff_limit_count, 5);
  EXPECT_EQ(w.requeuing.backoff_base_seconds, 10);
  EXPECT_EQ(w.requeuing.backoff_max_seconds, 100);
  EXPECT_TRUE(cfg->fair_sharing.enable);
  ASSERT_EQ(cfg->fair_sharing.preemption_strategies.size(), 1u);
  EXPECT_EQ(FairSharingStrategyName(cfg->fair_sharing.preemption_strategies[0]),
            "LessThanInitialShare");
  EXPECT_EQ(cfg->frameworks,
            (std::vector<std::string>{"batch/job", "jobset.x-k8s.io/jobset"}));
}

TEST(QueueingConfigTest, PodFrameworkAndNamespaceSelectors) {
  auto cfg = ParseQueueingConfig(
      "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"
      "managedJobsNamespaceSelector: {matchLabels: {team: a}}\n"
      "integrations:\n"
      "  frameworks: [batch/job, pod]\n"
      "  podOptions:\n"
      "    namespaceSelector: {matchExpressions: [{key: kubernetes.io/metadata.name, "
      "operator: NotIn, values: [kube-system]}]}\n"
      "    podSelector: {matchLabels: {queued: \"yes\"}}\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_TRUE(cfg->FrameworkEnabled("pod"));
  EXPECT_FALSE(cfg->FrameworkEnabled("jobset.x-k8s.io/jobset"));
  ASSERT_TRUE(cfg->managed_jobs_namespace_selector.has_value());
  EXPECT_TRUE(cfg->managed_jobs_namespace_selector->Matches(Labels{{"team", "a"}}));
  EXPECT_FALSE(cfg->managed_jobs_namespace_selector->Matches(Labels{{"team", "b"}}));
  ASSERT_TRUE(cfg->pod_namespace_selector.has_value());
  EXPECT_FALSE(cfg->pod_namespace_selector->Matches(Labels{{"kubernetes.io/metadata.name", "kube-system"}}));
  ASSERT_TRUE(cfg->pod_selector.has_value());
  EXPECT_TRUE(cfg->pod_selector->Matches(Labels{{"queued", "yes"}}));
  EXPECT_FALSE(QueueingConfig{}.FrameworkEnabled("pod")) << "Kueue's default is batch/job alone";
}

TEST(QueueingConfigTest, Errors) {
  struct Case {
    std::string name, yaml, want;
  };
  const std::string v2 = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n";
  const Case cases[] = {
      {"not yaml", "a: [", "invalid queueing configuration"},
      {"not an object", "- 1\n", "expected a Configuration object"},
      {"no apiVersion", "kind: Configuration\n", "apiVersion: Required value"},
      {"wrong apiVersion", "apiVersion: v1\nkind: Configuration\n",
       "apiVersion: Unsupported value: \"v1\""},
      {"wrong kind", "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Foo\n",
       "kind: Unsupported value: \"Foo\""},
      {"unknown top-level", v2 + "bogus: 1\n", "bogus: Invalid value: \"bogus\": unknown field"},
      {"v1beta2 has no enable", v2 + "waitForPodsReady: {enable: true}\n",
       "waitForPodsReady.enable: Invalid value"},
      {"bad duration", v2 + "waitForPodsReady: {timeout: 5x}\n",
       "waitForPodsReady.timeout: Invalid value: \"5x\": must be a duration"},
      {"negative duration", v2 + "waitForPodsReady: {timeout: -1m}\n",
       "must be greater than or equal to 0"},
      {"numeric duration", v2 + "waitForPodsReady: {recoveryTimeout: 5}\n",
       "waitForPodsReady.recoveryTimeout: Invalid value: 5"},
      {"bad timestamp", v2 + "waitForPodsReady: {requeuingStrategy: {timestamp: Now}}\n",
       "waitForPodsReady.requeuingStrategy.timestamp: Unsupported value: \"Now\""},
      {"negative limit", v2 + "waitForPodsReady: {requeuingStrategy: {backoffLimitCount: -1}}\n",
       "waitForPodsReady.requeuingStrategy.backoffLimitCount: Invalid value: -1"},
      {"bool as string", v2 + "manageJobsWithoutQueueName: \"yes\"\n",
       "manageJobsWithoutQueueName: Invalid value: \"yes\": must be a boolean"},
      {"bad strategy", v2 + "fairSharing: {preemptionStrategies: [Foo]}\n",
       "fairSharing.preemptionStrategies[0]: Unsupported value: \"Foo\""},
      {"bad strategy order",
       v2 + "fairSharing: {preemptionStrategies: [LessThanInitialShare, "
            "LessThanOrEqualToFinalShare]}\n",
       "fairSharing.preemptionStrategies: Invalid value"},
      {"duplicate framework", v2 + "integrations: {frameworks: [batch/job, batch/job]}\n",
       "integrations.frameworks[1]: Duplicate value"},
      {"framework batchd does not integrate",
       v2 + "integrations: {frameworks: [batch/job, kubeflow.org/mpijob]}\n",
       "integrations.frameworks[1]: Unsupported value: \"kubeflow.org/mpijob\""},
      {"feature gate not bool", v2 + "featureGates: {X: 1}\n", "featureGates.X: Invalid value"},
      {"bad namespace selector",
       v2 + "managedJobsNamespaceSelector: {matchExpressions: [{key: a, operator: Near}]}\n",
       "managedJobsNamespaceSelector.matchExpressions[0].operator"},
      {"bad pod selector", v2 + "integrations: {podOptions: {podSelector: {matchLabels: 3}}}\n",
       "integrations.podOptions.podSelector"},
      {"unknown pod option", v2 + "integrations: {podOptions: {bogus: 1}}\n",
       "integrations.podOptions.bogus: Invalid value"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto cfg = ParseQueueingConfig(c.yaml);
    ASSERT_FALSE(cfg.ok());
    EXPECT_EQ(cfg.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(cfg.status().message()), HasSubstr(c.want));
  }
}

}  // namespace
}  // namespace batchd::controllers::queueing

namespace batchd::controllers::queueing {
namespace {

// multiKueue: origin, workerLostTimeout and gcInterval are honoured (Kueue's
// defaults otherwise); other dispatchers, externalFrameworks and
// clusterProfile are refused.
TEST(QueueingConfigTest, MultiKueue) {
  const std::string head = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n";
  auto none = ParseQueueingConfig(head);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->multi_kueue.worker_lost_timeout, absl::Minutes(15));
  EXPECT_EQ(none->multi_kueue.gc_interval, absl::Minutes(1));
  EXPECT_EQ(none->multi_kueue.origin, "multikueue");
  auto set = ParseQueueingConfig(
      head + "multiKueue: {workerLostTimeout: 30s, gcInterval: 0s, origin: m2, dispatcherName: "
             "kueue.x-k8s.io/multikueue-dispatcher-all-at-once}\n");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->multi_kueue.worker_lost_timeout, absl::Seconds(30));
  EXPECT_EQ(set->multi_kueue.gc_interval, absl::ZeroDuration());
  EXPECT_EQ(set->multi_kueue.origin, "m2");
  EXPECT_EQ(set->multi_kueue.dispatcher_name, "kueue.x-k8s.io/multikueue-dispatcher-all-at-once");
  auto incremental = ParseQueueingConfig(
      head + "multiKueue: {dispatcherName: kueue.x-k8s.io/multikueue-dispatcher-incremental}\n");
  ASSERT_TRUE(incremental.ok()) << incremental.status();
  EXPECT_EQ(incremental->multi_kueue.dispatcher_name,
            "kueue.x-k8s.io/multikueue-dispatcher-incremental");
  auto external = ParseQueueingConfig(head + "multiKueue: {dispatcherName: example.com/mine}\n");
  ASSERT_FALSE(external.ok());
  EXPECT_THAT(external.status().message(),
              ::testing::HasSubstr("multiKueue.dispatcherName: Unsupported value: \"example.com/mine\""));
  for (const char* bad : {"multiKueue: {dispatcherName: example.com/external}",
                          "multiKueue: {externalFrameworks: [{name: Foo.v1.example.com}]}",
                          "multiKueue: {workerLostTimeout: soon}", "multiKueue: {origin: \"\"}",
                          "multiKueue: {nope: 1}"}) {
    auto r = ParseQueueingConfig(head + bad + "\n");
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) EXPECT_THAT(r.status().message(), ::testing::HasSubstr("multiKueue.")) << bad;
  }
}

// objectRetentionPolicies.workloads.afterFinished is honoured (unset: kept);
// afterDeactivatedByKueue is refused, not ignored.
TEST(QueueingConfigTest, WorkloadRetention) {
  const std::string head = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n";
  auto none = ParseQueueingConfig(head);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->workload_retention_after_finished.has_value());
  auto set = ParseQueueingConfig(head + "objectRetentionPolicies: {workloads: {afterFinished: 1h}}\n");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->workload_retention_after_finished, absl::Hours(1));
  auto deact = ParseQueueingConfig(
      head + "objectRetentionPolicies: {workloads: {afterDeactivatedByKueue: 1h}}\n");
  ASSERT_FALSE(deact.ok());
  EXPECT_THAT(deact.status().message(),
              ::testing::HasSubstr("objectRetentionPolicies.workloads.afterDeactivatedByKueue"));
  auto bad = ParseQueueingConfig(head + "objectRetentionPolicies: {workloads: {afterFinished: x}}\n");
  EXPECT_FALSE(bad.ok());
  auto unknown = ParseQueueingConfig(head + "objectRetentionPolicies: {jobs: {}}\n");
  EXPECT_FALSE(unknown.ok());
}

TEST(QueueingConfigTest, AdmissionFairSharing) {
  const std::string head = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n";
  auto none = ParseQueueingConfig(head);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->admission_fair_sharing.has_value());
  auto set = ParseQueueingConfig(
      head + "admissionFairSharing: {usageHalfLifeTime: 168h, usageSamplingInterval: 1m, "
             "resourceWeights: {cpu: 2.0, memory: 1}}\n");
  ASSERT_TRUE(set.ok()) << set.status();
  ASSERT_TRUE(set->admission_fair_sharing.has_value());
  EXPECT_EQ(set->admission_fair_sharing->usage_half_life, absl::Hours(168));
  EXPECT_EQ(set->admission_fair_sharing->usage_sampling_interval, absl::Minutes(1));
  EXPECT_EQ(set->admission_fair_sharing->resource_weights.at("cpu"), 2.0);
  auto defaults = ParseQueueingConfig(head + "admissionFairSharing: {}\n");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->admission_fair_sharing->usage_sampling_interval, absl::Minutes(5));
  auto gated = ParseQueueingConfig(
      head + "featureGates: {AdmissionFairSharing: false}\nadmissionFairSharing: {}\n");
  ASSERT_TRUE(gated.ok()) << gated.status();
  EXPECT_FALSE(gated->admission_fair_sharing.has_value());
  for (const char* bad : {"admissionFairSharing: {usageSamplingInterval: 0s}\n",
                          "admissionFairSharing: {resourceWeights: {cpu: -1}}\n",
                          "admissionFairSharing: {usageHalfLife: 1h}\n"}) {
    auto r = ParseQueueingConfig(head + bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) EXPECT_THAT(r.status().message(), ::testing::HasSubstr("admissionFairSharing")) << bad;
  }
}

}  // namespace
}  // namespace batchd::controllers::queueing
