#include "cli/pending_insight.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "api/json_access.h"
#include "api/meta/conditions.h"
#include "api/meta/time_util.h"
#include "api/resource/amount.h"
#include "api/resource/quantity.h"

namespace batchd::cli {

using api::Json;

namespace {

std::optional<int64_t> Milli(const Json& v) {
  auto q = api::Quantity::FromJson(v);
  if (!q.ok()) return std::nullopt;
  return api::Amount::FromQuantity(*q).milli();
}

}  // namespace

std::optional<QuotaShortfall> ParseShortfall(const std::string& message) {
  constexpr std::string_view kHead = "insufficient unused quota for ";
  size_t at = message.find(kHead);
  if (at == std::string::npos) return std::nullopt;
  std::string rest = message.substr(at + kHead.size());
  size_t in = rest.find(" in flavor ");
  size_t comma = rest.find(", ");
  size_t more = rest.find(" more needed");
  if (in == std::string::npos || comma == std::string::npos || more == std::string::npos ||
      !(in < comma && comma < more)) {
    return std::nullopt;
  }
  QuotaShortfall s;
  s.resource = rest.substr(0, in);
  s.flavor = rest.substr(in + 11, comma - in - 11);
  auto q = api::Quantity::Parse(rest.substr(comma + 2, more - comma - 2));
  if (!q.ok()) return std::nullopt;
  s.more_needed_milli = api::Amount::FromQuantity(*q).milli();
  return s;
}

int64_t RequestOf(const Json& workload, const std::string& resource) {
  int64_t total = 0;
  const Json* sets = api::FindMemberAt(workload, {"spec", "podSets"});
  if (sets == nullptr || !sets->is_array()) return 0;
  for (const Json& ps : *sets) {
    const Json* containers = api::FindMemberAt(ps, {"template", "spec", "containers"});
    if (containers == nullptr || !containers->is_array()) continue;
    int64_t per_pod = 0;
    for (const Json& c : *containers) {
      const Json* v = api::FindMemberAt(c, {"resources", "requests", resource});
      if (v == nullptr) v = api::FindMemberAt(c, {"resources", "limits", resource});
      if (v == nullptr) continue;
      per_pod += Milli(*v).value_or(0);
    }
    total += per_pod * api::IntMember(ps, "count", 1);
  }
  return total;
}

std::optional<absl::Time> EstimateStart(const std::vector<Json>& admitted,
                                        const QuotaShortfall& shortfall, int64_t need_milli,
                                        absl::Time now) {
  if (need_milli <= 0) return now;
  std::vector<std::pair<absl::Time, int64_t>> releases;  // (end, amount of the resource)
  for (const Json& wl : admitted) {
    int64_t amount = 0;
    const Json* sets = api::FindMemberAt(wl, {"status", "admission", "podSetAssignments"});
    for (const Json& psa : sets != nullptr && sets->is_array() ? *sets : api::EmptyArray()) {
      if (api::StringMember(api::MemberObject(psa, "flavors"), shortfall.resource) !=
          shortfall.flavor) {
        continue;
      }
      const Json* u = api::FindMemberAt(psa, {"resourceUsage", shortfall.resource});
      if (u != nullptr) amount += Milli(*u).value_or(0);
    }
    if (amount <= 0) continue;
    const Json* max = api::FindMemberAt(wl, {"spec", "maximumExecutionTimeSeconds"});
    const Json* admitted_cond = api::meta::FindCondition(wl, "Admitted");
    if (max == nullptr || !max->is_number_integer() || admitted_cond == nullptr) continue;
    auto since = api::meta::ParseRfc3339(std::string(api::StringMember(*admitted_cond, "lastTransitionTime")));
    if (!since.ok()) continue;
    int64_t past = api::IntMember(api::MemberObject(wl, "status"),
                                  "accumulatedPastExecutionTimeSeconds", 0);
    absl::Time end = *since + absl::Seconds(max->get<int64_t>() - past);
    releases.emplace_back(std::max(end, now), amount);
  }
  std::sort(releases.begin(), releases.end());
  int64_t freed = 0;
  for (const auto& [t, amount] : releases) {
    freed += amount;
    if (freed >= need_milli) return t;
  }
  return std::nullopt;
}

}  // namespace batchd::cli
