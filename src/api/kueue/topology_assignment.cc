#include "api/kueue/topology_assignment.h"

#include <algorithm>

#include "api/json_access.h"

namespace batchd::api::kueue {
namespace {

size_t CommonPrefix(const std::vector<std::string>& vs) {
  size_t n = vs[0].size();
  for (const std::string& v : vs) {
    size_t i = 0;
    while (i < n && i < v.size() && v[i] == vs[0][i]) ++i;
    n = i;
  }
  return n;
}

size_t CommonSuffix(const std::vector<std::string>& vs, size_t prefix) {
  size_t n = vs[0].size() - prefix;
  for (const std::string& v : vs) {
    size_t room = v.size() - prefix;
    size_t i = 0;
    while (i < n && i < room && v[v.size() - 1 - i] == vs[0][vs[0].size() - 1 - i]) ++i;
    n = i;
  }
  return n;
}

Json LevelValues(const std::vector<std::string>& vs) {
  if (std::all_of(vs.begin(), vs.end(), [&](const std::string& v) { return v == vs[0]; })) {
    return {{"universalValue", vs[0]}};
  }
  size_t prefix = CommonPrefix(vs);
  size_t suffix = CommonSuffix(vs, prefix);
  Json roots = Json::array();
  for (const std::string& v : vs) roots.push_back(v.substr(prefix, v.size() - prefix - suffix));
  Json out = Json::object();
  if (prefix > 0) out["prefix"] = vs[0].substr(0, prefix);
  if (suffix > 0) out["suffix"] = vs[0].substr(vs[0].size() - suffix);
  out["roots"] = std::move(roots);
  return out;
}

std::string ValueAt(const Json& level, size_t i) {
  if (const Json* u = FindMember(level, "universalValue"); u != nullptr && u->is_string()) {
    return u->get<std::string>();
  }
  const Json& roots = MemberArray(level, "roots");
  std::string root = i < roots.size() && roots[i].is_string() ? roots[i].get<std::string>() : "";
  return std::string(StringMember(level, "prefix")) + root + std::string(StringMember(level, "suffix"));
}

}  // namespace

Json EncodeTopologyAssignment(const TopologyAssignmentValue& ta) {
  Json out = {{"levels", ta.levels}, {"slices", Json::array()}};
  if (ta.domains.empty()) return out;
  Json per_level = Json::array();
  for (size_t l = 0; l < ta.levels.size(); ++l) {
    std::vector<std::string> vs;
    vs.reserve(ta.domains.size());
    for (const TopologyDomainValue& d : ta.domains) vs.push_back(l < d.values.size() ? d.values[l] : "");
    per_level.push_back(LevelValues(vs));
  }
  Json slice = {{"domainCount", ta.domains.size()}, {"valuesPerLevel", std::move(per_level)}};
  const int32_t first = ta.domains[0].count;
  if (std::all_of(ta.domains.begin(), ta.domains.end(),
                  [&](const TopologyDomainValue& d) { return d.count == first; })) {
    slice["universalPodCount"] = first;
  } else {
    Json counts = Json::array();
    for (const TopologyDomainValue& d : ta.domains) counts.push_back(d.count);
    slice["podCounts"] = std::move(counts);
  }
  out["slices"].push_back(std::move(slice));
  return out;
}

std::optional<TopologyAssignmentValue> DecodeTopologyAssignment(const Json& ta) {
  if (!ta.is_object()) return std::nullopt;
  TopologyAssignmentValue out;
  for (const Json& l : MemberArray(ta, "levels")) {
    if (l.is_string()) out.levels.push_back(l.get<std::string>());
  }
  for (const Json& s : MemberArray(ta, "slices")) {
    int64_t n = IntMember(s, "domainCount", 0);
    const Json& per_level = MemberArray(s, "valuesPerLevel");
    const Json& counts = MemberArray(s, "podCounts");
    const Json* universal = FindMember(s, "universalPodCount");
    for (int64_t i = 0; i < n && i < 1'000'000; ++i) {
      TopologyDomainValue d;
      for (const Json& lv : per_level) d.values.push_back(ValueAt(lv, static_cast<size_t>(i)));
      const Json* c = universal != nullptr ? universal
                      : static_cast<size_t>(i) < counts.size() ? &counts[i]
                                                               : nullptr;
      d.count = c != nullptr && c->is_number_integer() ? c->get<int32_t>() : 0;
      out.domains.push_back(std::move(d));
    }
  }
  return out;
}

}  // namespace batchd::api::kueue
