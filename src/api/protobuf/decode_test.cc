#include "api/protobuf/decode.h"

#include <fstream>
#include <sstream>

#include "api/codec/codec.h"
#include "api/protobuf/internal/test_encoder.h"
#include "gtest/gtest.h"

namespace batchd::api::protobuf {
namespace {

using testing::Encoder;
using testing::Envelope;

std::string ReadFile(const std::string& name) {
  std::ifstream in(std::string(BATCHD_PROTOBUF_TESTDATA) + "/" + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Json MustJson(std::string_view text) {
  auto j = ParseJson(text);
  EXPECT_TRUE(j.ok()) << j.status();
  return j.ok() ? *j : Json();
}

// Bodies captured from kubectl v1.32 (its typed client) next to what the same
// command prints with `--dry-run=client -o json`: the decoded body must be
// exactly that JSON.
TEST(DecodeKubernetesProtobuf, CapturedKubectlBodies) {
  const char* kFixtures[] = {"create_namespace", "create_job", "create_cronjob",
                             "create_job_from_cronjob", "create_service"};
  for (const char* name : kFixtures) {
    SCOPED_TRACE(name);
    std::string body = ReadFile(std::string(name) + ".pb");
    ASSERT_FALSE(body.empty());
    Json want = MustJson(ReadFile(std::string(name) + ".json"));
    std::vector<std::string> unknown;
    auto got = DecodeKubernetesProtobuf(body, &unknown);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, want) << "got:  " << got->dump() << "\nwant: " << want.dump();
    EXPECT_TRUE(unknown.empty());
  }
}

// ObjectMeta as gogo-protobuf writes it for `metadata: {name, namespace}`:
// every non-pointer field present, most with zero values.
Encoder Meta(std::string_view name, std::string_view ns) {
  return Encoder()
      .Str(1, name)
      .Str(2, "")
      .Str(3, ns)
      .Str(4, "")
      .Str(5, "")
      .Str(6, "")
      .Int(7, 0)
      .Msg(8, Encoder());
}

Encoder Quantity(std::string_view s) { return Encoder().Str(1, s); }

TEST(DecodeKubernetesProtobuf, PodWithResourcesEnvTolerationsProbes) {
  Encoder env_from_field =
      Encoder().Str(1, "POD").Msg(3, Encoder().Msg(1, Encoder().Str(2, "metadata.name")));
  Encoder resources = Encoder()
                          .Msg(1, Encoder().Str(1, "cpu").Msg(2, Quantity("1000m")))
                          .Msg(2, Encoder().Str(1, "memory").Msg(2, Quantity("64Mi")))
                          .Msg(2, Encoder().Str(1, "cpu").Msg(2, Quantity("0.5")));
  Encoder probe =
      Encoder()
          .Msg(1, Encoder().Msg(
                      2, Encoder().Str(1, "/healthz").Msg(2, Encoder().Int(1, 1).Str(3, "http"))))
          .Int(2, 0)
          .Int(3, 1)
          .Int(4, 10)
          .Int(5, 1)
          .Int(6, 3);
  Encoder container = Encoder()
                          .Str(1, "main")
                          .Str(2, "busybox")
                          .Str(3, "sh")
                          .Str(3, "-c")
                          .Str(4, "echo hi")
                          .Msg(6, Encoder().Str(1, "").Int(2, 0).Int(3, 0).Str(4, "TCP"))
                          .Msg(7, Encoder().Str(1, "A").Str(2, ""))
                          .Msg(7, env_from_field)
                          .Msg(8, resources)
                          .Msg(10, probe)
                          .Varint(16, 0);
  Encoder spec = Encoder()
                     .Msg(2, container)
                     .Str(3, "Never")
                     .Entry(7, "disk", "ssd")
                     .Msg(22, Encoder().Str(1, "gpu").Str(2, "Exists").Str(4, "NoSchedule"))
                     .Msg(22, Encoder().Str(2, "Exists").Int(5, 0))
                     .Int(25, 0);
  Encoder meta = Meta("p", "ns").Entry(11, "app", "web").Entry(11, "empty", "");
  std::string body = Envelope("v1", "Pod", Encoder().Msg(1, meta).Msg(2, spec).Msg(3, Encoder()));
  auto got = DecodeKubernetesProtobuf(body);
  ASSERT_TRUE(got.ok()) << got.status();
  Json want = MustJson(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ns", "creationTimestamp": null,
                 "labels": {"app": "web", "empty": ""}},
    "spec": {
      "containers": [{
        "name": "main", "image": "busybox", "command": ["sh", "-c"], "args": ["echo hi"],
        "ports": [{"containerPort": 0, "protocol": "TCP"}],
        "env": [{"name": "A"}, {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
        "resources": {"limits": {"cpu": "1"}, "requests": {"memory": "64Mi", "cpu": "500m"}},
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"}, "timeoutSeconds": 1,
                          "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}
      }],
      "restartPolicy": "Never",
      "nodeSelector": {"disk": "ssd"},
      "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"},
                      {"operator": "Exists", "tolerationSeconds": 0}],
      "priority": 0
    },
    "status": {}
  })");
  EXPECT_EQ(*got, want) << got->dump();
}

// `kubectl create secret generic` / `create configmap` bodies: Secret data
// (map<string, bytes>) comes out base64, as encoding/json writes []byte.
TEST(DecodeKubernetesProtobuf, SecretAndConfigMap) {
  std::string body = Envelope("v1", "Secret",
                              Encoder().Msg(1, Meta("db", "ns")).Entry(2, "password", "s3cr3t")
                                  .Str(3, "Opaque").Varint(5, 1));
  auto got = DecodeKubernetesProtobuf(body);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, MustJson(R"({"apiVersion": "v1", "kind": "Secret",
    "metadata": {"name": "db", "namespace": "ns", "creationTimestamp": null},
    "data": {"password": "czNjcjN0"}, "type": "Opaque", "immutable": true})"))
      << got->dump();
  body = Envelope("v1", "ConfigMap", Encoder().Msg(1, Meta("cfg", "ns")).Entry(2, "mode", "fast"));
  got = DecodeKubernetesProtobuf(body);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, MustJson(R"({"apiVersion": "v1", "kind": "ConfigMap",
    "metadata": {"name": "cfg", "namespace": "ns", "creationTimestamp": null},
    "data": {"mode": "fast"}})"))
      << got->dump();
}

// Pointer fields (proto2 `optional` without gogoproto nullable=false) keep
// zero values; value fields with omitempty drop them; fields without
// omitempty keep them.
TEST(DecodeKubernetesProtobuf, PresenceAndOmitempty) {
  struct Case {
    std::string name;
    std::string kind;
    Encoder raw;
    std::string want_json;
  };
  std::vector<Case> cases = {
      {"job pointer zeros are kept", "Job",
       Encoder().Msg(2, Encoder().Int(1, 0).Varint(10, 0).Str(9, "").Varint(5, 0)),
       R"({"metadata": {"creationTimestamp": null}, "status": {},
           "spec": {"parallelism": 0, "suspend": false, "completionMode": "", "manualSelector": false,
                    "template": {"metadata": {"creationTimestamp": null}, "spec": {}}}})"},
      {"empty raw gets Go's non-pointer structs", "CronJob", Encoder(),
       R"({"metadata": {"creationTimestamp": null}, "status": {},
           "spec": {"schedule": "", "jobTemplate": {"metadata": {"creationTimestamp": null},
                    "spec": {"template": {"metadata": {"creationTimestamp": null}, "spec": {}}}}}})"},
      {"job status counters omit zero", "Job",
       Encoder().Msg(3, Encoder().Int(4, 0).Int(5, 2).Int(6, 0)),
       R"({"metadata": {"creationTimestamp": null}, "status": {"succeeded": 2},
           "spec": {"template": {"metadata": {"creationTimestamp": null}, "spec": {}}}})"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = DecodeKubernetesProtobuf(Envelope("batch/v1", c.kind, c.raw));
    ASSERT_TRUE(got.ok()) << got.status();
    Json want = MustJson(c.want_json);
    want["apiVersion"] = "batch/v1";
    want["kind"] = c.kind;
    EXPECT_EQ(*got, want) << got->dump();
  }
}

TEST(DecodeKubernetesProtobuf, TimesDurationsAndEmbeddedJson) {
  Encoder managed = Encoder()
                        .Str(1, "kubectl")
                        .Str(2, "Update")
                        .Str(3, "v1")
                        .Msg(4, Encoder().Int(1, 1714564800))
                        .Str(6, "FieldsV1")
                        .Msg(7, Encoder().Str(1, R"({"f:metadata":{"f:labels":{}}})"));
  Encoder meta = Meta("l", "kube-node-lease")
                     .Msg(9, Encoder().Int(1, 1714564800).Int(2, 999))
                     .Int(10, 30)
                     .Msg(17, managed);
  Encoder spec = Encoder()
                     .Str(1, "node-a")
                     .Int(2, 40)
                     .Msg(4, Encoder().Int(1, 1714564800).Int(2, 123456789))
                     .Int(5, 0);
  auto got = DecodeKubernetesProtobuf(
      Envelope("coordination.k8s.io/v1", "Lease", Encoder().Msg(1, meta).Msg(2, spec)));
  ASSERT_TRUE(got.ok()) << got.status();
  Json want = MustJson(R"({
    "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
    "metadata": {"name": "l", "namespace": "kube-node-lease", "creationTimestamp": null,
                 "deletionTimestamp": "2024-05-01T12:00:00Z", "deletionGracePeriodSeconds": 30,
                 "managedFields": [{"manager": "kubectl", "operation": "Update", "apiVersion": "v1",
                                    "time": "2024-05-01T12:00:00Z", "fieldsType": "FieldsV1",
                                    "fieldsV1": {"f:metadata": {"f:labels": {}}}}]},
    "spec": {"holderIdentity": "node-a", "leaseDurationSeconds": 40,
             "renewTime": "2024-05-01T12:00:00.123456Z", "leaseTransitions": 0}
  })");
  EXPECT_EQ(*got, want) << got->dump();
}

TEST(DecodeKubernetesProtobuf, DeleteOptionsAndEviction) {
  Encoder opts =
      Encoder().Int(1, 0).Msg(2, Encoder().Str(1, "uid-1")).Str(4, "Foreground").Str(5, "All");
  auto del = DecodeKubernetesProtobuf(Envelope("meta.k8s.io/v1", "DeleteOptions", opts));
  ASSERT_TRUE(del.ok()) << del.status();
  EXPECT_EQ(*del, MustJson(R"({"apiVersion": "meta.k8s.io/v1", "kind": "DeleteOptions",
      "gracePeriodSeconds": 0, "preconditions": {"uid": "uid-1"},
      "propagationPolicy": "Foreground", "dryRun": ["All"]})"));
  auto ev = DecodeKubernetesProtobuf(
      Envelope("policy/v1", "Eviction", Encoder().Msg(1, Meta("p", "ns")).Msg(2, opts)));
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_EQ((*ev)["deleteOptions"]["propagationPolicy"], "Foreground");
  EXPECT_EQ((*ev)["metadata"]["name"], "p");
}

TEST(DecodeKubernetesProtobuf, UnknownFieldsAreSkippedAndRecorded) {
  Encoder container = Encoder().Str(1, "c").Str(2, "img").Int(99, 7);
  Encoder raw = Encoder()
                    .Msg(1, Meta("p", "").Str(200, "x"))
                    .Msg(2, Encoder().Msg(2, container).Msg(2, container))
                    .Int(50, 1);
  std::vector<std::string> unknown;
  auto got = DecodeKubernetesProtobuf(Envelope("v1", "Pod", raw), &unknown);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)["spec"]["containers"][1]["image"], "img");
  EXPECT_EQ(unknown, (std::vector<std::string>{"metadata.#200", "spec.containers[0].#99",
                                               "spec.containers[1].#99", "#50"}));
}

TEST(DecodeKubernetesProtobuf, PackedRepeatedInts) {
  Encoder packed;
  packed.Str(3, std::string("\x01\x02\x2a", 3));  // values: [1, 2, 42], packed.
  Encoder rule = Encoder().Str(1, "FailJob").Msg(2, packed.Str(2, "In"));
  Encoder raw = Encoder().Msg(2, Encoder().Msg(11, Encoder().Msg(1, rule)));
  auto got = DecodeKubernetesProtobuf(Envelope("batch/v1", "Job", raw));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)["spec"]["podFailurePolicy"]["rules"][0]["onExitCodes"],
            MustJson(R"({"operator": "In", "values": [1, 2, 42]})"));
}

TEST(DecodeKubernetesProtobuf, Errors) {
  std::string deep = Encoder().str();
  for (int i = 0; i < 200; ++i) deep = Encoder().Msg(99, Encoder().Bytes(deep)).str();
  struct Case {
    std::string name;
    std::string body;
    absl::StatusCode want;
  };
  std::vector<Case> cases = {
      {"no magic", "{\"kind\":\"Pod\"}", absl::StatusCode::kInvalidArgument},
      {"empty", "", absl::StatusCode::kInvalidArgument},
      {"unknown kind", Envelope("apps/v1", "Deployment", Encoder()),
       absl::StatusCode::kUnimplemented},
      {"content encoding",
       std::string("k8s\0", 4) +
           Encoder().Msg(1, Encoder().Str(1, "v1").Str(2, "Pod")).Str(3, "gzip").str(),
       absl::StatusCode::kUnimplemented},
      {"truncated length", Envelope("v1", "Pod", Encoder().Bytes("\x0a\x05\x0a")),
       absl::StatusCode::kInvalidArgument},
      {"overlong varint",
       Envelope("v1", "Pod", Encoder().Bytes("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01")),
       absl::StatusCode::kInvalidArgument},
      {"wrong wire type", Envelope("v1", "Pod", Encoder().Int(1, 5)),
       absl::StatusCode::kInvalidArgument},
      {"group wire type", Envelope("v1", "Pod", Encoder().Bytes("\x0b")),
       absl::StatusCode::kInvalidArgument},
      {"bad quantity",
       Envelope("v1", "Pod",
                Encoder().Msg(2, Encoder().Msg(32, Encoder().Str(1, "cpu").Msg(2, Quantity("x"))))),
       absl::StatusCode::kInvalidArgument},
      {"bad intorstring type",
       Envelope("v1", "Pod",
                Encoder().Msg(
                    2, Encoder().Msg(
                           2, Encoder().Msg(
                                  10, Encoder().Msg(
                                          1, Encoder().Msg(
                                                 3, Encoder().Msg(1, Encoder().Int(1, 7)))))))),
       absl::StatusCode::kInvalidArgument},
      {"deeply nested unknown bytes are skipped, not recursed into",
       Envelope("v1", "Event", Encoder().Bytes(deep)), absl::StatusCode::kOk},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(DecodeKubernetesProtobuf(c.body).status().code(), c.want);
  }
}

// Every truncation and every single-byte change of a real body must decode
// or fail cleanly (the fuzz target explores further).
TEST(DecodeKubernetesProtobuf, MutationsNeverCrash) {
  std::string body = ReadFile("create_job_from_cronjob.pb");
  ASSERT_GT(body.size(), 100u);
  size_t ok = 0;
  for (size_t i = 0; i <= body.size(); ++i) {
    ok += DecodeKubernetesProtobuf(body.substr(0, i)).ok();
  }
  for (size_t i = 4; i < body.size(); ++i) {
    for (unsigned char b : {0x00, 0xff}) {
      std::string m = body;
      m[i] = static_cast<char>(b);
      ok += DecodeKubernetesProtobuf(m).ok();
    }
  }
  EXPECT_GT(ok, 0u);
}

TEST(IsProtobufContentType, MatchesMediaTypeOnly) {
  EXPECT_TRUE(IsProtobufContentType("application/vnd.kubernetes.protobuf"));
  EXPECT_TRUE(IsProtobufContentType("Application/VND.kubernetes.protobuf; charset=utf-8"));
  EXPECT_FALSE(IsProtobufContentType("application/json"));
  EXPECT_FALSE(IsProtobufContentType("application/vnd.kubernetes.protobuf2"));
}

}  // namespace
}  // namespace batchd::api::protobuf
