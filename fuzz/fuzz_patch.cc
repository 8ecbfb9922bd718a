// Fuzzes the three patch formats against a fixed, defaulted Job. The first
// input byte picks the format (merge, JSON patch, strategic); the rest is the
// patch as JSON. A successful result is normalised against the Job schema,
// as the registry does. Patches must never crash and must leave the
// original document untouched.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "api/codec/codec.h"
#include "api/kind.h"
#include "api/patch/patch.h"
#include "api/schema_ops/schema_ops.h"

namespace {

using batchd::api::Json;

const batchd::api::KindDef& JobKind() {
  static const auto scheme = batchd::api::BuiltinScheme();
  static const batchd::api::KindDef* job = scheme->ByKind("batch", "v1", "Job");
  if (job == nullptr) std::abort();
  return *job;
}

const Json& BaseJob() {
  static const Json job = [] {
    Json j = Json::parse(R"({
      "apiVersion": "batch/v1", "kind": "Job",
      "metadata": {"name": "pi", "namespace": "default", "labels": {"app": "pi"},
                   "annotations": {"a": "b"}, "finalizers": ["x/y"],
                   "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "o",
                                        "uid": "u1"}]},
      "spec": {"parallelism": 2, "completions": 4, "backoffLimit": 3,
               "completionMode": "Indexed",
               "podFailurePolicy": {"rules": [{"action": "FailJob",
                  "onExitCodes": {"operator": "In", "values": [1, 2]}}]},
               "template": {"metadata": {"labels": {"app": "pi"}},
                 "spec": {"restartPolicy": "Never",
                   "tolerations": [{"key": "k", "operator": "Exists"}],
                   "volumes": [{"name": "v", "emptyDir": {}}],
                   "containers": [
                     {"name": "a", "image": "perl:5", "command": ["perl", "-e", "1"],
                      "env": [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}],
                      "ports": [{"containerPort": 80, "protocol": "TCP"}],
                      "volumeMounts": [{"name": "v", "mountPath": "/v"}],
                      "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}},
                     {"name": "b", "image": "busybox"}]}}},
      "status": {"active": 1, "conditions": [{"type": "Suspended", "status": "False"}]}
    })");
    const auto& k = JobKind();
    (void)batchd::api::schema_ops::Normalize(*k.schema, j, nullptr);
    if (k.set_defaults) k.set_defaults(j);
    return j;
  }();
  return job;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const Json& base = BaseJob();
  const Json before = base;
  std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto patch = batchd::api::ParseJson(in);
  if (!patch.ok()) return 0;
  absl::StatusOr<Json> out = absl::UnknownError("unset");
  switch (data[0] % 3) {
    case 0:
      out = batchd::api::ApplyMergePatch(base, *patch);
      break;
    case 1:
      out = batchd::api::ApplyJsonPatch(base, *patch);
      break;
    default:
      if (!patch->is_object()) return 0;  // REQUIRES of the strategic patch.
      out = batchd::api::ApplyStrategicMergePatch(base, *patch, JobKind().schema.get());
      break;
  }
  if (base != before) {
    std::fprintf(stderr, "fuzz_patch: the original document was modified\n");
    std::abort();
  }
  if (out.ok()) {
    std::vector<std::string> unknown;
    (void)batchd::api::schema_ops::Normalize(*JobKind().schema, *out, &unknown);
    (void)batchd::api::ToJson(*out);
  }
  return 0;
}
