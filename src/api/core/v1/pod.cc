// The Pod kind: KindDef, prepare-for-create (status Pending + QoS class),
// update validation and field selectors.
#include "api/core/v1/core_v1.h"
#include "api/core/v1/internal/pods.h"
#include "api/core/v1/pod_security.h"
#include "api/core/v1/internal/schemas.h"
#include "api/json_access.h"
#include "api/validation/object_meta.h"

namespace batchd::api::core_v1::internal {
namespace {

// A copy of `j` with null members removed at every depth, for comparisons.
Json Pruned(const Json& j) {
  if (j.is_object()) {
    Json out = Json::object();
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (!it->is_null()) out[it.key()] = Pruned(*it);
    }
    return out;
  }
  if (j.is_array()) {
    Json out = Json::array();
    for (const Json& e : j) out.push_back(Pruned(e));
    return out;
  }
  return j;
}

// Copies each container's image from `from` into `to` when the lists line up.
void CopyImages(Json& to, const Json& from, const char* list) {
  const Json& src = MemberArray(from, list);
  auto it = to.find(list);
  if (it == to.end() || !it->is_array() || it->size() != src.size()) return;
  for (size_t i = 0; i < src.size(); ++i) {
    if (!(*it)[i].is_object()) continue;
    if (const Json* img = FindMember(src[i], "image")) {
      (*it)[i]["image"] = *img;
    } else {
      (*it)[i].erase("image");
    }
  }
}

bool Contains(const Json& list, const Json& item) {
  for (const Json& e : list) {
    if (Pruned(e) == Pruned(item)) return true;
  }
  return false;
}

void SetOrErase(Json& obj, const char* key, const Json* value) {
  if (value) {
    obj[key] = *value;
  } else {
    obj.erase(key);
  }
}

}  // namespace

ErrorList ValidatePodSpecUpdate(const Json& new_spec, const Json& old_spec, const Path& path) {
  ErrorList errs;
  const Json* new_ads = FindMember(new_spec, "activeDeadlineSeconds");
  const Json* old_ads = FindMember(old_spec, "activeDeadlineSeconds");
  if (new_ads && new_ads->is_number_integer()) {
    int64_t v = new_ads->get<int64_t>();
    if (v < 0 || v > 2147483647) {
      errs.push_back(Invalid(path.Child("activeDeadlineSeconds"), v,
                             "must be between 0 and 2147483647, inclusive"));
    }
    if (old_ads && old_ads->is_number_integer() && v > old_ads->get<int64_t>()) {
      errs.push_back(Invalid(path.Child("activeDeadlineSeconds"), v,
                             "must be less than or equal to previous value"));
    }
  } else if (old_ads) {
    errs.push_back(Invalid(path.Child("activeDeadlineSeconds"), nullptr,
                           "must not update from a positive integer to nil value"));
  }
  // Scheduling gates may only be removed.
  const Json& old_gates = MemberArray(old_spec, "schedulingGates");
  for (const Json& g : MemberArray(new_spec, "schedulingGates")) {
    if (!Contains(old_gates, g)) {
      errs.push_back(Forbidden(path.Child("schedulingGates"),
                               "only deletion is allowed, but found new scheduling gate '" +
                                   std::string(StringMember(g, "name")) + "'"));
    }
  }
  // The scheduling group a pod belongs to is fixed at creation.
  for (const char* f : {"schedulingGroup", "workloadRef"}) {
    const Json* now = FindMember(new_spec, f);
    const Json* was = FindMember(old_spec, f);
    if ((now ? *now : Json()) != (was ? *was : Json())) {
      errs.push_back(Invalid(path.Child(f), now ? *now : Json(), "field is immutable"));
    }
  }
  Json munged = new_spec.is_object() ? new_spec : Json::object();
  CopyImages(munged, old_spec, "containers");
  CopyImages(munged, old_spec, "initContainers");
  SetOrErase(munged, "activeDeadlineSeconds", old_ads);
  SetOrErase(munged, "schedulingGates", FindMember(old_spec, "schedulingGates"));
  SetOrErase(munged, "schedulingGroup", FindMember(old_spec, "schedulingGroup"));
  SetOrErase(munged, "workloadRef", FindMember(old_spec, "workloadRef"));
  // Tolerations: additions only (every old toleration must still be there).
  bool only_additions = true;
  for (const Json& t : MemberArray(old_spec, "tolerations")) {
    if (!Contains(MemberArray(new_spec, "tolerations"), t)) only_additions = false;
  }
  if (only_additions) SetOrErase(munged, "tolerations", FindMember(old_spec, "tolerations"));
  // A pod still held by scheduling gates may gain nodeSelector entries
  // (Kubernetes' mutable scheduling directives): topology-aware admission
  // places its pods this way while ungating them.
  if (!old_gates.empty()) {
    const Json& old_selector = MemberObject(old_spec, "nodeSelector");
    const Json& new_selector = MemberObject(new_spec, "nodeSelector");
    bool additions = true;
    for (auto it = old_selector.begin(); it != old_selector.end(); ++it) {
      const Json* v = FindMember(new_selector, it.key());
      if (v == nullptr || *v != *it) additions = false;
    }
    if (additions) SetOrErase(munged, "nodeSelector", FindMember(old_spec, "nodeSelector"));
  }
  if (Pruned(munged) != Pruned(old_spec.is_object() ? old_spec : Json::object())) {
    errs.push_back(Forbidden(
        path, "pod updates may not change fields other than `spec.containers[*].image`,"
              "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` "
              "(only additions to existing tolerations),`spec.terminationGracePeriodSeconds` "
              "(allow it to be set to 1 if it was previously negative)"));
  }
  return errs;
}

std::string FieldString(const Json& obj, const std::string& dotted) {
  const Json* cur = &obj;
  size_t start = 0;
  while (cur != nullptr && start <= dotted.size()) {
    size_t dot = dotted.find('.', start);
    std::string key = dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    cur = FindMember(*cur, key);
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (cur == nullptr) return "";
  if (cur->is_string()) return cur->get<std::string>();
  if (cur->is_boolean()) return cur->get<bool>() ? "true" : "false";
  if (cur->is_number()) return cur->dump();
  return "";
}

KindDef PodKind() {
  KindDef k;
  k.group = "";
  k.version = "v1";
  k.kind = "Pod";
  k.plural = "pods";
  k.singular = "pod";
  k.namespaced = true;
  k.short_names = {"po"};
  k.categories = {"all"};
  k.subresources = {"status", "log", "binding", "eviction"};
  k.schema = PodSchema();
  // securityContext fields batchd accepts without applying them (pod_security.h).
  k.warnings = [](const Json& pod) { return UnappliedSecurityFields(pod); };
  k.has_status_subresource = true;
  k.set_defaults = [](Json& obj) { SetDefaultsPod(obj); };
  k.prepare_for_create = [](Json& obj) {
    if (!obj.is_object()) return;
    obj["status"] = {{"phase", "Pending"}, {"qosClass", PodQosClass(MemberObject(obj, "spec"))}};
    // As kube-apiserver does: a pod created behind scheduling gates says so
    // (kubectl shows it as SchedulingGated) until the scheduler has its say.
    if (!MemberArray(MemberObject(obj, "spec"), "schedulingGates").empty()) {
      obj["status"]["conditions"] = Json::array(
          {{{"type", "PodScheduled"},
            {"status", "False"},
            {"reason", "SchedulingGated"},
            {"message", "Scheduling is blocked due to non-empty scheduling gates"},
            {"lastTransitionTime", MemberAt(obj, {"metadata", "creationTimestamp"})}}});
    }
  };
  k.validate_create = [](const Json& obj) {
    ErrorList errs = validation::ValidateObjectMeta(MemberObject(obj, "metadata"), true,
                                                    validation::NameIsDNSSubdomain,
                                                    Path("metadata"));
    ErrorList spec = ValidatePodSpec(MemberObject(obj, "spec"), Path("spec"));
    errs.insert(errs.end(), spec.begin(), spec.end());
    return errs;
  };
  k.validate_update = [](const Json& obj, const Json& old) {
    ErrorList errs = validation::ValidateObjectMetaUpdate(
        MemberObject(obj, "metadata"), MemberObject(old, "metadata"), Path("metadata"));
    ErrorList spec = ValidatePodSpecUpdate(MemberObject(obj, "spec"), MemberObject(old, "spec"),
                                           Path("spec"));
    errs.insert(errs.end(), spec.begin(), spec.end());
    return errs;
  };
  k.validate_status_update = [](const Json& obj, const Json& old) {
    return validation::ValidateObjectMetaUpdate(MemberObject(obj, "metadata"),
                                                MemberObject(old, "metadata"), Path("metadata"));
  };
  k.columns = PodColumns();
  k.row_cells = PodRowCells;
  k.selectable_fields = {"spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
                         "spec.serviceAccountName", "status.phase", "status.podIP",
                         "status.nominatedNodeName"};
  k.field_value = [](const Json& obj, const std::string& field) {
    if (field == "status.podIP") {
      const Json& ips = MemberArray(MemberObject(obj, "status"), "podIPs");
      if (!ips.empty()) return std::string(StringMember(ips[0], "ip"));
    }
    return FieldString(obj, field);
  };
  return k;
}

}  // namespace batchd::api::core_v1::internal
