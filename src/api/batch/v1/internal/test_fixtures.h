// Test-only fixtures for api/batch/v1 tests: minimal valid Jobs and
// CronJobs, and error-list rendering. Header-only; not a public API.
#pragma once

#include <string>
#include <vector>

#include "api/batch/v1/batch_v1.h"
#include "api/field_error.h"

namespace batchd::api::batch_v1::testing {

inline Json RawJob() {
  return Json::parse(R"({
    "apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "pi", "namespace": "default", "uid": "uid-1"},
    "spec": {"template": {"spec": {"restartPolicy": "Never",
             "containers": [{"name": "pi", "image": "perl:5.34"}]}}}})");
}

// Prepared and defaulted in the registry's order before validate_create.
inline Json Created(Json job) {
  PrepareJobForCreate(job);
  SetDefaultsJob(job);
  return job;
}

inline Json RawCronJob() {
  return Json::parse(R"({
    "apiVersion": "batch/v1", "kind": "CronJob",
    "metadata": {"name": "hello", "namespace": "default", "uid": "uid-2"},
    "spec": {"schedule": "*/5 * * * *",
             "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "OnFailure",
               "containers": [{"name": "hello", "image": "busybox"}]}}}}}})");
}

// Messages of `errs`, leaving out pod-spec errors owned by core/v1's
// validation (anything under `*.template.spec.` except restartPolicy).
inline std::vector<std::string> Messages(const ErrorList& errs) {
  std::vector<std::string> out;
  for (const FieldError& e : errs) {
    const bool pod_spec = e.field.find("template.spec.") != std::string::npos &&
                          e.field.find("template.spec.restartPolicy") == std::string::npos;
    if (!pod_spec) out.push_back(e.Message());
  }
  return out;
}

}  // namespace batchd::api::batch_v1::testing
