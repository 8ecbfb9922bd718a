#include "sim/scenario.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "agent/sim/go_duration.h"
#include "api/codec/codec.h"
#include "api/meta/object_meta.h"
#include "api/resource/quantity.h"
#include "common/string_view.h"

namespace batchd::sim {

using api::Json;

namespace {

absl::Status DocError(const ScenarioObject& o, absl::string_view field, absl::string_view msg) {
  return absl::InvalidArgumentError(
      absl::StrCat(o.source, ": ", o.Where(), ": ", field, ": ", msg));
}

// Checks the simulator annotations of one annotations object at `path`.
absl::Status CheckPodAnnotations(const ScenarioObject& o, const Json& meta,
                                 const std::string& path) {
  if (!meta.is_object()) return absl::OkStatus();
  auto it = meta.find("annotations");
  if (it == meta.end() || !it->is_object()) return absl::OkStatus();
  const Json& ann = *it;
  if (auto d = ann.find("batchd.io/sim-duration"); d != ann.end()) {
    std::string field = path + ".annotations[batchd.io/sim-duration]";
    if (!d->is_string()) return DocError(o, field, "Invalid value: must be a string");
    auto v = agent::sim::ParseGoDuration(d->get<std::string>());
    if (!v.ok()) {
      return DocError(o, field,
                      absl::StrCat("Invalid value: \"", d->get<std::string>(), "\": ",
                                   v.status().message()));
    }
    if (*v < absl::ZeroDuration()) {
      return DocError(o, field,
                      absl::StrCat("Invalid value: \"", d->get<std::string>(),
                                   "\": must be greater than or equal to 0"));
    }
  }
  if (auto e = ann.find("batchd.io/sim-exit-code"); e != ann.end()) {
    std::string field = path + ".annotations[batchd.io/sim-exit-code]";
    int code = 0;
    if (!e->is_string() || !absl::SimpleAtoi(e->get<std::string>(), &code) || code < 0 ||
        code > 255) {
      return DocError(o, field,
                      absl::StrCat("Invalid value: ", e->dump(), ": must be an integer 0-255"));
    }
  }
  return absl::OkStatus();
}

const Json* Path(const Json& j, std::initializer_list<const char*> keys) {
  const Json* cur = &j;
  for (const char* k : keys) {
    if (!cur->is_object()) return nullptr;
    auto it = cur->find(k);
    if (it == cur->end()) return nullptr;
    cur = &*it;
  }
  return cur;
}

// The pod templates of an object, each with its metadata's field path.
absl::Status CheckTemplates(const ScenarioObject& o) {
  const Json& obj = o.object;
  std::string kind = obj.value("kind", "");
  if (kind == "Pod") return CheckPodAnnotations(o, obj["metadata"], "metadata");
  if (kind == "Job") {
    if (const Json* m = Path(obj, {"spec", "template", "metadata"})) {
      return CheckPodAnnotations(o, *m, "spec.template.metadata");
    }
  }
  if (kind == "CronJob") {
    if (const Json* m = Path(obj, {"spec", "jobTemplate", "spec", "template", "metadata"})) {
      return CheckPodAnnotations(o, *m, "spec.jobTemplate.spec.template.metadata");
    }
  }
  if (kind == "JobSet") {
    const Json* rjs = Path(obj, {"spec", "replicatedJobs"});
    if (rjs && rjs->is_array()) {
      for (size_t i = 0; i < rjs->size(); ++i) {
        if (const Json* m = Path((*rjs)[i], {"template", "spec", "template", "metadata"})) {
          auto st = CheckPodAnnotations(
              o, *m, absl::StrCat("spec.replicatedJobs[", i, "].template.spec.template.metadata"));
          if (!st.ok()) return st;
        }
      }
    }
  }
  return absl::OkStatus();
}

// Splits "a,b,\"c,d\"" (RFC 4180 quotes) into fields.
std::vector<std::string> SplitCsv(absl::string_view line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  for (auto& f : out) f = std::string(absl::StripAsciiWhitespace(f));
  return out;
}

const std::set<std::string>& TraceColumns() {
  static const auto* k = new std::set<std::string>{
      "submit", "queue", "namespace", "pods", "cpu", "memory", "gpu",
      "requests", "duration", "priority", "exit_code", "name"};
  return *k;
}

// One trace row (column -> text) to objects.
absl::Status TraceRow(const std::map<std::string, std::string>& row, const std::string& source,
                      int line, std::set<int64_t>& priorities, std::vector<ScenarioObject>& out) {
  auto err = [&](absl::string_view col, absl::string_view msg) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": line ", line, ": ", col, ": ", msg));
  };
  auto get = [&](const char* k) -> std::string {
    auto it = row.find(k);
    return it == row.end() ? "" : it->second;
  };
  for (const auto& [k, v] : row) {
    if (!TraceColumns().count(k)) return err(k, "unknown column");
  }
  for (const char* req : {"submit", "queue", "duration"}) {
    if (get(req).empty()) return err(req, "Required value");
  }
  auto submit = ParseSimDuration(get("submit"));
  if (!submit.ok()) return err("submit", absl::StrCat("Invalid value: \"", get("submit"), "\": ", submit.status().message()));
  if (*submit < absl::ZeroDuration()) return err("submit", "must be greater than or equal to 0");
  auto duration = ParseSimDuration(get("duration"));
  if (!duration.ok()) return err("duration", absl::StrCat("Invalid value: \"", get("duration"), "\": ", duration.status().message()));
  if (*duration < absl::ZeroDuration()) {
    return err("duration", absl::StrCat("Invalid value: \"", get("duration"), "\": must be greater than or equal to 0"));
  }
  int pods = 1;
  if (!get("pods").empty() && (!absl::SimpleAtoi(get("pods"), &pods) || pods < 1)) {
    return err("pods", absl::StrCat("Invalid value: \"", get("pods"), "\": must be a positive integer"));
  }
  int exit_code = 0;
  if (!get("exit_code").empty() &&
      (!absl::SimpleAtoi(get("exit_code"), &exit_code) || exit_code < 0 || exit_code > 255)) {
    return err("exit_code", absl::StrCat("Invalid value: \"", get("exit_code"), "\": must be an integer 0-255"));
  }
  Json requests = Json::object();
  auto add = [&](const std::string& name, const std::string& qty, absl::string_view col) -> absl::Status {
    if (qty.empty()) return absl::OkStatus();
    auto q = api::Quantity::Parse(qty);
    if (!q.ok()) return err(col, absl::StrCat("Invalid value: \"", qty, "\": quantities must match the regular expression"));
    requests[name] = qty;
    return absl::OkStatus();
  };
  if (auto st = add("cpu", get("cpu"), "cpu"); !st.ok()) return st;
  if (auto st = add("memory", get("memory"), "memory"); !st.ok()) return st;
  if (auto st = add("nvidia.com/gpu", get("gpu"), "gpu"); !st.ok()) return st;
  if (!get("requests").empty()) {
    for (absl::string_view kv : absl::StrSplit(get("requests"), ';', absl::SkipWhitespace())) {
      std::pair<std::string, std::string> p = absl::StrSplit(kv, absl::MaxSplits('=', 1));
      p.first = std::string(absl::StripAsciiWhitespace(p.first));
      p.second = std::string(absl::StripAsciiWhitespace(p.second));
      if (p.first.empty() || p.second.empty()) {
        return err("requests", absl::StrCat("Invalid value: \"", kv, "\": want name=quantity"));
      }
      if (auto st = add(p.first, p.second, "requests"); !st.ok()) return st;
    }
  }
  if (requests.empty()) return err("cpu", "Required value: a trace row needs at least one request");
  std::string ns = get("namespace").empty() ? "default" : get("namespace");
  std::string name = get("name").empty() ? absl::StrCat("trace-", line) : get("name");
  Json labels = {{"kueue.x-k8s.io/queue-name", get("queue")}};
  std::string prio = get("priority");
  if (!prio.empty()) {
    int64_t p = 0;
    if (absl::SimpleAtoi(prio, &p)) {
      std::string pc = absl::StrCat("trace-priority-", p < 0 ? "m" : "", p < 0 ? -p : p);
      if (priorities.insert(p).second) {
        ScenarioObject wpc;
        wpc.line = line;
        wpc.source = source;
        wpc.create_at = absl::ZeroDuration();
        wpc.object = {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
                      {"kind", "WorkloadPriorityClass"},
                      {"metadata", {{"name", pc}}},
                      {"value", p}};
        out.push_back(std::move(wpc));
      }
      prio = pc;
    }
    labels["kueue.x-k8s.io/priority-class"] = prio;
  }
  // Extended resources (GPUs) cannot be overcommitted: their limits are
  // required and equal to the requests.
  Json limits = Json::object();
  for (auto it = requests.begin(); it != requests.end(); ++it) {
    if (it.key() != "cpu" && it.key() != "memory" && it.key() != "ephemeral-storage") {
      limits[it.key()] = *it;
    }
  }
  Json resources = {{"requests", requests}};
  if (!limits.empty()) resources["limits"] = limits;
  Json annotations = {{"batchd.io/sim-duration", absl::FormatDuration(*duration)}};
  if (*duration == absl::ZeroDuration()) annotations["batchd.io/sim-duration"] = "0s";
  if (exit_code != 0) annotations["batchd.io/sim-exit-code"] = std::to_string(exit_code);
  Json job = {
      {"apiVersion", "batch/v1"},
      {"kind", "Job"},
      {"metadata", {{"name", name}, {"namespace", ns}, {"labels", labels}}},
      {"spec",
       {{"parallelism", pods},
        {"completions", pods},
        {"backoffLimit", 0},
        {"template",
         {{"metadata", {{"annotations", annotations}}},
          {"spec",
           {{"restartPolicy", "Never"},
            {"containers",
             Json::array({{{"name", "main"},
                           {"image", "trace"},
                           {"resources", resources}}})}}}}}}}};
  ScenarioObject o;
  o.line = line;
  o.source = source;
  o.create_at = *submit;
  o.object = std::move(job);
  out.push_back(std::move(o));
  return absl::OkStatus();
}

}  // namespace

std::string ScenarioObject::Where() const {
  if (document == 0) return absl::StrCat("line ", line);
  std::string kind = object.is_object() ? object.value("kind", "") : "";
  std::string ns = api::meta::GetNamespace(object);
  std::string name = api::meta::GetName(object);
  if (name.empty() && object.is_object() && object.contains("metadata") &&
      object["metadata"].is_object()) {
    name = object["metadata"].value("generateName", "");
  }
  if (kind.empty()) return absl::StrCat("document ", document);
  return absl::StrCat("document ", document, " (", kind, " ", ns.empty() ? "" : ns + "/", name,
                      ")");
}

absl::StatusOr<absl::Duration> ParseSimDuration(std::string_view s_in) {
  absl::string_view s = Sv(s_in);
  double secs = 0;
  if (absl::SimpleAtod(s, &secs)) {
    if (!(secs > -1e12 && secs < 1e12)) return absl::InvalidArgumentError("out of range");
    return absl::Nanoseconds(static_cast<int64_t>(secs * 1e9 + (secs < 0 ? -0.5 : 0.5)));
  }
  return agent::sim::ParseGoDuration(s_in);
}

absl::StatusOr<std::vector<ScenarioObject>> ParseScenario(std::string_view text_in,
                                                          const std::string& source,
                                                          const api::Scheme& scheme) {
  absl::string_view text = Sv(text_in);
  // Parse documents one by one, so a syntax error names its document.
  std::vector<std::string> docs;
  {
    std::string cur;
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      absl::string_view t = absl::StripTrailingAsciiWhitespace(line);
      if (t == "---" || absl::StartsWith(t, "--- ")) {
        docs.push_back(std::move(cur));
        cur.clear();
        continue;
      }
      cur.append(line.data(), line.size());
      cur += '\n';
    }
    docs.push_back(std::move(cur));
  }
  std::vector<ScenarioObject> out;
  int number = 0;
  for (const std::string& d : docs) {
    auto parsed = api::ParseYaml(d);
    ScenarioObject o;
    o.source = source;
    if (parsed.ok() && parsed->is_null()) continue;  // Empty documents are skipped, as kubectl does.
    o.document = ++number;
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ": document ", o.document, ": ", parsed.status().message()));
    }
    o.object = std::move(*parsed);
    if (!o.object.is_object()) return DocError(o, "<root>", "not an object");
    if (o.object.value("kind", "") == "List" && o.object.contains("items")) {
      return DocError(o, "kind", "Unsupported value: \"List\": write one object per document");
    }
    if (!o.object.contains("apiVersion") || !o.object["apiVersion"].is_string()) {
      return DocError(o, "apiVersion", "Required value");
    }
    if (!o.object.contains("kind") || !o.object["kind"].is_string()) {
      return DocError(o, "kind", "Required value");
    }
    std::string av = o.object["apiVersion"];
    std::string group, version = av;
    if (auto slash = av.find('/'); slash != std::string::npos) {
      group = av.substr(0, slash);
      version = av.substr(slash + 1);
    }
    if (scheme.ByKind(group, version, o.object["kind"].get<std::string>()) == nullptr) {
      return DocError(o, "kind",
                      absl::StrCat("Unsupported value: no kind \"", o.object["kind"].get<std::string>(),
                                   "\" is registered for version \"", av, "\""));
    }
    if (auto at = api::meta::GetAnnotation(o.object, kCreateAtAnnotation)) {
      std::string field = absl::StrCat("metadata.annotations[", kCreateAtAnnotation, "]");
      auto dur = agent::sim::ParseGoDuration(*at);
      if (!dur.ok()) {
        return DocError(o, field, absl::StrCat("Invalid value: \"", *at, "\": ", dur.status().message()));
      }
      if (*dur < absl::ZeroDuration()) {
        return DocError(o, field,
                        absl::StrCat("Invalid value: \"", *at, "\": must be greater than or equal to 0"));
      }
      o.create_at = *dur;
    } else if (o.object.contains("metadata") && o.object["metadata"].is_object() &&
               o.object["metadata"].contains("annotations") &&
               o.object["metadata"]["annotations"].is_object() &&
               o.object["metadata"]["annotations"].contains(kCreateAtAnnotation)) {
      return DocError(o, absl::StrCat("metadata.annotations[", kCreateAtAnnotation, "]"),
                      "Invalid value: must be a string");
    }
    if (auto st = CheckTemplates(o); !st.ok()) return st;
    out.push_back(std::move(o));
  }
  return out;
}

absl::StatusOr<std::vector<ScenarioObject>> ParseTrace(std::string_view text_in,
                                                       const std::string& source) {
  absl::string_view text = Sv(text_in);
  std::vector<ScenarioObject> out;
  std::set<int64_t> priorities;
  absl::string_view first = absl::StripLeadingAsciiWhitespace(text);
  bool jsonl = !first.empty() && first[0] == '{';
  std::vector<std::string> header;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    absl::string_view t = absl::StripAsciiWhitespace(line);
    if (t.empty() || t[0] == '#') continue;
    std::map<std::string, std::string> row;
    if (jsonl) {
      auto j = api::ParseJson(std::string_view(t.data(), t.size()));
      if (!j.ok() || !j->is_object()) {
        return absl::InvalidArgumentError(absl::StrCat(
            source, ": line ", line_no, ": not a JSON object",
            j.ok() ? "" : absl::StrCat(": ", j.status().message())));
      }
      for (auto it = j->begin(); it != j->end(); ++it) {
        if (it->is_string()) {
          row[it.key()] = it->get<std::string>();
        } else if (it->is_number() || it->is_boolean()) {
          row[it.key()] = it->dump();
        } else if (it->is_object() && it.key() == "requests") {
          std::string joined;
          for (auto r = it->begin(); r != it->end(); ++r) {
            if (!joined.empty()) joined += ';';
            joined += r.key() + "=" + (r->is_string() ? r->get<std::string>() : r->dump());
          }
          row["requests"] = joined;
        } else if (!it->is_null()) {
          return absl::InvalidArgumentError(absl::StrCat(source, ": line ", line_no, ": ",
                                                         it.key(), ": Invalid value: wrong type"));
        }
      }
    } else if (header.empty()) {
      header = SplitCsv(t);
      for (const std::string& h : header) {
        if (!TraceColumns().count(h)) {
          return absl::InvalidArgumentError(
              absl::StrCat(source, ": line ", line_no, ": ", h, ": unknown column"));
        }
      }
      for (const char* req : {"submit", "queue", "duration"}) {
        if (std::find(header.begin(), header.end(), req) == header.end()) {
          return absl::InvalidArgumentError(absl::StrCat(
              source, ": line ", line_no, ": ", req, ": Required value: missing column"));
        }
      }
      continue;
    } else {
      std::vector<std::string> fields = SplitCsv(t);
      if (fields.size() != header.size()) {
        return absl::InvalidArgumentError(absl::StrCat(source, ": line ", line_no, ": has ",
                                                       fields.size(), " columns, the header ",
                                                       header.size()));
      }
      for (size_t i = 0; i < fields.size(); ++i) {
        if (!fields[i].empty()) row[header[i]] = fields[i];
      }
    }
    if (auto st = TraceRow(row, source, line_no, priorities, out); !st.ok()) return st;
  }
  return out;
}

}  // namespace batchd::sim
