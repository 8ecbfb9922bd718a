#include <gtest/gtest.h>

#include "api/core/v1/core_v1.h"
#include "api/core/v1/internal/pods.h"
#include "api/core/v1/internal/schemas.h"
#include "api/schema_ops/schema_ops.h"

namespace batchd::api::core_v1 {
namespace {

absl::Time Now() {
  absl::Time t;
  std::string err;
  EXPECT_TRUE(absl::ParseTime(absl::RFC3339_full, "2024-01-02T00:00:00Z", &t, &err));
  return t;
}

Scheme AllKinds() {
  Scheme s;
  RegisterKinds(s);
  coordination_v1::RegisterKinds(s);
  return s;
}

TEST(KindsTest, Registered) {
  Scheme s = AllKinds();
  struct Case {
    std::string group, kind, plural;
    bool namespaced;
    std::vector<std::string> short_names;
  };
  const std::vector<Case> cases = {
      {"", "Pod", "pods", true, {"po"}},
      {"", "Namespace", "namespaces", false, {"ns"}},
      {"", "Node", "nodes", false, {"no"}},
      {"", "Event", "events", true, {"ev"}},
      {"", "Service", "services", true, {"svc"}},
      {"coordination.k8s.io", "Lease", "leases", true, {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.kind);
    const KindDef* k = s.ByKind(c.group, "v1", c.kind);
    ASSERT_NE(k, nullptr);
    EXPECT_EQ(k->plural, c.plural);
    EXPECT_EQ(k->namespaced, c.namespaced);
    EXPECT_EQ(k->short_names, c.short_names);
    ASSERT_TRUE(k->schema);
    EXPECT_TRUE(k->row_cells);
    Json empty = Json::object();
    EXPECT_EQ(k->row_cells(empty, Now()).size(), k->columns.size());  // Never crashes on {}.
  }
}

TEST(KindsTest, NodeRows) {
  const KindDef node = internal::NodeKind();
  struct Case {
    std::string name;
    std::string node;
    std::vector<Json> want;
  };
  const std::vector<Case> cases = {
      {"ready worker",
       R"({"metadata": {"creationTimestamp": "2024-01-01T00:00:00Z",
           "labels": {"node-role.kubernetes.io/worker": "", "node-role.kubernetes.io/gpu": ""}},
           "status": {"conditions": [{"type": "Ready", "status": "True"}],
             "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
             "nodeInfo": {"kubeletVersion": "v1.32.0", "osImage": "Debian"}}})",
       {"Ready", "gpu,worker", "24h", "v1.32.0", "10.0.0.1", "<none>", "Debian", "<unknown>",
        "<unknown>"}},
      {"not ready cordoned",
       R"({"spec": {"unschedulable": true},
           "status": {"conditions": [{"type": "Ready", "status": "Unknown"}]}})",
       {"NotReady,SchedulingDisabled", "<none>", "<unknown>", "", "<none>", "<none>",
        "<unknown>", "<unknown>", "<unknown>"}},
      {"no conditions", R"({})",
       {"Unknown", "<none>", "<unknown>", "", "<none>", "<none>", "<unknown>", "<unknown>",
        "<unknown>"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(node.row_cells(Json::parse(c.node), Now()), c.want);
  }
  EXPECT_EQ(node.field_value(Json::parse(R"({"spec": {"unschedulable": true}})"),
                             "spec.unschedulable"), "true");
}

TEST(KindsTest, NodePodCidrAndProviderIdAreSetOnce) {
  const KindDef node = internal::NodeKind();
  auto errors = [&](const char* now, const char* old) {
    std::vector<std::string> out;
    for (const auto& e : node.validate_update(Json::parse(now), Json::parse(old))) {
      out.push_back(e.field + ": " + e.detail);
    }
    return out;
  };
  const std::string cidr = "spec.podCIDRs: node updates may not change podCIDR except from \"\" to valid";
  const std::string provider =
      "spec.providerID: node updates may not change providerID except from \"\" to valid";
  const char* meta = R"("metadata": {"name": "n1"})";
  auto obj = [&](const std::string& spec) { return "{" + std::string(meta) + ", \"spec\": " + spec + "}"; };
  // From "" to a value: allowed.
  EXPECT_TRUE(errors(obj(R"({"podCIDR": "10.1.0.0/24", "podCIDRs": ["10.1.0.0/24"], "providerID": "p1"})").c_str(),
                     obj("{}").c_str()).empty());
  EXPECT_EQ(errors(obj(R"({"podCIDRs": ["10.2.0.0/24"]})").c_str(),
                   obj(R"({"podCIDRs": ["10.1.0.0/24"]})").c_str()),
            std::vector<std::string>{cidr});
  EXPECT_EQ(errors(obj(R"({"podCIDR": "10.2.0.0/24"})").c_str(),
                   obj(R"({"podCIDR": "10.1.0.0/24"})").c_str()),
            std::vector<std::string>{cidr});
  EXPECT_EQ(errors(obj("{}").c_str(), obj(R"({"podCIDRs": ["10.1.0.0/24"]})").c_str()),
            std::vector<std::string>{cidr});
  EXPECT_EQ(errors(obj(R"({"providerID": "p2"})").c_str(), obj(R"({"providerID": "p1"})").c_str()),
            std::vector<std::string>{provider});
  EXPECT_TRUE(errors(obj(R"({"providerID": "p1", "podCIDRs": ["10.1.0.0/24"]})").c_str(),
                     obj(R"({"providerID": "p1", "podCIDRs": ["10.1.0.0/24"]})").c_str()).empty());
}

TEST(KindsTest, EventRows) {
  const KindDef ev = internal::EventKind();
  EXPECT_TRUE(ev.columns_include_name);
  Json e = Json::parse(R"({"metadata": {"name": "x.1", "namespace": "default"},
      "involvedObject": {"kind": "Job", "name": "pi", "namespace": "default"},
      "reason": "SuccessfulCreate", "message": " Created pod: pi-abc \n", "type": "Normal",
      "source": {"component": "job-controller"},
      "firstTimestamp": "2024-01-01T23:50:00Z", "lastTimestamp": "2024-01-01T23:58:00Z",
      "count": 3})");
  std::vector<Json> want = {"2m", "Normal", "SuccessfulCreate", "job/pi", "", "job-controller",
                            "Created pod: pi-abc", "10m", 3, "x.1"};
  EXPECT_EQ(ev.row_cells(e, Now()), want);
  EXPECT_EQ(ev.columns.size(), want.size());
  EXPECT_EQ(ev.field_value(e, "involvedObject.kind"), "Job");
  EXPECT_EQ(ev.field_value(e, "source"), "job-controller");
  EXPECT_TRUE(ev.validate_create(e).empty());
  e["involvedObject"]["namespace"] = "other";
  ASSERT_EQ(ev.validate_create(e).size(), 1u);
  EXPECT_EQ(ev.validate_create(e)[0].Message(),
            "involvedObject.namespace: Invalid value: \"other\": does not match event.namespace");
}

TEST(KindsTest, NamespaceAndPodPrepare) {
  const KindDef ns = internal::NamespaceKind();
  Json obj = {{"metadata", {{"name", "team-a"}}}};
  ns.prepare_for_create(obj);
  EXPECT_EQ(obj["status"]["phase"], "Active");
  EXPECT_EQ(obj["spec"]["finalizers"], Json::array({"kubernetes"}));
  EXPECT_TRUE(ns.validate_create(obj).empty());
  obj["metadata"]["name"] = "Team.A";
  EXPECT_FALSE(ns.validate_create(obj).empty());

  const KindDef pod = internal::PodKind();
  Json p = Json::parse(R"({"metadata": {"name": "p", "namespace": "default"},
      "spec": {"containers": [{"name": "c", "image": "busybox",
        "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]},
      "status": {"phase": "Running"}})");
  pod.set_defaults(p);
  pod.prepare_for_create(p);
  EXPECT_EQ(p["status"], Json::parse(R"({"phase": "Pending", "qosClass": "Guaranteed"})"));
  EXPECT_TRUE(pod.validate_create(p).empty()) << JoinMessages(pod.validate_create(p));
  p["status"]["podIPs"] = {{{"ip", "10.1.1.1"}}};
  EXPECT_EQ(pod.field_value(p, "status.podIP"), "10.1.1.1");
  EXPECT_EQ(pod.field_value(p, "spec.restartPolicy"), "Always");

  // Created behind scheduling gates: PodScheduled=False/SchedulingGated, as kube-apiserver sets it.
  Json gated = p;
  gated["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z";
  gated["spec"]["schedulingGates"] = {{{"name", "kueue.x-k8s.io/admission"}}};
  pod.prepare_for_create(gated);
  EXPECT_EQ(gated["status"]["conditions"], Json::parse(R"([{"type": "PodScheduled",
      "status": "False", "reason": "SchedulingGated",
      "message": "Scheduling is blocked due to non-empty scheduling gates",
      "lastTransitionTime": "2026-01-01T00:00:00Z"}])"));
}

TEST(KindsTest, LeaseRow) {
  Scheme s = AllKinds();
  const KindDef* lease = s.ByKind("coordination.k8s.io", "v1", "Lease");
  ASSERT_NE(lease, nullptr);
  Json l = Json::parse(R"({"metadata": {"name": "node-a", "namespace": "kube-node-lease",
      "creationTimestamp": "2024-01-01T23:59:00Z"},
      "spec": {"holderIdentity": "node-a", "leaseDurationSeconds": 0}})");
  EXPECT_EQ(lease->row_cells(l, Now()), (std::vector<Json>{"node-a", "60s"}));
  ASSERT_EQ(lease->validate_create(l).size(), 1u);
  EXPECT_EQ(lease->validate_create(l)[0].Message(),
            "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0");
}

}  // namespace
}  // namespace batchd::api::core_v1

namespace batchd::api::core_v1 {
namespace {

// A manifest using most commonly written pod fields decodes strictly.
TEST(KindsTest, RealisticPodHasNoUnknownFields) {
  Json pod = Json::parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "trainer", "namespace": "ml", "labels": {"app": "t"},
      "annotations": {"a": "b"}, "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job",
      "name": "j", "uid": "u", "controller": true, "blockOwnerDeletion": true}],
      "finalizers": ["batch.kubernetes.io/job-tracking"]},
    "spec": {
      "restartPolicy": "OnFailure", "serviceAccountName": "default", "priorityClassName": "high",
      "nodeSelector": {"gpu": "a100"}, "terminationGracePeriodSeconds": 10,
      "securityContext": {"runAsUser": 1000, "fsGroup": 2000,
        "seccompProfile": {"type": "RuntimeDefault"}},
      "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
      "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In",
        "values": ["a"]}]}]}}, "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution":
        [{"weight": 10, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
        "labelSelector": {"matchLabels": {"app": "t"}}}}]}},
      "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
        "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": {"app": "t"}}}],
      "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "pvc"}},
        {"name": "cfg", "configMap": {"name": "c", "items": [{"key": "k", "path": "p"}]}},
        {"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}}],
      "initContainers": [{"name": "init", "image": "busybox", "command": ["sh", "-c", "true"]}],
      "containers": [{"name": "main", "image": "pytorch:2", "args": ["--epochs", "3"],
        "workingDir": "/w", "imagePullPolicy": "IfNotPresent",
        "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
        "env": [{"name": "A", "value": "1"}, {"name": "POD", "valueFrom": {"fieldRef":
          {"fieldPath": "metadata.name"}}}, {"name": "CPU", "valueFrom": {"resourceFieldRef":
          {"resource": "limits.cpu", "divisor": "1m"}}}],
        "envFrom": [{"configMapRef": {"name": "c"}}],
        "resources": {"limits": {"cpu": 2, "memory": "4Gi", "nvidia.com/gpu": 1},
          "requests": {"cpu": "1500m", "memory": "4Gi"}},
        "volumeMounts": [{"name": "data", "mountPath": "/data", "readOnly": true}],
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": "http"},
          "initialDelaySeconds": 5},
        "lifecycle": {"preStop": {"exec": {"command": ["sleep", "1"]}}},
        "securityContext": {"allowPrivilegeEscalation": false,
          "capabilities": {"drop": ["ALL"]}},
        "terminationMessagePolicy": "FallbackToLogsOnError"}]
    }})");
  std::vector<std::string> unknown;
  absl::Status st = schema_ops::Normalize(*internal::PodSchema(), pod, &unknown);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_TRUE(unknown.empty()) << unknown.front();
  EXPECT_EQ(pod["spec"]["containers"][0]["resources"]["limits"]["cpu"], "2");
  const KindDef k = internal::PodKind();
  k.set_defaults(pod);
  // Every field is known to the schema, and every volume type used is one
  // batchd provides.
  EXPECT_TRUE(k.validate_create(pod).empty()) << JoinMessages(k.validate_create(pod));
}

}  // namespace
}  // namespace batchd::api::core_v1
