#include <gtest/gtest.h>

#include "api/core/v1/core_v1.h"
#include "api/core/v1/internal/pods.h"

namespace batchd::api::core_v1 {
namespace {

Json BaseSpec() {
  Json spec = Json::parse(R"({
    "containers": [{"name": "main", "image": "busybox:1.36"}],
    "restartPolicy": "Never"
  })");
  SetDefaultsPodSpec(spec);
  return spec;
}

std::vector<std::string> Messages(const ErrorList& errs) {
  std::vector<std::string> out;
  for (const FieldError& e : errs) out.push_back(e.Message());
  return out;
}

TEST(PodDefaultsTest, SetsKubernetesDefaults) {
  Json spec = Json::parse(R"({"containers": [
      {"name": "a", "image": "busybox"},
      {"name": "b", "image": "busybox:1.36", "ports": [{"containerPort": 80}],
       "env": [{"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
       "livenessProbe": {"httpGet": {"port": 8080}}},
      {"name": "c", "image": "repo/img:latest", "imagePullPolicy": "Never"}],
      "volumes": [{"name": "scratch"}]})");
  SetDefaultsPodSpec(spec);
  struct Case {
    std::string pointer;
    Json want;
  };
  const std::vector<Case> cases = {
      {"/restartPolicy", "Always"},
      {"/dnsPolicy", "ClusterFirst"},
      {"/schedulerName", "default-scheduler"},
      {"/terminationGracePeriodSeconds", 30},
      {"/securityContext", Json::object()},
      {"/containers/0/imagePullPolicy", "Always"},
      {"/containers/1/imagePullPolicy", "IfNotPresent"},
      {"/containers/2/imagePullPolicy", "Never"},
      {"/containers/0/terminationMessagePath", "/dev/termination-log"},
      {"/containers/0/terminationMessagePolicy", "File"},
      {"/containers/1/ports/0/protocol", "TCP"},
      {"/containers/1/env/0/valueFrom/fieldRef/apiVersion", "v1"},
      {"/containers/1/livenessProbe/periodSeconds", 10},
      {"/containers/1/livenessProbe/httpGet/path", "/"},
      {"/containers/1/livenessProbe/httpGet/scheme", "HTTP"},
      {"/volumes/0/emptyDir", Json::object()},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.pointer);
    EXPECT_EQ(spec.at(Json::json_pointer(c.pointer)), c.want);
  }
  EXPECT_FALSE(spec.contains("enableServiceLinks"));  // Pods only.
}

TEST(PodDefaultsTest, PodGetsRequestsFromLimits) {
  Json pod = {{"spec", Json::parse(R"({"containers": [{"name": "a", "image": "x",
      "resources": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m"}}}]})")}};
  SetDefaultsPod(pod);
  EXPECT_EQ(pod["spec"]["enableServiceLinks"], true);
  EXPECT_EQ(pod["spec"]["containers"][0]["resources"]["requests"],
            Json::parse(R"({"cpu": "500m", "memory": "1Gi"})"));
}

TEST(PodValidationTest, Cases) {
  struct Case {
    std::string name;
    std::function<void(Json&)> mutate;
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {"valid", [](Json&) {}, {}},
      {"no containers", [](Json& s) { s["containers"] = Json::array(); },
       {"spec.containers: Required value"}},
      {"missing image", [](Json& s) { s["containers"][0].erase("image"); },
       {"spec.containers[0].image: Required value"}},
      {"missing name", [](Json& s) { s["containers"][0].erase("name"); },
       {"spec.containers[0].name: Required value"}},
      {"duplicate name across init", [](Json& s) {
         s["initContainers"] = s["containers"];
       }, {"spec.containers[0].name: Duplicate value: \"main\""}},
      {"bad restart policy", [](Json& s) { s["restartPolicy"] = "Sometimes"; },
       {"spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", "
        "\"OnFailure\", \"Never\""}},
      {"bad dns policy", [](Json& s) { s["dnsPolicy"] = "Google"; },
       {"spec.dnsPolicy: Unsupported value: \"Google\": supported values: \"ClusterFirst\", "
        "\"ClusterFirstWithHostNet\", \"Default\", \"None\""}},
      {"requests above limits", [](Json& s) {
         s["containers"][0]["resources"] = {{"limits", {{"cpu", "1"}}}, {"requests", {{"cpu", "2"}}}};
       }, {"spec.containers[0].resources.requests: Invalid value: \"2\": must be less than or "
           "equal to cpu limit of 1"}},
      {"negative quantity", [](Json& s) {
         s["containers"][0]["resources"] = {{"limits", {{"memory", "-1"}}}};
       }, {"spec.containers[0].resources.limits[memory]: Invalid value: \"-1\": must be greater "
           "than or equal to 0"}},
      {"gpu requests must equal limits", [](Json& s) {
         s["containers"][0]["resources"] = {{"limits", {{"nvidia.com/gpu", "2"}}},
                                            {"requests", {{"nvidia.com/gpu", "1"}}}};
       }, {"spec.containers[0].resources.requests: Invalid value: \"1\": must be equal to "
           "nvidia.com/gpu limit of 2"}},
      {"non-standard resource", [](Json& s) {
         s["containers"][0]["resources"] = {{"requests", {{"gpu", "1"}}}};
       }, {"spec.containers[0].resources.requests[gpu]: Invalid value: \"gpu\": must be a "
           "standard resource for containers"}},
      {"env name", [](Json& s) { s["containers"][0]["env"] = {{{"name", "A=B"}}}; },
       {"spec.containers[0].env[0].name: Invalid value: \"A=B\": a valid environment variable "
        "name must consist only of printable ASCII characters other than '='"}},
      {"port out of range", [](Json& s) {
         s["containers"][0]["ports"] = {{{"containerPort", 70000}, {"protocol", "TCP"}}};
       }, {"spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 "
           "and 65535, inclusive"}},
      {"active deadline zero", [](Json& s) { s["activeDeadlineSeconds"] = 0; },
       {"spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, "
        "inclusive"}},
      {"negative grace period", [](Json& s) { s["terminationGracePeriodSeconds"] = -1; },
       {"spec.terminationGracePeriodSeconds: Invalid value: -1: must be greater than or equal "
        "to 0"}},
      {"toleration exists with value", [](Json& s) {
         s["tolerations"] = {{{"key", "k"}, {"operator", "Exists"}, {"value", "v"}}};
       }, {"spec.tolerations[0].operator: Invalid value: {\"key\":\"k\",\"operator\":\"Exists\","
           "\"value\":\"v\"}: value must be empty when `operator` is 'Exists'"}},
      {"toleration bad operator", [](Json& s) {
         s["tolerations"] = {{{"key", "k"}, {"operator", "Maybe"}}};
       }, {"spec.tolerations[0].operator: Unsupported value: \"Maybe\": supported values: "
           "\"Equal\", \"Exists\""}},
      {"affinity operator", [](Json& s) {
         s["affinity"] = Json::parse(R"({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
             {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "Near"}]}]}}})");
       }, {"spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
           "nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: \"Near\": not a "
           "valid selector operator"}},
      {"duplicate scheduling gate", [](Json& s) {
         s["schedulingGates"] = {{{"name", "a"}}, {{"name", "a"}}};
       }, {"spec.schedulingGates[1]: Duplicate value: \"a\""}},
      {"mount of unknown volume", [](Json& s) {
         s["containers"][0]["volumeMounts"] = {{{"name", "data"}, {"mountPath", "/d"}}};
       }, {"spec.containers[0].volumeMounts[0].name: Not found: \"data\""}},
      {"sidecar probes allowed, plain init probes not", [](Json& s) {
         s["initContainers"] = {{{"name", "init"}, {"image", "x"}, {"imagePullPolicy", "Always"},
                                 {"terminationMessagePolicy", "File"},
                                 {"readinessProbe", {{"exec", {{"command", {"true"}}}}}}}};
       }, {"spec.initContainers[0].readinessProbe: Forbidden: may not be set for init "
           "containers without restartPolicy=Always"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Json spec = BaseSpec();
    c.mutate(spec);
    EXPECT_EQ(Messages(ValidatePodSpec(spec, Path("spec"))), c.want);
  }
}

// batchd provides emptyDir, hostPath and persistentVolumeClaim; every other
// volume type, and mount options it does not honour, are refused.
TEST(PodValidationTest, Volumes) {
  struct Case {
    std::string name;
    Json volume;
    Json mount;  // A volumeMounts entry of container 0 (null: none).
    std::vector<std::string> want;
  };
  const Json ok_mount = {{"name", "v"}, {"mountPath", "/data"}};
  const std::vector<Case> cases = {
      {"emptyDir", {{"name", "v"}, {"emptyDir", {{"medium", "Memory"}, {"sizeLimit", "1Gi"}}}},
       ok_mount, {}},
      {"hostPath", {{"name", "v"}, {"hostPath", {{"path", "/srv"}, {"type", "DirectoryOrCreate"}}}},
       ok_mount, {}},
      {"claim", {{"name", "v"}, {"persistentVolumeClaim", {{"claimName", "ckpt"}}}}, ok_mount, {}},
      {"configMap", {{"name", "v"}, {"configMap", {{"name", "c"}, {"defaultMode", 0440},
                                                   {"items", {{{"key", "k"}, {"path", "a/b"}, {"mode", 0400}}}}}}},
       ok_mount, {}},
      {"secret", {{"name", "v"}, {"secret", {{"secretName", "s"}, {"optional", true}}}}, ok_mount, {}},
      {"secret without a name", {{"name", "v"}, {"secret", {{"defaultMode", 01000}}}}, nullptr,
       {"spec.volumes[0].secret.secretName: Required value",
        "spec.volumes[0].secret.defaultMode: Invalid value: 512: must be a number between 0 and "
        "0777 (octal), both inclusive"}},
      {"configMap items", {{"name", "v"}, {"configMap", {{"name", "c"}, {"items", {{{"path", "/etc/x"}, {"mode", -1}},
                                                                                {{"key", "k"}, {"path", "a/../../x"}}}}}}},
       nullptr,
       {"spec.volumes[0].configMap.items[0].key: Required value",
        "spec.volumes[0].configMap.items[0].path: Invalid value: \"/etc/x\": must be a relative path",
        "spec.volumes[0].configMap.items[0].mode: Invalid value: -1: must be a number between 0 and "
        "0777 (octal), both inclusive",
        "spec.volumes[0].configMap.items[1].path: Invalid value: \"a/../../x\": must not contain '..'"}},
      {"unknown source kept by the schema", {{"name", "v"}, {"gcePersistentDisk", Json::object()}},
       nullptr,
       {"spec.volumes[0].gcePersistentDisk: Forbidden: gcePersistentDisk volumes are not "
        "supported by batchd (supported: emptyDir, hostPath, persistentVolumeClaim, secret, "
        "configMap)"}},
      {"two sources", {{"name", "v"}, {"emptyDir", Json::object()}, {"hostPath", {{"path", "/x"}}}},
       nullptr, {"spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type"}},
      {"huge pages", {{"name", "v"}, {"emptyDir", {{"medium", "HugePages"}}}}, nullptr,
       {"spec.volumes[0].emptyDir.medium: Forbidden: only \"\" (disk) and \"Memory\" are "
        "supported by batchd"}},
      {"relative hostPath", {{"name", "v"}, {"hostPath", {{"path", "srv"}}}}, nullptr,
       {"spec.volumes[0].hostPath.path: Invalid value: \"srv\": must be an absolute path"}},
      {"hostPath backsteps", {{"name", "v"}, {"hostPath", {{"path", "/a/../etc"}}}}, nullptr,
       {"spec.volumes[0].hostPath.path: Invalid value: \"/a/../etc\": must not contain '..'"}},
      {"hostPath type", {{"name", "v"}, {"hostPath", {{"path", "/a"}, {"type", "Dir"}}}}, nullptr,
       {"spec.volumes[0].hostPath.type: Unsupported value: \"Dir\": supported values: \"\", "
        "\"BlockDevice\", \"CharDevice\", \"Directory\", \"DirectoryOrCreate\", \"File\", "
        "\"FileOrCreate\", \"Socket\""}},
      {"claim name is a path", {{"name", "v"}, {"persistentVolumeClaim", {{"claimName", "../x"}}}},
       nullptr,
       {"spec.volumes[0].persistentVolumeClaim.claimName: Invalid value: \"../x\": a lowercase "
        "RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
        "must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
        "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"}},
      {"relative mountPath", {{"name", "v"}, {"emptyDir", Json::object()}},
       {{"name", "v"}, {"mountPath", "data"}},
       {"spec.containers[0].volumeMounts[0].mountPath: Invalid value: \"data\": must be an "
        "absolute path"}},
      {"subPath backsteps", {{"name", "v"}, {"emptyDir", Json::object()}},
       {{"name", "v"}, {"mountPath", "/d"}, {"subPath", "a/../../b"}},
       {"spec.containers[0].volumeMounts[0].subPath: Invalid value: \"a/../../b\": must not "
        "contain '..'"}},
      {"subPathExpr", {{"name", "v"}, {"emptyDir", Json::object()}},
       {{"name", "v"}, {"mountPath", "/d"}, {"subPathExpr", "$(POD)"}},
       {"spec.containers[0].volumeMounts[0].subPathExpr: Forbidden: subPathExpr is not "
        "supported by batchd; use subPath"}},
      {"propagation", {{"name", "v"}, {"emptyDir", Json::object()}},
       {{"name", "v"}, {"mountPath", "/d"}, {"mountPropagation", "Bidirectional"}},
       {"spec.containers[0].volumeMounts[0].mountPropagation: Forbidden: only None is supported "
        "by batchd (mounts are private to the container)"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Json spec = BaseSpec();
    spec["volumes"] = Json::array({c.volume});
    if (!c.mount.is_null()) spec["containers"][0]["volumeMounts"] = Json::array({c.mount});
    EXPECT_EQ(Messages(ValidatePodSpec(spec, Path("spec"))), c.want);
  }
}

TEST(PodValidationTest, TemplatePaths) {
  Json tmpl = {{"metadata", {{"labels", {{"bad key!", "v"}}}}}, {"spec", BaseSpec()}};
  tmpl["spec"]["containers"][0].erase("image");
  std::vector<std::string> msgs =
      Messages(ValidatePodTemplateSpec(tmpl, Path("spec").Child("template")));
  ASSERT_EQ(msgs.size(), 2u);
  EXPECT_EQ(msgs[0].rfind("spec.template.labels: Invalid value: \"bad key!\"", 0), 0u) << msgs[0];
  EXPECT_EQ(msgs[1], "spec.template.spec.containers[0].image: Required value");
}

TEST(PodValidationTest, UpdateRules) {
  struct Case {
    std::string name;
    std::function<void(Json&)> mutate;
    std::vector<std::string> want;
  };
  const std::string kForbidden =
      "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
      "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only "
      "additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be "
      "set to 1 if it was previously negative)";
  const std::vector<Case> cases = {
      {"image change", [](Json& s) { s["containers"][0]["image"] = "busybox:2"; }, {}},
      {"add toleration", [](Json& s) { s["tolerations"].push_back({{"key", "b"}, {"operator", "Exists"}}); }, {}},
      {"remove gate", [](Json& s) { s["schedulingGates"] = Json::array(); }, {}},
      {"lower deadline", [](Json& s) { s["activeDeadlineSeconds"] = 50; }, {}},
      {"raise deadline", [](Json& s) { s["activeDeadlineSeconds"] = 500; },
       {"spec.activeDeadlineSeconds: Invalid value: 500: must be less than or equal to previous "
        "value"}},
      {"add gate", [](Json& s) { s["schedulingGates"].push_back({{"name", "new"}}); },
       {"spec.schedulingGates: Forbidden: only deletion is allowed, but found new scheduling "
        "gate 'new'"}},
      {"change restart policy", [](Json& s) { s["restartPolicy"] = "OnFailure"; }, {kForbidden}},
      {"remove toleration", [&](Json& s) { s["tolerations"] = Json::array(); }, {kForbidden}},
  };
  Json old = BaseSpec();
  old["activeDeadlineSeconds"] = 100;
  old["tolerations"] = {{{"key", "a"}, {"operator", "Exists"}}};
  old["schedulingGates"] = {{{"name", "g"}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Json spec = old;
    c.mutate(spec);
    EXPECT_EQ(Messages(internal::ValidatePodSpecUpdate(spec, old, Path("spec"))), c.want);
  }
}

TEST(PodQosTest, Classes) {
  struct Case {
    std::string name;
    std::string resources;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"none", "{}", "BestEffort"},
      {"requests only", R"({"requests": {"cpu": "1"}})", "Burstable"},
      {"limits equal requests", R"({"limits": {"cpu": "1", "memory": "1Gi"}})", "Guaranteed"},
      {"limits above requests",
       R"({"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "1"}})", "Burstable"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Json spec = {{"containers", {{{"name", "a"}, {"resources", Json::parse(c.resources)}}}}};
    EXPECT_EQ(internal::PodQosClass(spec), c.want);
  }
}

}  // namespace
}  // namespace batchd::api::core_v1
