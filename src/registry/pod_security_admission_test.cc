#include "registry/pod_security_admission.h"

#include "common/testing/fake_clock.h"
#include "gtest/gtest.h"
#include "registry/errors.h"
#include "store/memory/memory_store.h"

namespace batchd::registry {
namespace {

using api::Json;

class PodSecurityAdmissionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    reg_ = std::make_unique<Registry>(store_, api::BuiltinScheme(), clock_);
    ASSERT_TRUE(reg_->Start().ok());
    AddPodSecurityAdmission(*reg_);
    pods_ = reg_->scheme().ByResource("", "v1", "pods");
    const api::KindDef* nss = reg_->scheme().ByResource("", "v1", "namespaces");
    for (const auto& [name, level] : std::vector<std::pair<std::string, std::string>>{
             {"priv", "privileged"}, {"base", "baseline"}, {"plain", ""}}) {
      Json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}};
      if (!level.empty()) {
        ns["metadata"]["labels"] = {{"pod-security.kubernetes.io/enforce", level}};
      }
      ASSERT_TRUE(reg_->Create(*nss, "", ns, WriteOptions{}).ok());
    }
  }
  static Json Pod(const std::string& name, Json pod_sc, Json container_sc) {
    Json c = {{"name", "c"}, {"image", "x"}};
    if (!container_sc.is_null()) c["securityContext"] = container_sc;
    Json spec = {{"containers", {c}}};
    if (!pod_sc.is_null()) spec["securityContext"] = pod_sc;
    return {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", name}}}, {"spec", spec}};
  }
  absl::StatusOr<Json> Create(const std::string& ns, Json pod,
                              std::vector<std::string>* warnings = nullptr) {
    WriteOptions o;
    o.warnings = warnings;
    return reg_->Create(*pods_, ns, std::move(pod), o);
  }

  FakeClock clock_;
  store::MemoryStore store_;
  std::unique_ptr<Registry> reg_;
  const api::KindDef* pods_ = nullptr;
};

TEST_F(PodSecurityAdmissionTest, RootOnlyInPrivilegedNamespaces) {
  absl::StatusOr<Json> r = Create("plain", Pod("x", nullptr, {{"runAsUser", 0}}));
  EXPECT_TRUE(absl::IsPermissionDenied(r.status()));
  EXPECT_EQ(r.status().message(),
            "pods \"x\" is forbidden: violates PodSecurity \"baseline:latest\": runAsUser=0 "
            "(container \"c\" must not set runAsUser=0)");
  r = Create("base", Pod("y", {{"runAsUser", 0}}, nullptr));
  EXPECT_EQ(r.status().message(),
            "pods \"y\" is forbidden: violates PodSecurity \"baseline:latest\": runAsUser=0 "
            "(pod must not set runAsUser=0)");
  EXPECT_TRUE(Create("priv", Pod("z", {{"runAsUser", 0}}, nullptr)).ok());
  // Non-root and unset identities need no label.
  EXPECT_TRUE(Create("plain", Pod("a", {{"runAsUser", 1234}}, nullptr)).ok());
  EXPECT_TRUE(Create("plain", Pod("b", nullptr, nullptr)).ok());
}

TEST_F(PodSecurityAdmissionTest, UnhonouredFieldsAreRefusedOrWarned) {
  absl::StatusOr<Json> r = Create("priv", Pod("p", nullptr, {{"privileged", true}}));
  EXPECT_TRUE(absl::IsInvalidArgument(r.status()));
  EXPECT_NE(r.status().message().find(
                "spec.containers[0].securityContext.privileged: Forbidden: batchd does not run "
                "privileged containers"),
            std::string::npos)
      << r.status();
  r = Create("plain", Pod("q", nullptr, {{"capabilities", {{"add", {"NET_ADMIN"}}}}}));
  EXPECT_NE(r.status().message().find("spec.containers[0].securityContext.capabilities.add: "
                                      "Forbidden"),
            std::string::npos)
      << r.status();
  r = Create("plain", Pod("r", {{"runAsUser", -1}}, nullptr));
  EXPECT_NE(r.status().message().find("spec.securityContext.runAsUser: Invalid value: -1: must "
                                      "be between 0 and 2147483647, inclusive"),
            std::string::npos)
      << r.status();
  std::vector<std::string> warnings;
  r = Create("plain",
             Pod("s", {{"seccompProfile", {{"type", "RuntimeDefault"}}}},
                 {{"readOnlyRootFilesystem", true}, {"allowPrivilegeEscalation", false}}),
             &warnings);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(warnings, (std::vector<std::string>{
                          "spec.securityContext.seccompProfile: not applied (pods run as host "
                          "processes)",
                          "spec.containers[0].securityContext.readOnlyRootFilesystem: not "
                          "applied (a host process shares the node's root filesystem)"}));
}

}  // namespace
}  // namespace batchd::registry
