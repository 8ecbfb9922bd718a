#include "sim/simulate_command.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "agent/sim/go_duration.h"
#include "api/kind.h"
#include "sim/simulator.h"

namespace batchd::sim {

namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path, const char* flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat(flag, ": cannot read ", path));
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

// Moves a finished FILE.tmp over FILE, so no reader sees it half-written.
absl::Status RenameInto(const std::string& tmp, const std::string& path) {
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return absl::InternalError("cannot rename " + tmp + " to " + path + ": " + ec.message());
  return absl::OkStatus();
}

// Writes `text` to `path` through a temporary file and a rename, so a reader
// never sees half a file.
absl::Status WriteFile(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return absl::InternalError("cannot write " + tmp);
    out << text;
    out.flush();
    if (!out) return absl::InternalError("cannot write " + tmp);
  }
  return RenameInto(tmp, path);
}

// --until: a Go duration, or whole days ("30d").
absl::StatusOr<absl::Duration> ParseUntil(const std::string& s) {
  if (s.empty()) return absl::Hours(24 * 30);
  if (s.size() > 1 && s.back() == 'd') {
    int64_t days = 0;
    if (absl::SimpleAtoi(s.substr(0, s.size() - 1), &days) && days > 0 && days < 100000) {
      return absl::Hours(24 * days);
    }
  }
  auto d = agent::sim::ParseGoDuration(s);
  if (!d.ok()) return absl::InvalidArgumentError(absl::StrCat("--until: ", d.status().message()));
  if (*d <= absl::ZeroDuration()) return absl::InvalidArgumentError("--until: must be positive");
  return *d;
}

absl::StatusOr<controllers::queueing::QueueingConfig> LoadConfig(const std::string& path,
                                                                  const char* flag) {
  if (path.empty()) return controllers::queueing::QueueingConfig{};
  auto text = ReadFile(path, flag);
  if (!text.ok()) return text.status();
  auto cfg = controllers::queueing::ParseQueueingConfig(*text);
  if (!cfg.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " ", path, ": ", cfg.status().message()));
  }
  return cfg;
}

struct RunResult {
  std::unique_ptr<Simulator> sim;
  absl::Status status;  // Of Run.
  double wall_seconds = 0;
};

// Creates, loads and runs one simulator; a non-OK return is bad input.
absl::StatusOr<RunResult> RunOne(const SimOptions& opts, std::vector<ScenarioObject> objects) {
  auto sim = Simulator::Create(opts);
  if (!sim.ok()) return absl::InternalError(std::string(sim.status().message()));
  if (auto st = (*sim)->Load(std::move(objects)); !st.ok()) return st;
  RunResult r;
  auto t0 = std::chrono::steady_clock::now();
  r.status = (*sim)->Run();
  r.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.sim = std::move(*sim);
  return r;
}

std::string CompareTable(const api::Json& a, const api::Json& b, const std::string& name_a,
                         const std::string& name_b) {
  std::string out = absl::StrFormat("comparison: A = %s, B = %s\n", name_a, name_b);
  auto num = [](const api::Json& j, std::initializer_list<const char*> path) -> double {
    const api::Json* cur = &j;
    for (const char* p : path) {
      if (!cur->is_object() || !cur->contains(p)) return 0;
      cur = &(*cur)[p];
    }
    return cur->is_number() ? cur->get<double>() : 0;
  };
  auto row = [&](const std::string& label, double x, double y) {
    absl::StrAppendFormat(&out, "  %-44s %12.6g %12.6g %+12.6g\n", label, x, y, y - x);
  };
  absl::StrAppendFormat(&out, "  %-44s %12s %12s %12s\n", "", "A", "B", "B-A");
  row("makespan (s)", num(a, {"makespanSeconds"}), num(b, {"makespanSeconds"}));
  row("admitted", num(a, {"workloads", "admitted"}), num(b, {"workloads", "admitted"}));
  row("preempted", num(a, {"workloads", "preempted"}), num(b, {"workloads", "preempted"}));
  row("evicted", num(a, {"workloads", "evicted"}), num(b, {"workloads", "evicted"}));
  row("pending at end", num(a, {"workloads", "pendingAtEnd"}),
      num(b, {"workloads", "pendingAtEnd"}));
  for (const char* p : {"p50", "p90", "p99"}) {
    row(absl::StrCat("wait ", p, " (s)"), num(a, {"workloads", "waitSeconds", p}),
        num(b, {"workloads", "waitSeconds", p}));
  }
  std::map<std::string, std::pair<const api::Json*, const api::Json*>> cqs;
  for (const auto& q : a["clusterQueues"]) cqs[q["name"]].first = &q;
  for (const auto& q : b["clusterQueues"]) cqs[q["name"]].second = &q;
  static const api::Json kNull = api::Json::object();
  for (const auto& [name, pair] : cqs) {
    const api::Json& qa = pair.first ? *pair.first : kNull;
    const api::Json& qb = pair.second ? *pair.second : kNull;
    row(name + " admitted", num(qa, {"admitted"}), num(qb, {"admitted"}));
    row(name + " preempted", num(qa, {"preempted"}), num(qb, {"preempted"}));
    row(name + " wait p90 (s)", num(qa, {"waitSeconds", "p90"}), num(qb, {"waitSeconds", "p90"}));
    std::set<std::string> keys;
    for (const api::Json* q : {&qa, &qb}) {
      if (q->contains("utilisation")) {
        for (auto it = (*q)["utilisation"].begin(); it != (*q)["utilisation"].end(); ++it) {
          keys.insert(it.key());
        }
      }
    }
    for (const auto& k : keys) {
      row(name + " util " + k, num(qa, {"utilisation", k.c_str()}),
          num(qb, {"utilisation", k.c_str()}));
    }
  }
  return out;
}

}  // namespace

int RunSimulate(const SimulateCommand& cmd) {
  // One thread takes every lock: Abseil's lock-order (deadlock) detection,
  // on in Debian's build, would cost ~9% of the run and can find nothing.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  auto bad = [](const absl::Status& s) {
    std::cerr << "batchd simulate: " << s.message() << "\n";
    return 2;
  };
  if (cmd.scenario.empty() && cmd.trace.empty()) {
    return bad(absl::InvalidArgumentError("-f scenario.yaml (or --trace FILE) is required"));
  }
  std::vector<ScenarioObject> objects;
  if (!cmd.scenario.empty()) {
    auto text = ReadFile(cmd.scenario, "-f");
    if (!text.ok()) return bad(text.status());
    auto objs = ParseScenario(*text, cmd.scenario, *api::BuiltinScheme());
    if (!objs.ok()) return bad(objs.status());
    objects = std::move(*objs);
  }
  if (!cmd.trace.empty()) {
    auto text = ReadFile(cmd.trace, "--trace");
    if (!text.ok()) return bad(text.status());
    auto objs = ParseTrace(*text, cmd.trace);
    if (!objs.ok()) return bad(objs.status());
    for (auto& o : *objs) objects.push_back(std::move(o));
  }
  SimOptions opts;
  // Events are written only to --events (below), and not for --compare's run.
  opts.events = SimOptions::EventsMode::kNone;
  auto until = ParseUntil(cmd.until);
  if (!until.ok()) return bad(until.status());
  opts.until = *until;
  opts.seed = cmd.seed;
  // --state lists every object at the end: finished work is kept for it.
  opts.drop_finished = cmd.state.empty();
  auto cfg = LoadConfig(cmd.config, "--config");
  if (!cfg.ok()) return bad(cfg.status());
  opts.queueing = *cfg;
  std::optional<SimOptions> other;
  if (!cmd.compare.empty()) {
    auto c2 = LoadConfig(cmd.compare, "--compare");
    if (!c2.ok()) return bad(c2.status());
    other = opts;
    other->queueing = *c2;
  }
  std::vector<ScenarioObject> objects_b;
  if (other) objects_b = objects;
  // --events is written as the run goes (to FILE.tmp, renamed at the end),
  // so a long run holds none of it in memory.
  std::ofstream events_out;
  const std::string events_tmp = cmd.events.empty() ? "" : cmd.events + ".tmp";
  struct RemoveUnlessKept {
    const std::string& path;
    bool keep = false;
    ~RemoveUnlessKept() {
      std::error_code ec;
      if (!keep && !path.empty()) std::filesystem::remove(path, ec);
    }
  } events_tmp_guard{events_tmp};
  if (!events_tmp.empty()) {
    events_out.open(events_tmp, std::ios::binary | std::ios::trunc);
    if (!events_out) {
      return bad(absl::InvalidArgumentError("--events: cannot write " + events_tmp));
    }
    opts.events = SimOptions::EventsMode::kStream;
    opts.events_to = &events_out;
  }
  auto run = RunOne(opts, std::move(objects));
  if (!run.ok()) {
    if (run.status().code() == absl::StatusCode::kInvalidArgument) return bad(run.status());
    std::cerr << "batchd simulate: " << run.status().message() << "\n";
    return 1;
  }
  Simulator& sim = *run->sim;
  api::Json summary = sim.Summary();
  int rc = 0;
  if (!run->status.ok()) {
    std::cerr << "batchd simulate: " << run->status.message() << "\n";
    rc = run->status.code() == absl::StatusCode::kFailedPrecondition ? 3 : 1;
    if (run->status.code() == absl::StatusCode::kInvalidArgument) rc = 2;
    summary["error"] = std::string(run->status.message());
  }
  std::optional<RunResult> run_b;
  if (other && rc == 0) {
    auto rb = RunOne(*other, std::move(objects_b));
    if (!rb.ok()) return bad(rb.status());
    run_b = std::move(*rb);
    if (!run_b->status.ok()) {
      std::cerr << "batchd simulate: --compare run: " << run_b->status.message() << "\n";
      rc = run_b->status.code() == absl::StatusCode::kFailedPrecondition ? 3 : 1;
    }
    summary["compare"] = run_b->sim->Summary();
  }
  auto write = [&](const std::string& path, const std::string& text) {
    if (path.empty()) return;
    if (auto st = WriteFile(path, text); !st.ok()) {
      std::cerr << "batchd simulate: " << st.message() << "\n";
      if (rc == 0) rc = 1;
    }
  };
  if (!cmd.events.empty()) {
    absl::Status st = sim.FlushEvents();
    events_out.close();
    if (st.ok() && !events_out) st = absl::InternalError("cannot write " + events_tmp);
    if (st.ok()) st = RenameInto(events_tmp, cmd.events);
    events_tmp_guard.keep = st.ok();
    if (!st.ok()) {
      std::cerr << "batchd simulate: --events: " << st.message() << "\n";
      if (rc == 0) rc = 1;
    }
  }
  if (!cmd.state.empty()) {
    auto state = sim.State();
    if (state.ok()) {
      write(cmd.state, *state);
    } else {
      std::cerr << "batchd simulate: --state: " << state.status().message() << "\n";
      rc = rc == 0 ? 1 : rc;
    }
  }
  write(cmd.summary, summary.dump(2) + "\n");
  write(cmd.plot, sim.Svg());
  if (!cmd.quiet) {
    std::cerr << sim.Table();
    std::cerr << absl::StrFormat("wall time %.3f s\n", run->wall_seconds);
    if (run_b) {
      std::cerr << CompareTable(summary, summary["compare"],
                                cmd.config.empty() ? "(default configuration)" : cmd.config,
                                cmd.compare);
    }
  }
  return rc;
}

}  // namespace batchd::sim
