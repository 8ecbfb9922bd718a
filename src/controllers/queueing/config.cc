#include "controllers/queueing/config.h"

#include <algorithm>
#include <limits>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/codec/codec.h"
#include "api/field_error.h"
#include "api/json_access.h"
#include "common/status_macros.h"

namespace batchd::controllers::queueing {
namespace {

using api::Json;
using api::Path;

constexpr char kGroupPrefix[] = "config.kueue.x-k8s.io/";

absl::Status Error(const api::FieldError& e) {
  return absl::InvalidArgumentError(absl::StrCat("invalid queueing configuration: ", e.Message()));
}

// Fields of Kueue's Configuration that batchd accepts but does not act on.
const std::set<std::string>& IgnoredTopLevel() {
  static const auto* s = new std::set<std::string>{
      "namespace",         "webhook",           "leaderElection",
      "metrics",           "health",            "pprofBindAddress",
      "controller",        "tls",
      "internalCertManagement", "clientConnection",
      "resources",
      "queueVisibility"};
  return *s;
}

absl::Status CheckKeys(const Json& obj, const Path& path, const std::set<std::string>& known) {
  for (const auto& [k, v] : obj.items()) {
    if (!known.count(k)) {
      return Error(api::Invalid(path.Child(k), Json(k), "unknown field"));
    }
  }
  return absl::OkStatus();
}

// The readers below take a field's key and the path of the object holding
// it (each name is spelt once), read it in place through api/json_access.h,
// and treat an absent or null field as unset.

absl::StatusOr<const Json*> Object(const Json& parent, std::string_view key,
                                   const Path& parent_path) {
  const Json* v = api::FindMember(parent, key);
  if (v == nullptr) return nullptr;
  if (!v->is_object()) return Error(api::Invalid(parent_path.Child(key), *v, "must be an object"));
  return v;
}

absl::StatusOr<std::optional<bool>> Bool(const Json& obj, std::string_view key,
                                         const Path& parent_path) {
  const Json* v = api::FindMember(obj, key);
  if (v == nullptr) return std::optional<bool>();
  if (!v->is_boolean()) return Error(api::Invalid(parent_path.Child(key), *v, "must be a boolean"));
  return std::optional<bool>(v->get<bool>());
}

absl::StatusOr<std::optional<int32_t>> Int32(const Json& obj, std::string_view key,
                                             const Path& parent_path) {
  const Json* found = api::FindMember(obj, key);
  if (found == nullptr) return std::optional<int32_t>();
  const Json& v = *found;
  const Path path = parent_path.Child(key);
  if (!v.is_number_integer()) return Error(api::Invalid(path, v, "must be an integer"));
  int64_t i = v.get<int64_t>();
  if (i < 0) return Error(api::Invalid(path, v, "must be greater than or equal to 0"));
  if (i > std::numeric_limits<int32_t>::max()) {
    return Error(api::Invalid(path, v, "must fit a 32-bit integer"));
  }
  return std::optional<int32_t>(static_cast<int32_t>(i));
}

// A metav1.Duration: a Go duration string ("5m", "1h30m", "90s").
absl::StatusOr<std::optional<absl::Duration>> Duration(const Json& obj, std::string_view key,
                                                       const Path& parent_path) {
  const Json* found = api::FindMember(obj, key);
  if (found == nullptr) return std::optional<absl::Duration>();
  const Json& v = *found;
  const Path path = parent_path.Child(key);
  absl::Duration d;
  if (!v.is_string() || !absl::ParseDuration(v.get<std::string>(), &d) ||
      d == absl::InfiniteDuration() || d == -absl::InfiniteDuration()) {
    return Error(api::Invalid(path, v, "must be a duration such as \"5m\" or \"1h30m\""));
  }
  if (d < absl::ZeroDuration()) {
    return Error(api::Invalid(path, v, "must be greater than or equal to 0"));
  }
  return std::optional<absl::Duration>(d);
}

// multiKueue: gcInterval, origin, workerLostTimeout and dispatcherName
// (AllAtOnce or Incremental) are honoured; an external dispatcher,
// externalFrameworks and clusterProfile (not implemented) are refused.
absl::Status ParseMultiKueue(const Json* mk, MultiKueueSettings* out) {
  if (mk == nullptr) return absl::OkStatus();
  const Path path = Path("multiKueue");
  BATCHD_RETURN_IF_ERROR(CheckKeys(*mk, path,
                                   {"gcInterval", "origin", "workerLostTimeout", "dispatcherName",
                                    "externalFrameworks", "clusterProfile"}));
  BATCHD_ASSIGN_OR_RETURN(auto gc, Duration(*mk, "gcInterval", path));
  if (gc) out->gc_interval = *gc;
  BATCHD_ASSIGN_OR_RETURN(auto lost, Duration(*mk, "workerLostTimeout", path));
  if (lost) out->worker_lost_timeout = *lost;
  if (const Json* o = api::FindMember(*mk, "origin"); o != nullptr && !o->is_null()) {
    const std::string_view v = api::AsString(*o);
    if (!o->is_string() || v.empty() || v.size() > 63) {
      return Error(api::Invalid(path.Child("origin"), *o,
                                "must be a label value of 1 to 63 characters"));
    }
    out->origin = std::string(v);
  }
  if (const Json* d = api::FindMember(*mk, "dispatcherName"); d != nullptr && !d->is_null()) {
    const std::string_view v = api::AsString(*d);
    if (!d->is_string() || (v != "kueue.x-k8s.io/multikueue-dispatcher-all-at-once" &&
                            v != "kueue.x-k8s.io/multikueue-dispatcher-incremental")) {
      // Another name is an external dispatcher, which batchd does not run.
      return Error(api::NotSupported(path.Child("dispatcherName"), *d,
                                     {"kueue.x-k8s.io/multikueue-dispatcher-all-at-once",
                                      "kueue.x-k8s.io/multikueue-dispatcher-incremental"}));
    }
    out->dispatcher_name = std::string(v);
  }
  for (const char* f : {"externalFrameworks", "clusterProfile"}) {
    if (const Json* v = api::FindMember(*mk, f);
        v != nullptr && !v->is_null() && !(v->is_array() && v->empty())) {
      return Error(api::Invalid(path.Child(f), *v, "not supported by batchd"));
    }
  }
  return absl::OkStatus();
}

absl::Status ParseRequeuing(const Json& rs, const Path& path, RequeuingStrategy* out) {
  BATCHD_RETURN_IF_ERROR(CheckKeys(
      rs, path,
      {"timestamp", "backoffLimitCount", "backoffBaseSeconds", "backoffMaxSeconds"}));
  if (const Json* found = api::FindMember(rs, "timestamp")) {
    const Json& t = *found;
    const std::string_view s = api::AsString(t);
    if (s == "Eviction") {
      out->timestamp = RequeuingTimestamp::kEviction;
    } else if (s == "Creation") {
      out->timestamp = RequeuingTimestamp::kCreation;
    } else {
      return Error(api::NotSupported(path.Child("timestamp"), t, {"Creation", "Eviction"}));
    }
  }
  BATCHD_ASSIGN_OR_RETURN(auto limit, Int32(rs, "backoffLimitCount", path));
  BATCHD_ASSIGN_OR_RETURN(auto base, Int32(rs, "backoffBaseSeconds", path));
  BATCHD_ASSIGN_OR_RETURN(auto max, Int32(rs, "backoffMaxSeconds", path));
  out->backoff_limit_count = limit;
  // Kueue defaults zero as well as absence (cmp.Or).
  if (base && *base > 0) out->backoff_base_seconds = *base;
  if (max && *max > 0) out->backoff_max_seconds = *max;
  return absl::OkStatus();
}

absl::Status ParseWaitForPodsReady(const Json* w, bool v1beta1, bool gate_disabled,
                                   WaitForPodsReadyConfig* out) {
  const Path path("waitForPodsReady");
  if (v1beta1) {
    out->timeout = absl::Minutes(5);
    out->enable = false;
  } else {
    out->enable = !gate_disabled;
  }
  if (w == nullptr) {
    if (!v1beta1) out->recovery_timeout = out->timeout;
    return absl::OkStatus();
  }
  std::set<std::string> known = {"timeout", "blockAdmission", "requeuingStrategy",
                                 "recoveryTimeout", "maxTimeoutOnWorkload"};
  if (v1beta1) known.insert("enable");
  BATCHD_RETURN_IF_ERROR(CheckKeys(*w, path, known));
  if (v1beta1) {
    BATCHD_ASSIGN_OR_RETURN(auto enable, Bool(*w, "enable", path));
    out->enable = enable.value_or(false);
  }
  BATCHD_ASSIGN_OR_RETURN(auto timeout, Duration(*w, "timeout", path));
  if (timeout && (v1beta1 || *timeout > absl::ZeroDuration())) out->timeout = *timeout;
  BATCHD_ASSIGN_OR_RETURN(auto block, Bool(*w, "blockAdmission", path));
  out->block_admission = block.value_or(v1beta1 ? out->enable : false);
  BATCHD_ASSIGN_OR_RETURN(auto recovery, Duration(*w, "recoveryTimeout", path));
  out->recovery_timeout = recovery;
  if (!recovery && !v1beta1) out->recovery_timeout = out->timeout;
  constexpr std::string_view kRequeuingStrategy = "requeuingStrategy";
  BATCHD_ASSIGN_OR_RETURN(const Json* rs, Object(*w, kRequeuingStrategy, path));
  if (rs != nullptr) {
    BATCHD_RETURN_IF_ERROR(ParseRequeuing(*rs, path.Child(kRequeuingStrategy), &out->requeuing));
  }
  return absl::OkStatus();
}

absl::Status ParseFairSharing(const Json* fs, bool v1beta1, FairSharingConfig* out) {
  const Path path("fairSharing");
  if (fs == nullptr) return absl::OkStatus();
  std::set<std::string> known = {"preemptionStrategies"};
  if (v1beta1) known.insert("enable");
  BATCHD_RETURN_IF_ERROR(CheckKeys(*fs, path, known));
  if (v1beta1) {
    BATCHD_ASSIGN_OR_RETURN(auto enable, Bool(*fs, "enable", path));
    out->enable = enable.value_or(false);
  } else {
    out->enable = true;
  }
  constexpr std::string_view kPreemptionStrategies = "preemptionStrategies";
  const Json* found = api::FindMember(*fs, kPreemptionStrategies);
  if (found == nullptr) return absl::OkStatus();
  const Path sp = path.Child(kPreemptionStrategies);
  const Json& list = *found;
  if (!list.is_array()) return Error(api::Invalid(sp, list, "must be a list"));
  if (list.empty()) return absl::OkStatus();  // Defaulted like an absent list.
  std::vector<FairSharingStrategy> strategies;
  std::vector<std::string> names;
  for (size_t i = 0; i < list.size(); ++i) {
    std::string s(api::AsString(list[i]));
    if (s == "LessThanOrEqualToFinalShare") {
      strategies.push_back(FairSharingStrategy::kLessThanOrEqualToFinalShare);
    } else if (s == "LessThanInitialShare") {
      strategies.push_back(FairSharingStrategy::kLessThanInitialShare);
    } else {
      return Error(api::NotSupported(sp.Index(i), list[i],
                                     {"LessThanInitialShare", "LessThanOrEqualToFinalShare"}));
    }
    names.push_back(s);
  }
  // Kueue accepts exactly these three sequences.
  const std::vector<std::vector<std::string>> allowed = {
      {"LessThanOrEqualToFinalShare"},
      {"LessThanInitialShare"},
      {"LessThanOrEqualToFinalShare", "LessThanInitialShare"}};
  if (std::find(allowed.begin(), allowed.end(), names) == allowed.end()) {
    return Error(api::Invalid(sp, list,
                              "must be one of [LessThanOrEqualToFinalShare], "
                              "[LessThanInitialShare] or "
                              "[LessThanOrEqualToFinalShare, LessThanInitialShare]"));
  }
  out->preemption_strategies = std::move(strategies);
  return absl::OkStatus();
}

// A metav1.LabelSelector at `path`; errors name the field.
absl::StatusOr<api::labels::LabelSelector> Selector(const Json& v, const Path& path) {
  api::ErrorList errs = api::labels::ValidateLabelSelector(v, path);
  if (!errs.empty()) return Error(errs.front());
  auto s = api::labels::LabelSelector::FromJson(v);
  if (!s.ok()) return Error(api::Invalid(path, v, std::string(s.status().message())));
  return *s;
}

absl::Status ParsePodOptions(const Json& po, const Path& path, QueueingConfig* out) {
  BATCHD_RETURN_IF_ERROR(CheckKeys(po, path, {"namespaceSelector", "podSelector"}));
  if (const Json* ps = api::FindMember(po, "podSelector"); ps != nullptr && !ps->is_null()) {
    BATCHD_ASSIGN_OR_RETURN(out->pod_selector, Selector(*ps, path.Child("podSelector")));
  }
  if (const Json* ns = api::FindMember(po, "namespaceSelector"); ns != nullptr && !ns->is_null()) {
    BATCHD_ASSIGN_OR_RETURN(out->pod_namespace_selector,
                            Selector(*ns, path.Child("namespaceSelector")));
  }
  return absl::OkStatus();
}

absl::Status ParseIntegrations(const Json* in, QueueingConfig* out) {
  const Path path("integrations");
  if (in == nullptr) return absl::OkStatus();
  BATCHD_RETURN_IF_ERROR(
      CheckKeys(*in, path, {"frameworks", "externalFrameworks", "labelKeysToCopy", "podOptions"}));
  BATCHD_ASSIGN_OR_RETURN(const Json* pod_options, Object(*in, "podOptions", path));
  if (pod_options != nullptr) {
    BATCHD_RETURN_IF_ERROR(ParsePodOptions(*pod_options, path.Child("podOptions"), out));
  }
  constexpr std::string_view kFrameworks = "frameworks";
  const Json* found = api::FindMember(*in, kFrameworks);
  if (found == nullptr) return absl::OkStatus();
  const Json& fw = *found;
  const Path fp = path.Child(kFrameworks);
  if (!fw.is_array()) return Error(api::Invalid(fp, fw, "must be a list"));
  if (fw.empty()) return absl::OkStatus();
  std::vector<std::string> names;
  for (size_t i = 0; i < fw.size(); ++i) {
    if (!fw[i].is_string() || fw[i].get<std::string>().empty()) {
      return Error(api::Invalid(fp.Index(i), fw[i], "must be a framework name"));
    }
    std::string n = fw[i].get<std::string>();
    // Accept only what batchd integrates: Kueue's other frameworks (MPIJob,
    // RayJob, ...) would otherwise be silently unmanaged.
    const std::vector<std::string> supported = {"batch/job", "jobset.x-k8s.io/jobset", "pod"};
    if (std::find(supported.begin(), supported.end(), n) == supported.end()) {
      return Error(api::NotSupported(fp.Index(i), fw[i], supported));
    }
    if (std::find(names.begin(), names.end(), n) != names.end()) {
      return Error(api::Duplicate(fp.Index(i), fw[i]));
    }
    names.push_back(std::move(n));
  }
  out->frameworks = std::move(names);
  return absl::OkStatus();
}

absl::Status ParseFeatureGates(const Json* fg, QueueingConfig* out) {
  if (fg == nullptr) return absl::OkStatus();
  for (const auto& [k, v] : fg->items()) {
    if (!v.is_boolean()) {
      return Error(api::Invalid(Path("featureGates").Child(k), v, "must be a boolean"));
    }
    out->feature_gates[k] = v.get<bool>();
  }
  return absl::OkStatus();
}

// Checks apiVersion and kind; sets the apiVersion as written.
absl::Status CheckTypeMeta(const Json& doc, std::string* api_version_out, bool* v1beta1) {
  const Json& av = api::Member(doc, "apiVersion");
  const std::string api_version(api::AsString(av));
  if (api_version.empty()) return Error(api::Required(Path("apiVersion")));
  if (api_version != absl::StrCat(kGroupPrefix, "v1beta1") &&
      api_version != absl::StrCat(kGroupPrefix, "v1beta2")) {
    return Error(api::NotSupported(
        Path("apiVersion"), av,
        {"config.kueue.x-k8s.io/v1beta1", "config.kueue.x-k8s.io/v1beta2"}));
  }
  *v1beta1 = api_version == absl::StrCat(kGroupPrefix, "v1beta1");
  *api_version_out = api_version;
  const Json& kind = api::Member(doc, "kind");
  if (api::AsString(kind) != "Configuration") {
    return Error(api::NotSupported(Path("kind"), kind, {"Configuration"}));
  }
  return absl::OkStatus();
}

}  // namespace

std::string_view FairSharingStrategyName(FairSharingStrategy s) {
  return s == FairSharingStrategy::kLessThanInitialShare ? "LessThanInitialShare"
                                                         : "LessThanOrEqualToFinalShare";
}

absl::StatusOr<QueueingConfig> ParseQueueingConfig(std::string_view yaml) {
  auto parsed = api::ParseYaml(yaml);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid queueing configuration: ", std::string(parsed.status().message())));
  }
  const Json& doc = *parsed;
  if (!doc.is_object()) {
    return absl::InvalidArgumentError(
        "invalid queueing configuration: expected a Configuration object");
  }
  QueueingConfig cfg;
  bool v1beta1 = false;
  BATCHD_RETURN_IF_ERROR(CheckTypeMeta(doc, &cfg.api_version, &v1beta1));
  for (const auto& [k, v] : doc.items()) {
    static const std::set<std::string> handled = {
        "apiVersion",   "kind",         "waitForPodsReady",           "fairSharing",
        "integrations", "featureGates", "manageJobsWithoutQueueName", "managedJobsNamespaceSelector",
        "objectRetentionPolicies", "admissionFairSharing", "multiKueue"};
    if (!handled.count(k) && !IgnoredTopLevel().count(k)) {
      return Error(api::Invalid(Path(k), Json(k), "unknown field"));
    }
  }
  const Path root;
  BATCHD_ASSIGN_OR_RETURN(const Json* fg, Object(doc, "featureGates", root));
  BATCHD_RETURN_IF_ERROR(ParseFeatureGates(fg, &cfg));
  // objectRetentionPolicies.workloads: afterFinished is honoured;
  // afterDeactivatedByKueue is refused rather than ignored.
  BATCHD_ASSIGN_OR_RETURN(const Json* orp, Object(doc, "objectRetentionPolicies", root));
  if (orp != nullptr) {
    const Path orp_path = root.Child("objectRetentionPolicies");
    BATCHD_RETURN_IF_ERROR(CheckKeys(*orp, orp_path, {"workloads"}));
    BATCHD_ASSIGN_OR_RETURN(const Json* wl, Object(*orp, "workloads", orp_path));
    if (wl != nullptr) {
      const Path wl_path = orp_path.Child("workloads");
      BATCHD_RETURN_IF_ERROR(CheckKeys(*wl, wl_path, {"afterFinished", "afterDeactivatedByKueue"}));
      if (const Json* d = api::FindMember(*wl, "afterDeactivatedByKueue"); d && !d->is_null()) {
        return Error(api::Invalid(wl_path.Child("afterDeactivatedByKueue"), *d,
                                  "not supported by batchd"));
      }
      BATCHD_ASSIGN_OR_RETURN(cfg.workload_retention_after_finished,
                              Duration(*wl, "afterFinished", wl_path));
    }
  }
  BATCHD_ASSIGN_OR_RETURN(const Json* mk, Object(doc, "multiKueue", root));
  BATCHD_RETURN_IF_ERROR(ParseMultiKueue(mk, &cfg.multi_kueue));
  BATCHD_ASSIGN_OR_RETURN(auto manage, Bool(doc, "manageJobsWithoutQueueName", root));
  cfg.manage_jobs_without_queue_name = manage.value_or(false);
  BATCHD_ASSIGN_OR_RETURN(const Json* w, Object(doc, "waitForPodsReady", root));
  auto gate = cfg.feature_gates.find("DisableWaitForPodsReady");
  bool gate_disabled = gate != cfg.feature_gates.end() && gate->second;
  BATCHD_RETURN_IF_ERROR(ParseWaitForPodsReady(w, v1beta1, gate_disabled, &cfg.wait_for_pods_ready));
  BATCHD_ASSIGN_OR_RETURN(const Json* fs, Object(doc, "fairSharing", root));
  BATCHD_RETURN_IF_ERROR(ParseFairSharing(fs, v1beta1, &cfg.fair_sharing));
  BATCHD_ASSIGN_OR_RETURN(const Json* afs, Object(doc, "admissionFairSharing", root));
  if (afs != nullptr) {
    const Path afs_path = root.Child("admissionFairSharing");
    BATCHD_RETURN_IF_ERROR(
        CheckKeys(*afs, afs_path, {"usageHalfLifeTime", "usageSamplingInterval", "resourceWeights"}));
    AdmissionFairSharingConfig a;
    BATCHD_ASSIGN_OR_RETURN(auto half_life, Duration(*afs, "usageHalfLifeTime", afs_path));
    if (half_life) a.usage_half_life = *half_life;
    BATCHD_ASSIGN_OR_RETURN(auto sampling, Duration(*afs, "usageSamplingInterval", afs_path));
    if (sampling) {
      if (*sampling <= absl::ZeroDuration()) {
        return Error(api::Invalid(afs_path.Child("usageSamplingInterval"),
                                  *api::FindMember(*afs, "usageSamplingInterval"),
                                  "must be greater than 0"));
      }
      a.usage_sampling_interval = *sampling;
    }
    if (const Json* rw = api::FindMember(*afs, "resourceWeights"); rw != nullptr && !rw->is_null()) {
      const Path rw_path = afs_path.Child("resourceWeights");
      if (!rw->is_object()) return Error(api::Invalid(rw_path, *rw, "must be an object"));
      for (const auto& [name, v] : rw->items()) {
        if (!v.is_number() || v.get<double>() < 0) {
          return Error(api::Invalid(rw_path.Key(name), v, "must be a number >= 0"));
        }
        a.resource_weights[name] = v.get<double>();
      }
    }
    auto g = cfg.feature_gates.find("AdmissionFairSharing");
    if (g == cfg.feature_gates.end() || g->second) cfg.admission_fair_sharing = std::move(a);
  }
  BATCHD_ASSIGN_OR_RETURN(const Json* in, Object(doc, "integrations", root));
  BATCHD_RETURN_IF_ERROR(ParseIntegrations(in, &cfg));
  if (const Json* ns = api::FindMember(doc, "managedJobsNamespaceSelector");
      ns != nullptr && !ns->is_null()) {
    BATCHD_ASSIGN_OR_RETURN(cfg.managed_jobs_namespace_selector,
                            Selector(*ns, Path("managedJobsNamespaceSelector")));
  }
  return cfg;
}

bool QueueingConfig::FrameworkEnabled(std::string_view name) const {
  return std::find(frameworks.begin(), frameworks.end(), name) != frameworks.end();
}

}  // namespace batchd::controllers::queueing
