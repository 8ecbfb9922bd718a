#include "agent/internal/pod_spec.h"

#include <map>

#include "gtest/gtest.h"

namespace batchd::agent::internal {
namespace {

using api::Json;

Json TestPod() {
  return Json::parse(R"json({
    "metadata": {"name": "p", "namespace": "ns", "uid": "u-1",
                 "labels": {"batch.kubernetes.io/job-completion-index": "3"},
                 "annotations": {"a": "b"}},
    "spec": {"nodeName": "n1", "serviceAccountName": "sa", "restartPolicy": "Never",
             "containers": [{"name": "c", "image": "busybox",
                             "command": ["sh", "-c"], "args": ["echo $(GREETING) $$(X) $(NOPE)"],
                             "workingDir": "/tmp",
                             "resources": {"limits": {"cpu": "1500m", "memory": "64Mi"},
                                           "requests": {"cpu": "250m"}},
                             "readinessProbe": {"exec": {"command": ["true"]}, "periodSeconds": 2},
                             "env": [{"name": "NAME", "value": "world"},
                                     {"name": "GREETING", "value": "hello $(NAME)"}]}]},
    "status": {"hostIP": "127.0.0.1", "podIP": "127.0.0.1"}
  })json");
}

TEST(ExpandVarsTest, KubernetesRules) {
  std::map<std::string, std::string, std::less<>> vars = {{"A", "1"}, {"B", "two"}};
  auto lookup = [&](std::string_view n) -> std::optional<std::string> {
    auto it = vars.find(n);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
  struct Case {
    std::string name, in, want;
  };
  for (const Case& c : std::vector<Case>{
           {"plain", "abc", "abc"},
           {"one", "$(A)", "1"},
           {"two", "x$(A)y$(B)z", "x1ytwoz"},
           {"undefined stays", "$(C)", "$(C)"},
           {"escaped", "$$(A)", "$(A)"},
           {"double dollar", "a$$b", "a$b"},
           {"lone dollar", "a$b", "a$b"},
           {"trailing dollar", "a$", "a$"},
           {"unterminated", "$(A", "$(A"},
           {"empty name", "$()", "$()"},
       }) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(ExpandVars(c.in, lookup), c.want);
  }
}

TEST(ResolveFieldRefTest, DownwardApiPaths) {
  Json pod = TestPod();
  struct Case {
    std::string path, want;
    bool ok;
  };
  for (const Case& c : std::vector<Case>{
           {"metadata.name", "p", true},
           {"metadata.namespace", "ns", true},
           {"metadata.uid", "u-1", true},
           {"metadata.labels['batch.kubernetes.io/job-completion-index']", "3", true},
           {"metadata.annotations['a']", "b", true},
           {"metadata.annotations['missing']", "", true},
           {"spec.nodeName", "n1", true},
           {"spec.serviceAccountName", "sa", true},
           {"status.hostIP", "127.0.0.1", true},
           {"status.podIP", "127.0.0.1", true},
           {"spec.containers", "", false},
       }) {
    SCOPED_TRACE(c.path);
    auto v = ResolveFieldRef(pod, c.path);
    ASSERT_EQ(v.ok(), c.ok) << v.status();
    if (c.ok) {
      EXPECT_EQ(*v, c.want);
    }
  }
}

TEST(ResolveResourceFieldRefTest, LimitsRequestsDivisorsAndNodeDefaults) {
  Json pod = TestPod();
  const Json& c = pod["spec"]["containers"][0];
  Json alloc = {{"cpu", "8"}, {"memory", "16Gi"}};
  struct Case {
    std::string name;
    Json ref;
    std::string want;
  };
  for (const Case& tc : std::vector<Case>{
           {"cpu limit rounds up to cores", {{"resource", "limits.cpu"}}, "2"},
           {"cpu limit in millis", {{"resource", "limits.cpu"}, {"divisor", "1m"}}, "1500"},
           {"cpu request", {{"resource", "requests.cpu"}, {"divisor", "1m"}}, "250"},
           {"memory limit bytes", {{"resource", "limits.memory"}}, "67108864"},
           {"memory limit Mi", {{"resource", "limits.memory"}, {"divisor", "1Mi"}}, "64"},
           {"memory request defaults to limit",
            {{"resource", "requests.memory"}, {"divisor", "1Mi"}}, "64"},
           {"named container", {{"containerName", "c"}, {"resource", "limits.cpu"}}, "2"},
       }) {
    SCOPED_TRACE(tc.name);
    auto v = ResolveResourceFieldRef(pod, c, tc.ref, alloc);
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_EQ(*v, tc.want);
  }
  Json bare = {{"name", "b"}};
  auto node_cpu = ResolveResourceFieldRef(pod, bare, {{"resource", "limits.cpu"}}, alloc);
  ASSERT_TRUE(node_cpu.ok());
  EXPECT_EQ(*node_cpu, "8");  // Unset limit: the node's allocatable.
  EXPECT_FALSE(ResolveResourceFieldRef(pod, bare, {{"resource", "cpu"}}, alloc).ok());
}

TEST(ResolveEnvTest, OrderExpansionAndValueFrom) {
  Json pod = TestPod();
  Json c = pod["spec"]["containers"][0];
  c["env"].push_back({{"name", "IDX"},
                      {"valueFrom",
                       {{"fieldRef",
                         {{"fieldPath",
                           "metadata.labels['batch.kubernetes.io/job-completion-index']"}}}}}});
  c["env"].push_back({{"name", "MEM"},
                      {"valueFrom",
                       {{"resourceFieldRef", {{"resource", "limits.memory"}, {"divisor", "1Mi"}}}}}});
  c["env"].push_back({{"name", "OPT"},
                      {"valueFrom", {{"configMapKeyRef", {{"name", "cm"}, {"key", "k"},
                                                          {"optional", true}}}}}});
  c["env"].push_back({{"name", "LATER"}, {"value", "$(IDX)-$(UNSET)"}});
  auto env = ResolveEnv(pod, c, Json::object());
  ASSERT_TRUE(env.ok()) << env.status();
  EnvList want = {{"HOSTNAME", "p"},           {"NAME", "world"}, {"GREETING", "hello world"},
                  {"IDX", "3"},                {"MEM", "64"},     {"LATER", "3-$(UNSET)"}};
  EXPECT_EQ(*env, want);

  c["env"].push_back({{"name", "SECRET"},
                      {"valueFrom", {{"secretKeyRef", {{"name", "s"}, {"key", "k"}}}}}});
  auto missing = ResolveEnv(pod, c, Json::object());
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("secret \"s\" not found"), std::string::npos);
}

TEST(BuildSandboxSpecTest, CommandArgsLimitsProbe) {
  auto spec = BuildSandboxSpec(TestPod(), Json::object());
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->uid, "u-1");
  EXPECT_EQ(spec->restart_policy, "Never");
  EXPECT_EQ(spec->termination_grace_seconds, 30);
  ASSERT_EQ(spec->containers.size(), 1u);
  const ContainerSpec& c = spec->containers[0];
  EXPECT_EQ(c.argv, (std::vector<std::string>{"sh", "-c", "echo hello world $(X) $(NOPE)"}));
  EXPECT_EQ(c.working_dir, "/tmp");
  EXPECT_EQ(c.cpu_limit_millis, 1500);
  EXPECT_EQ(c.memory_limit_bytes, 64 << 20);
  EXPECT_EQ(c.readiness_exec, (std::vector<std::string>{"true"}));
  EXPECT_EQ(c.readiness_period_seconds, 2);

  Json no_cmd = TestPod();
  no_cmd["spec"]["containers"][0].erase("command");
  no_cmd["spec"]["containers"][0].erase("args");
  EXPECT_FALSE(BuildSandboxSpec(no_cmd, Json::object()).ok());
}

// Secrets and ConfigMaps for env: "db" (password=s3cr3t-value, user=admin)
// and "cfg" (mode=fast, "bad key"=x) in namespace ns.
ObjectLookup TestLookup() {
  return [](std::string_view resource, const std::string& ns,
            const std::string& name) -> absl::StatusOr<std::optional<Json>> {
    if (ns != "ns") return std::optional<Json>();
    if (resource == "secrets" && name == "db") {
      return std::optional<Json>(Json::parse(R"({"metadata": {"name": "db", "namespace": "ns"},
        "data": {"password": "czNjcjN0LXZhbHVl", "user": "YWRtaW4="}})"));
    }
    if (resource == "configmaps" && name == "cfg") {
      return std::optional<Json>(Json::parse(R"({"metadata": {"name": "cfg", "namespace": "ns"},
        "data": {"mode": "fast", "bad=key": "x"}})"));
    }
    return std::optional<Json>();
  };
}

Json EnvPod(Json env, Json env_from = Json::array()) {
  Json pod = TestPod();
  Json& c = pod["spec"]["containers"][0];
  c["env"] = std::move(env);
  if (!env_from.empty()) c["envFrom"] = std::move(env_from);
  return pod;
}

absl::StatusOr<EnvList> Env(const Json& pod, std::vector<std::string>* warnings = nullptr) {
  return ResolveEnv(pod, pod["spec"]["containers"][0], Json::object(), TestLookup(), warnings);
}

std::string Value(const EnvList& env, const std::string& name) {
  for (const auto& [k, v] : env) {
    if (k == name) return v;
  }
  return "<unset>";
}

TEST(ResolveEnvTest, SecretAndConfigMapKeyRefs) {
  Json pod = EnvPod(Json::parse(R"([
    {"name": "PASS", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}},
    {"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "mode"}}},
    {"name": "OPT", "valueFrom": {"secretKeyRef": {"name": "db", "key": "nope", "optional": true}}},
    {"name": "GONE", "valueFrom": {"configMapKeyRef": {"name": "none", "key": "k", "optional": true}}},
    {"name": "URL", "value": "db://$(PASS)@host"}])"));
  absl::StatusOr<EnvList> env = Env(pod);
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(Value(*env, "PASS"), "s3cr3t-value");  // decoded from base64
  EXPECT_EQ(Value(*env, "MODE"), "fast");
  EXPECT_EQ(Value(*env, "OPT"), "<unset>");
  EXPECT_EQ(Value(*env, "GONE"), "<unset>");
  EXPECT_EQ(Value(*env, "URL"), "db://s3cr3t-value@host");
}

TEST(ResolveEnvTest, MissingObjectsAndKeysAreKubeletErrorsWithoutValues) {
  struct Case {
    std::string name;
    Json env;
    std::string want;
  };
  for (const Case& c : std::vector<Case>{
           {"secret", Json::parse(R"([{"name": "A", "valueFrom": {"secretKeyRef": {"name": "x", "key": "k"}}}])"),
            "secret \"x\" not found"},
           {"configmap", Json::parse(R"([{"name": "A", "valueFrom": {"configMapKeyRef": {"name": "x", "key": "k"}}}])"),
            "configmap \"x\" not found"},
           {"secret key", Json::parse(R"([{"name": "A", "valueFrom": {"secretKeyRef": {"name": "db", "key": "pw"}}}])"),
            "couldn't find key pw in Secret ns/db"},
           {"configmap key", Json::parse(R"([{"name": "A", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "k"}}}])"),
            "couldn't find key k in ConfigMap ns/cfg"},
       }) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<EnvList> env = Env(EnvPod(c.env));
    EXPECT_TRUE(absl::IsFailedPrecondition(env.status()));
    EXPECT_EQ(env.status().message(), c.want);
  }
  // A missing envFrom source too.
  absl::StatusOr<EnvList> env =
      Env(EnvPod(Json::array(), Json::parse(R"([{"secretRef": {"name": "zz"}}])")));
  EXPECT_EQ(env.status().message(), "secret \"zz\" not found");
}

TEST(ResolveEnvTest, EnvFromWithPrefixThenEnvOverrides) {
  Json pod = EnvPod(Json::parse(R"([{"name": "DB_user", "value": "override"}])"),
                    Json::parse(R"([{"secretRef": {"name": "db"}, "prefix": "DB_"},
                                    {"configMapRef": {"name": "cfg"}},
                                    {"configMapRef": {"name": "other", "optional": true}}])"));
  std::vector<std::string> warnings;
  absl::StatusOr<EnvList> env = Env(pod, &warnings);
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(Value(*env, "DB_password"), "s3cr3t-value");
  EXPECT_EQ(Value(*env, "DB_user"), "override");  // env wins over envFrom
  EXPECT_EQ(Value(*env, "mode"), "fast");
  EXPECT_EQ(Value(*env, "bad=key"), "<unset>");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "Keys [bad=key] from the EnvFrom configMap ns/cfg were skipped since they are "
            "considered invalid environment variable names.");
}

}  // namespace
}  // namespace batchd::agent::internal
