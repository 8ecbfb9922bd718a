#include "controllers/admissioncheck/admission_checks.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/json_access.h"
#include "api/meta/conditions.h"
#include "api/meta/time_util.h"

namespace batchd::controllers::admissioncheck {
namespace {

using api::AsString;
using api::MemberArray;
using api::MemberObject;
using api::StringMember;

const Json& Rules(const Json& cq) {
  return MemberArray(MemberObject(MemberObject(cq, "spec"), "admissionChecksStrategy"),
                     "admissionChecks");
}

// v1beta1 spec.admissionChecks (plain names), should a stored object carry them.
const Json& PlainChecks(const Json& cq) {
  return MemberArray(MemberObject(cq, "spec"), "admissionChecks");
}

Json* FindMutableCheck(Json& status, std::string_view name) {
  auto it = status.find("admissionChecks");
  if (it == status.end() || !it->is_array()) return nullptr;
  for (Json& s : *it) {
    if (StringMember(s, "name") == name) return &s;
  }
  return nullptr;
}

}  // namespace

std::vector<std::string> ReferencedChecks(const Json& cq) {
  std::set<std::string> names;
  for (const Json& r : Rules(cq)) {
    if (std::string_view n = StringMember(r, "name"); !n.empty()) names.emplace(n);
  }
  for (const Json& n : PlainChecks(cq)) {
    if (!AsString(n).empty()) names.emplace(AsString(n));
  }
  return {names.begin(), names.end()};
}

std::vector<std::string> ChecksFor(const Json& cq, const std::set<std::string>& flavors) {
  std::set<std::string> names;
  for (const Json& r : Rules(cq)) {
    std::string_view n = StringMember(r, "name");
    if (n.empty()) continue;
    const Json& on = MemberArray(r, "onFlavors");
    bool applies = on.empty();
    for (const Json& f : on) {
      if (flavors.count(std::string(AsString(f))) > 0) applies = true;
    }
    if (applies) names.emplace(n);
  }
  for (const Json& n : PlainChecks(cq)) {
    if (!AsString(n).empty()) names.emplace(AsString(n));
  }
  return {names.begin(), names.end()};
}

std::set<std::string> AssignedFlavors(const Json& admission) {
  std::set<std::string> out;
  for (const Json& psa : MemberArray(admission, "podSetAssignments")) {
    const Json& flavors = MemberObject(psa, "flavors");
    for (auto it = flavors.begin(); it != flavors.end(); ++it) {
      if (it->is_string()) out.insert(it->get<std::string>());
    }
  }
  return out;
}

bool CheckActive(const Json& ac) { return api::meta::IsConditionTrue(ac, "Active"); }

bool CheckReferencesUsable(const Json& cq, const CheckLookup& lookup,
                           std::vector<std::string>* reasons,
                           std::vector<std::string>* messages) {
  std::vector<std::string> missing, inactive;
  for (const std::string& name : ReferencedChecks(cq)) {
    std::shared_ptr<const Json> ac = lookup(name);
    if (!ac) {
      missing.push_back(name);
    } else if (!CheckActive(*ac)) {
      inactive.push_back(name);
    }
  }
  if (!missing.empty()) {
    reasons->push_back("AdmissionCheckNotFound");
    messages->push_back(
        absl::StrCat("references missing AdmissionCheck(s): [", absl::StrJoin(missing, " "), "]"));
  }
  if (!inactive.empty()) {
    reasons->push_back("AdmissionCheckInactive");
    messages->push_back(absl::StrCat("references inactive AdmissionCheck(s): [",
                                     absl::StrJoin(inactive, " "), "]"));
  }
  return missing.empty() && inactive.empty();
}

bool ResetForReservation(Json& status, const std::vector<std::string>& checks, absl::Time now) {
  const Json old = status.contains("admissionChecks") ? status["admissionChecks"] : Json();
  Json out = Json::array();
  const std::string ts = api::meta::FormatRfc3339(now);
  for (const std::string& name : checks) {
    const Json* prev = nullptr;
    if (old.is_array()) {
      for (const Json& s : old) {
        if (StringMember(s, "name") == name) prev = &s;
      }
    }
    if (prev != nullptr && StringMember(*prev, "state") == kPending &&
        !prev->contains("podSetUpdates")) {
      out.push_back(*prev);
      continue;
    }
    Json s = {{"name", name}, {"state", kPending}, {"lastTransitionTime", ts}, {"message", ""}};
    int64_t retries = prev != nullptr ? api::IntMember(*prev, "retryCount") : 0;
    if (prev != nullptr && StringMember(*prev, "state") == kRetry) ++retries;
    if (retries > 0) s["retryCount"] = retries;
    if (prev != nullptr && StringMember(*prev, "state") != kPending) {
      s["message"] = absl::StrCat("Reset to Pending after eviction. Previously: ",
                                  std::string(StringMember(*prev, "state")));
    }
    out.push_back(std::move(s));
  }
  if (out.empty()) {
    bool had = status.contains("admissionChecks");
    status.erase("admissionChecks");
    return had;
  }
  if (old == out) return false;
  status["admissionChecks"] = std::move(out);
  return true;
}

bool SyncCheckList(Json& status, const std::vector<std::string>& checks, absl::Time now) {
  const Json old = status.contains("admissionChecks") ? status["admissionChecks"] : Json();
  Json out = Json::array();
  for (const std::string& name : checks) {
    const Json* prev = nullptr;
    if (old.is_array()) {
      for (const Json& s : old) {
        if (StringMember(s, "name") == name) prev = &s;
      }
    }
    if (prev != nullptr) {
      out.push_back(*prev);
    } else {
      out.push_back({{"name", name},
                     {"state", kPending},
                     {"lastTransitionTime", api::meta::FormatRfc3339(now)},
                     {"message", ""}});
    }
  }
  if (out.empty()) {
    bool had = status.contains("admissionChecks");
    status.erase("admissionChecks");
    return had;
  }
  if (old == out) return false;
  status["admissionChecks"] = std::move(out);
  return true;
}

const Json* FindCheckState(const Json& wl, std::string_view name) {
  for (const Json& s : MemberArray(MemberObject(wl, "status"), "admissionChecks")) {
    if (StringMember(s, "name") == name) return &s;
  }
  return nullptr;
}

bool AllChecksReady(const Json& wl) {
  for (const Json& s : MemberArray(MemberObject(wl, "status"), "admissionChecks")) {
    if (StringMember(s, "state") != kReady) return false;
  }
  return true;
}

bool SetCheckState(Json& status, std::string_view name, const CheckStateUpdate& u,
                   absl::Time now) {
  Json* s = FindMutableCheck(status, name);
  if (s == nullptr) return false;
  Json next = *s;
  if (StringMember(next, "state") != u.state) {
    next["state"] = u.state;
    next["lastTransitionTime"] = api::meta::FormatRfc3339(now);
  }
  next["message"] = u.message.size() > 32768 ? u.message.substr(0, 32768) : u.message;
  if (u.requeue_after_seconds) {
    next["requeueAfterSeconds"] = *u.requeue_after_seconds;
  } else {
    next.erase("requeueAfterSeconds");
  }
  if (u.pod_set_updates) {
    next["podSetUpdates"] = *u.pod_set_updates;
  } else {
    next.erase("podSetUpdates");
  }
  if (next == *s) return false;
  *s = std::move(next);
  return true;
}

}  // namespace batchd::controllers::admissioncheck
