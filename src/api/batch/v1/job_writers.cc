#include "api/batch/v1/job_writers.h"

#include <algorithm>

#include "api/json_access.h"

namespace batchd::api::batch_v1 {

namespace {

constexpr char kNodeSelector[] = "nodeSelector";
constexpr char kTolerations[] = "tolerations";

// spec.template.spec, made an object (with the steps to it) when it is not.
Json& MutableTemplateSpec(Json& job) {
  return MutableObject(MutableObject(MutableObject(job, "spec"), "template"), "spec");
}

// spec.template.spec when every step is an object, else nullptr.
Json* FindTemplateSpec(Json& job) {
  Json* v = FindMutableMemberAt(job, {"spec", "template", "spec"});
  return v != nullptr && v->is_object() ? v : nullptr;
}

// Writes `value` at `spec[key]`, removing the field when `value` is empty.
bool ReplaceOrErase(Json& job, const char* key, const Json& value) {
  if (value.is_null() || value.empty()) {
    Json* spec = FindTemplateSpec(job);
    return spec != nullptr && spec->erase(key) > 0;
  }
  Json& spec = MutableTemplateSpec(job);
  if (auto it = spec.find(key); it != spec.end() && *it == value) return false;
  spec[key] = value;
  return true;
}

}  // namespace

void SetSuspend(Json& job, bool suspend) { MutableObject(job, "spec")["suspend"] = suspend; }

void SetParallelism(Json& job, int32_t parallelism) {
  MutableObject(job, "spec")["parallelism"] = parallelism;
}

void SetCompletions(Json& job, int32_t completions) {
  MutableObject(job, "spec")["completions"] = completions;
}

void MergeTemplateNodeSelector(Json& job, const Json& labels) {
  if (!labels.is_object() || labels.empty()) return;
  Json& selector = MutableObject(MutableTemplateSpec(job), kNodeSelector);
  selector.update(labels);
}

void MergeTemplateTolerations(Json& job, const Json& tolerations) {
  if (!tolerations.is_array() || tolerations.empty()) return;
  Json& into = MutableArray(MutableTemplateSpec(job), kTolerations);
  for (const Json& t : tolerations) {
    if (std::find(into.begin(), into.end(), t) == into.end()) into.push_back(t);
  }
}

bool ReplaceTemplateNodeSelector(Json& job, const Json& selector) {
  return ReplaceOrErase(job, kNodeSelector, selector);
}

bool ReplaceTemplateTolerations(Json& job, const Json& tolerations) {
  return ReplaceOrErase(job, kTolerations, tolerations);
}

}  // namespace batchd::api::batch_v1

namespace batchd::api::batch_v1 {
namespace {

Json& MutableTemplateMeta(Json& job) {
  return MutableObject(MutableObject(MutableObject(job, "spec"), "template"), "metadata");
}

void MergeTemplateMetaMap(Json& job, const char* key, const Json& entries) {
  if (!entries.is_object() || entries.empty()) return;
  MutableObject(MutableTemplateMeta(job), key).update(entries);
}

bool RemoveTemplateMetaKey(Json& job, const char* map, std::string_view key) {
  Json* m = FindMutableMemberAt(job, {"spec", "template", "metadata", map});
  if (m == nullptr || !m->is_object()) return false;
  if (m->erase(std::string(key)) == 0) return false;
  if (m->empty()) FindMutableMemberAt(job, {"spec", "template", "metadata"})->erase(map);
  return true;
}

constexpr char kSchedulingGates[] = "schedulingGates";

}  // namespace

void MergeTemplateLabels(Json& job, const Json& entries) {
  MergeTemplateMetaMap(job, "labels", entries);
}

void MergeTemplateAnnotations(Json& job, const Json& entries) {
  MergeTemplateMetaMap(job, "annotations", entries);
}

void AddTemplateSchedulingGate(Json& job, std::string_view name) {
  Json& gates = MutableArray(MutableTemplateSpec(job), kSchedulingGates);
  for (const Json& g : gates) {
    if (StringMember(g, "name") == name) return;
  }
  gates.push_back({{"name", std::string(name)}});
}

bool RemoveTemplateLabel(Json& job, std::string_view key) {
  return RemoveTemplateMetaKey(job, "labels", key);
}

bool RemoveTemplateAnnotation(Json& job, std::string_view key) {
  return RemoveTemplateMetaKey(job, "annotations", key);
}

bool RemoveTemplateSchedulingGate(Json& job, std::string_view name) {
  Json* spec = FindTemplateSpec(job);
  if (spec == nullptr) return false;
  Json* gates = FindMutableMemberAt(*spec, {kSchedulingGates});
  if (gates == nullptr || !gates->is_array()) return false;
  auto it = std::find_if(gates->begin(), gates->end(),
                         [&](const Json& g) { return StringMember(g, "name") == name; });
  if (it == gates->end()) return false;
  gates->erase(it);
  if (gates->empty()) spec->erase(kSchedulingGates);
  return true;
}

}  // namespace batchd::api::batch_v1
