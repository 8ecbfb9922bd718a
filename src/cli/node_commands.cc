// `batchctl create simulated-nodes`: the spec (flags -> levels, labels,
// taints, resources), the generated Nodes, and applying or deleting them.
// See node_commands.h for the naming scheme.
#include "cli/node_commands.h"

#include <algorithm>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "api/json_access.h"
#include "api/meta/object_meta.h"
#include "api/resource/quantity.h"
#include "api/validation/names.h"
#include "cli/queue_commands.h"

namespace batchd::cli {
namespace {

using api::Json;

// The annotation the simulated kubelet runs a Node for (the same constant
// as agent/sim/sim_kubelet.h, which batchctl does not link).
constexpr char kSimulatedAnnotation[] = "batchd.io/simulated";
constexpr char kHostnameLabel[] = "kubernetes.io/hostname";
constexpr char kTopologyLabelPrefix[] = "topology.batchd.io/";
constexpr char kGpuResource[] = "nvidia.com/gpu";
// Nodes created per CreateMany call: one store batch in process, and a
// bounded amount of JSON held at once for 100,000 nodes.
constexpr size_t kCreateBatch = 500;

absl::Status Bad(const std::string& flag, const std::string& msg) {
  return absl::InvalidArgumentError(absl::StrCat("--", flag, ": ", msg));
}

// A positive integer no larger than kMaxSimulatedNodes, or nullopt.
std::optional<int64_t> ParseSize(const std::string& s) {
  int64_t v = 0;
  if (!absl::SimpleAtoi(s, &v) || v < 1 || v > kMaxSimulatedNodes) return std::nullopt;
  return v;
}

// A quantity flag that must be set and positive, in canonical form.
absl::StatusOr<std::string> PositiveQuantity(const std::string& s, const std::string& flag) {
  if (s.empty()) return Bad(flag, "required (e.g. --cpu 96 --memory 256Gi)");
  auto q = api::Quantity::Parse(s);
  if (!q.ok()) return Bad(flag, absl::StrCat("\"", s, "\": ", q.status().message()));
  if (q->Sign() <= 0) return Bad(flag, absl::StrCat("\"", s, "\" must be more than 0"));
  return q->String();
}

// The level list: "name=fanout,..." top first.
absl::StatusOr<std::vector<TopologyLevel>> ParseLevels(const std::string& s) {
  std::vector<TopologyLevel> out;
  std::set<std::string> keys;
  for (absl::string_view part : absl::StrSplit(s, ',')) {
    const std::string entry(part);
    std::vector<std::string> nf = absl::StrSplit(entry, absl::MaxSplits('=', 1));
    if (nf.size() != 2 || nf[0].empty()) {
      return Bad("levels", absl::StrCat("\"", entry, "\" is not name=fanout (e.g. rack=8)"));
    }
    const std::string& name = nf[0];
    TopologyLevel level;
    if (name.find('/') != std::string::npos) {
      level.key = name;
    } else if (name == "hostname") {
      level.key = kHostnameLabel;
    } else {
      level.key = absl::StrCat(kTopologyLabelPrefix, name);
    }
    if (auto errs = api::validation::IsQualifiedName(level.key); !errs.empty()) {
      return Bad("levels", absl::StrCat("\"", name, "\" does not make a label key (", level.key,
                                        "): ", absl::StrJoin(errs, "; ")));
    }
    // A qualified name's name part starts with an alphanumeric character.
    const std::string short_name = level.key.substr(level.key.rfind('/') + 1);
    level.letter = absl::ascii_tolower(static_cast<unsigned char>(short_name[0]));
    if (!keys.insert(level.key).second) {
      return Bad("levels", absl::StrCat("level \"", name, "\" (label ", level.key,
                                        ") is given twice"));
    }
    std::optional<int64_t> fanout = ParseSize(nf[1]);
    if (!fanout) {
      return Bad("levels", absl::StrCat(name, "=", nf[1], ": the fanout must be a whole number from 1 to ",
                                        kMaxSimulatedNodes));
    }
    level.fanout = *fanout;
    out.push_back(std::move(level));
  }
  for (size_t i = 0; i + 1 < out.size(); ++i) {
    if (out[i].key == kHostnameLabel) {
      return Bad("levels", "hostname (kubernetes.io/hostname) can only be the lowest level: "
                           "each node's hostname is its own name");
    }
  }
  return out;
}

// The index of node `index` under each level, top first.
std::vector<int64_t> Path(const SimulatedNodeSpec& spec, int64_t index) {
  std::vector<int64_t> path(spec.levels.size());
  for (size_t i = spec.levels.size(); i-- > 0;) {
    path[i] = index % spec.levels[i].fanout;
    index /= spec.levels[i].fanout;
  }
  return path;
}

// The value of level `depth` for a node at `path`: "b0", "b0-r3", ...
std::string LevelValue(const SimulatedNodeSpec& spec, const std::vector<int64_t>& path,
                       size_t depth) {
  std::string v;
  for (size_t i = 0; i <= depth; ++i) {
    if (i > 0) v += '-';
    absl::StrAppend(&v, std::string(1, spec.levels[i].letter), path[i]);
  }
  return v;
}

bool IsSimulated(const Json& node) {
  return api::meta::GetAnnotation(node, kSimulatedAnnotation).value_or("") == "true";
}

// Taints as comparable tuples (timeAdded and order ignored).
std::multiset<std::tuple<std::string, std::string, std::string>> TaintSet(const Json& taints) {
  std::multiset<std::tuple<std::string, std::string, std::string>> out;
  if (!taints.is_array()) return out;
  for (const Json& t : taints) {
    out.emplace(api::CopyStringMember(t, "key"), api::CopyStringMember(t, "value"),
                api::CopyStringMember(t, "effect"));
  }
  return out;
}

// A merge patch that makes the resource map `have` equal to `want` (null
// removes a resource), or null when they already agree by value.
Json ResourcesPatch(const Json& have, const Json& want) {
  Json patch = Json::object();
  for (auto it = want.begin(); it != want.end(); ++it) {
    const Json* h = api::FindMember(have, it.key());
    bool same = false;
    if (h != nullptr) {
      auto hq = api::Quantity::FromJson(*h);
      auto wq = api::Quantity::FromJson(*it);
      same = hq.ok() && wq.ok() && *hq == *wq;
    }
    if (!same) patch[it.key()] = *it;
  }
  if (have.is_object()) {
    for (auto it = have.begin(); it != have.end(); ++it) {
      if (!want.contains(it.key())) patch[it.key()] = nullptr;
    }
  }
  return patch.empty() ? Json() : patch;
}

}  // namespace

absl::StatusOr<SimulatedNodeSpec> BuildSimulatedNodeSpec(const SimulatedNodeFlags& f) {
  SimulatedNodeSpec spec;

  // Shape: --levels, --count, or both agreeing.
  std::optional<int64_t> count;
  if (!f.count.empty()) {
    count = ParseSize(f.count);
    if (!count) {
      return Bad("count", absl::StrCat("\"", f.count, "\" must be a whole number from 1 to ",
                                       kMaxSimulatedNodes));
    }
  }
  if (f.levels.empty()) {
    if (!count) {
      return absl::InvalidArgumentError(
          "give --levels (e.g. --levels block=2,rack=4,hostname=8) or --count");
    }
    spec.levels.push_back({kHostnameLabel, 'h', *count});
  } else {
    auto levels = ParseLevels(f.levels);
    if (!levels.ok()) return levels.status();
    spec.levels = std::move(*levels);
  }
  spec.count = 1;
  for (const TopologyLevel& l : spec.levels) {
    if (spec.count > kMaxSimulatedNodes / l.fanout) {
      return Bad("levels", absl::StrCat("\"", f.levels, "\" makes more than ", kMaxSimulatedNodes,
                                        " nodes"));
    }
    spec.count *= l.fanout;
  }
  if (count && *count != spec.count) {
    return Bad("count", absl::StrCat(*count, " does not match --levels ", f.levels, " (",
                                     spec.count, " nodes); give one or make them agree"));
  }

  // Names: the prefix, then the longest generated name and values (those of
  // the last node, whose indices are the largest) must be valid.
  if (auto errs = api::validation::IsDNS1123Subdomain(f.prefix); !errs.empty()) {
    return Bad("prefix", absl::StrCat("\"", f.prefix, "\": ", absl::StrJoin(errs, "; ")));
  }
  spec.prefix = f.prefix;
  const int64_t last = spec.count - 1;
  const std::vector<int64_t> last_path = Path(spec, last);
  for (size_t d = 0; d < spec.levels.size(); ++d) {
    const std::string v = LevelValue(spec, last_path, d);
    if (auto errs = api::validation::IsValidLabelValue(v); !errs.empty()) {
      return Bad("levels", absl::StrCat("the value \"", v, "\" of ", spec.levels[d].key,
                                        " is not a valid label value: ", absl::StrJoin(errs, "; ")));
    }
  }

  const std::string last_name = SimulatedNodeName(spec, last);
  for (const auto& errs : {api::validation::IsDNS1123Subdomain(last_name),
                           api::validation::IsValidLabelValue(last_name)}) {
    if (!errs.empty()) {
      return Bad("prefix", absl::StrCat("the node name \"", last_name,
                                        "\" (also its hostname label) is invalid: ",
                                        absl::StrJoin(errs, "; ")));
    }
  }

  // Extra labels: valid, and not a key the levels or hostname set.
  auto labels = ParseKeyValues(f.labels, "labels");
  if (!labels.ok()) return labels.status();
  for (const auto& [k, v] : *labels) {
    if (auto errs = api::validation::IsQualifiedName(k); !errs.empty()) {
      return Bad("labels", absl::StrCat("key \"", k, "\": ", absl::StrJoin(errs, "; ")));
    }
    if (auto errs = api::validation::IsValidLabelValue(v); !errs.empty()) {
      return Bad("labels", absl::StrCat("value \"", v, "\" of ", k, ": ", absl::StrJoin(errs, "; ")));
    }
    bool generated = k == kHostnameLabel;
    for (const TopologyLevel& l : spec.levels) generated |= l.key == k;
    if (generated) return Bad("labels", absl::StrCat(k, " is generated (--levels); leave it out"));
  }
  spec.labels = std::move(*labels);

  // Taints: key=value:Effect, valid, one per key and effect.
  auto taints = ParseTaints(f.taints, "taints", /*effect_required=*/true);
  if (!taints.ok()) return taints.status();
  std::set<std::pair<std::string, std::string>> seen;
  for (const TaintFlag& t : *taints) {
    if (auto errs = api::validation::IsQualifiedName(t.key); !errs.empty()) {
      return Bad("taints", absl::StrCat("key \"", t.key, "\": ", absl::StrJoin(errs, "; ")));
    }
    if (auto errs = api::validation::IsValidLabelValue(t.value); !errs.empty()) {
      return Bad("taints", absl::StrCat("value \"", t.value, "\" of ", t.key, ": ",
                                        absl::StrJoin(errs, "; ")));
    }
    if (!seen.emplace(t.key, t.effect).second) {
      return Bad("taints", absl::StrCat(t.key, ":", t.effect, " is given twice"));
    }
    Json j = {{"key", t.key}, {"effect", t.effect}};
    if (t.has_value) j["value"] = t.value;
    spec.taints.push_back(std::move(j));
  }

  // Resources.
  auto cpu = PositiveQuantity(f.cpu, "cpu");
  if (!cpu.ok()) return cpu.status();
  auto memory = PositiveQuantity(f.memory, "memory");
  if (!memory.ok()) return memory.status();
  int64_t gpu = 0, pods = 0;
  if (!absl::SimpleAtoi(f.gpu, &gpu) || gpu < 0) {
    return Bad("gpu", absl::StrCat("\"", f.gpu, "\" must be a whole number, 0 or more"));
  }
  if (!absl::SimpleAtoi(f.pods, &pods) || pods < 1) {
    return Bad("pods", absl::StrCat("\"", f.pods, "\" must be a whole number, 1 or more"));
  }
  spec.capacity = {{"cpu", *cpu}, {"memory", *memory}, {"pods", std::to_string(pods)}};
  if (gpu > 0) spec.capacity[kGpuResource] = std::to_string(gpu);
  return spec;
}

std::string SimulatedNodeName(const SimulatedNodeSpec& spec, int64_t index) {
  return absl::StrCat(spec.prefix, "-",
                      LevelValue(spec, Path(spec, index), spec.levels.size() - 1));
}

std::map<std::string, std::string> SimulatedNodeLabels(const SimulatedNodeSpec& spec,
                                                        int64_t index) {
  std::map<std::string, std::string> labels = spec.labels;
  const std::vector<int64_t> path = Path(spec, index);
  for (size_t d = 0; d < spec.levels.size(); ++d) {
    labels[spec.levels[d].key] = LevelValue(spec, path, d);
  }
  // Last, so that a hostname level reads the node name, as kubelets set it.
  labels[kHostnameLabel] = SimulatedNodeName(spec, index);
  return labels;
}

Json SimulatedNode(const SimulatedNodeSpec& spec, int64_t index) {
  // The shape test/e2e and the benchmarks create simulated nodes in; the
  // simulated kubelet adds the remaining conditions, addresses and nodeInfo.
  Json node = {{"apiVersion", "v1"},
               {"kind", "Node"},
               {"metadata",
                {{"name", SimulatedNodeName(spec, index)},
                 {"annotations", {{kSimulatedAnnotation, "true"}}},
                 {"labels", SimulatedNodeLabels(spec, index)}}},
               {"spec", Json::object()},
               {"status",
                {{"capacity", spec.capacity},
                 {"allocatable", spec.capacity},
                 {"conditions",
                  Json::array({{{"type", "Ready"}, {"status", "True"}, {"reason", "KubeletReady"}}})}}}};
  if (!spec.taints.empty()) node["spec"]["taints"] = spec.taints;
  return node;
}

std::string FormatSimulatedNodesPlan(const SimulatedNodeSpec& spec, int shown) {
  std::vector<std::string> resources;
  for (auto it = spec.capacity.begin(); it != spec.capacity.end(); ++it) {
    resources.push_back(absl::StrCat(it.key(), "=", std::string(api::AsString(*it))));
  }
  std::vector<std::string> taints;
  for (const Json& t : spec.taints) {
    std::string s = api::CopyStringMember(t, "key");
    if (api::HasMember(t, "value")) absl::StrAppend(&s, "=", api::CopyStringMember(t, "value"));
    absl::StrAppend(&s, ":", api::CopyStringMember(t, "effect"));
    taints.push_back(std::move(s));
  }
  std::ostringstream out;
  out << spec.count << " simulated node(s), each " << absl::StrJoin(resources, ", ");
  if (!taints.empty()) out << ", tainted " << absl::StrJoin(taints, ",");
  out << " (dry run: nothing sent to the server)\n";

  std::vector<int64_t> rows;
  for (int64_t i = 0; i < spec.count && i < shown; ++i) rows.push_back(i);
  if (spec.count > shown) rows.push_back(spec.count - 1);
  std::vector<std::pair<std::string, std::string>> table;
  size_t width = 4;  // "NAME"
  for (int64_t i : rows) {
    std::vector<std::string> kv;
    for (const auto& [k, v] : SimulatedNodeLabels(spec, i)) kv.push_back(absl::StrCat(k, "=", v));
    table.emplace_back(SimulatedNodeName(spec, i), absl::StrJoin(kv, ","));
    width = std::max(width, table.back().first.size());
  }
  auto line = [&](const std::string& a, const std::string& b) {
    out << a << std::string(width - a.size() + 3, ' ') << b << "\n";
  };
  line("NAME", "LABELS");
  for (size_t r = 0; r < table.size(); ++r) {
    if (spec.count > shown && r + 1 == table.size() && spec.count - 1 > shown) {
      out << "... (" << spec.count - 1 - shown << " more)\n";
    }
    line(table[r].first, table[r].second);
  }
  return out.str();
}

// --- applying a spec ----------------------------------------------------------

const api::KindDef& SimulatedNodeCommands::Nodes() const { return client_.Kind("", "v1", "nodes"); }

absl::StatusOr<std::map<std::string, Json>> SimulatedNodeCommands::ExistingNodes() {
  auto list = client_.List(Nodes(), "");
  if (!list.ok()) return list.status();
  std::map<std::string, Json> out;
  for (Json& node : list->items) {
    std::string name = api::meta::GetName(node);
    out.emplace(std::move(name), std::move(node));
  }
  return out;
}

absl::Status SimulatedNodeCommands::Create(const SimulatedNodeSpec& spec) {
  auto existing = ExistingNodes();
  if (!existing.ok()) return existing.status();

  // Nothing is written while a name belongs to a node batchd does not
  // simulate: that is somebody's real machine.
  std::vector<std::string> foreign;
  for (int64_t i = 0; i < spec.count; ++i) {
    auto it = existing->find(SimulatedNodeName(spec, i));
    if (it != existing->end() && !IsSimulated(it->second)) foreign.push_back(it->first);
  }
  if (!foreign.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        foreign.size(), " node(s) of these names exist and are not simulated (no ",
        kSimulatedAnnotation, ": \"true\" annotation), e.g. node/", foreign.front(),
        "; nothing was changed"));
  }

  int64_t created = 0, updated = 0, unchanged = 0, failed = 0;
  absl::Status first_error;
  auto failure = [&](const absl::Status& st) {
    ++failed;
    if (first_error.ok()) first_error = st;
  };
  std::vector<std::pair<std::string, Json>> batch;
  auto flush = [&] {
    if (batch.empty()) return;
    for (const auto& r : client_.CreateMany(Nodes(), std::move(batch))) {
      if (r.ok()) {
        ++created;
      } else {
        failure(r.status());
      }
    }
    batch.clear();
  };

  for (int64_t i = 0; i < spec.count; ++i) {
    Json want = SimulatedNode(spec, i);
    const std::string name = api::meta::GetName(want);
    auto it = existing->find(name);
    if (it == existing->end()) {
      batch.emplace_back("", std::move(want));
      if (batch.size() >= kCreateBatch) flush();
      continue;
    }
    const Json& have = it->second;
    // Labels the spec sets; other labels stay.
    Json labels = Json::object();
    const auto have_labels = api::meta::Labels(have);
    for (const auto& [k, v] : api::StringMap(api::MemberAt(want, {"metadata", "labels"}))) {
      auto h = have_labels.find(k);
      if (h == have_labels.end() || h->second != v) labels[k] = v;
    }
    Json patch = Json::object();
    if (!labels.empty()) patch["metadata"]["labels"] = labels;
    const Json& have_taints = api::MemberAt(have, {"spec", "taints"});
    if (TaintSet(have_taints) != TaintSet(spec.taints)) {
      patch["spec"]["taints"] = spec.taints.empty() ? Json() : spec.taints;
    }
    Json status_patch = Json::object();
    for (const char* field : {"capacity", "allocatable"}) {
      Json p = ResourcesPatch(api::MemberAt(have, {"status", field}), spec.capacity);
      if (!p.is_null()) status_patch["status"][field] = std::move(p);
    }
    if (patch.empty() && status_patch.empty()) {
      ++unchanged;
      continue;
    }
    absl::Status st;
    if (!patch.empty()) st = client_.MergePatch(Nodes(), "", name, patch).status();
    if (st.ok() && !status_patch.empty()) {
      st = client_.MergePatch(Nodes(), "", name, status_patch, /*status=*/true).status();
    }
    if (st.ok()) {
      ++updated;
    } else {
      failure(st);
    }
  }
  flush();

  out_ << spec.count << " simulated node(s): " << created << " created, " << updated
       << " updated, " << unchanged << " unchanged";
  if (failed > 0) out_ << ", " << failed << " failed";
  out_ << "\n";
  if (failed > 0) {
    return absl::Status(first_error.code(),
                        absl::StrCat(failed, " node(s) not written; the first error: ",
                                     first_error.message()));
  }
  return absl::OkStatus();
}

absl::Status SimulatedNodeCommands::Delete(const SimulatedNodeSpec& spec) {
  auto existing = ExistingNodes();
  if (!existing.ok()) return existing.status();
  int64_t deleted = 0, not_found = 0, foreign = 0, failed = 0;
  absl::Status first_error;
  for (int64_t i = 0; i < spec.count; ++i) {
    const std::string name = SimulatedNodeName(spec, i);
    auto it = existing->find(name);
    if (it == existing->end()) {
      ++not_found;
      continue;
    }
    if (!IsSimulated(it->second)) {
      ++foreign;
      out_ << "node/" << name << " is not simulated (no " << kSimulatedAnnotation
           << ": \"true\" annotation): left alone\n";
      continue;
    }
    absl::Status st = client_.Delete(Nodes(), "", name);
    if (st.ok()) {
      ++deleted;
    } else if (absl::IsNotFound(st)) {
      ++not_found;  // Gone since the list.
    } else {
      ++failed;
      if (first_error.ok()) first_error = st;
    }
  }
  out_ << spec.count << " simulated node(s): " << deleted << " deleted, " << not_found
       << " not found";
  if (foreign > 0) out_ << ", " << foreign << " not simulated (left alone)";
  if (failed > 0) out_ << ", " << failed << " failed";
  out_ << "\n";
  if (failed > 0) {
    return absl::Status(first_error.code(),
                        absl::StrCat(failed, " node(s) not deleted; the first error: ",
                                     first_error.message()));
  }
  if (foreign > 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(foreign, " node(s) of these names are not simulated and were not deleted"));
  }
  return absl::OkStatus();
}

}  // namespace batchd::cli
