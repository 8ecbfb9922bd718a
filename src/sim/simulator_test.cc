// The simulator end to end on small scenarios: the real controllers,
// admission and scheduler on the virtual clock; determinism; invariant
// violations injected and caught; bad objects refused before anything runs.
#include "sim/simulator.h"

#include <algorithm>
#include <ostream>
#include <streambuf>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/meta/object_meta.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace batchd::sim {
namespace {

using api::Json;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kCluster[] = R"(
apiVersion: v1
kind: Node
metadata: {name: node-1}
status:
  capacity: {cpu: "8", memory: 32Gi, pods: "110"}
  allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources:
      - {name: cpu, nominalQuota: "4"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: cq}
)";

std::string Job(const std::string& name, const std::string& cpu, const std::string& at,
                const std::string& duration) {
  return absl::StrCat(R"(
---
apiVersion: batch/v1
kind: Job
metadata:
  name: )", name, R"(
  labels: {kueue.x-k8s.io/queue-name: lq}
  annotations: {batchd.io/sim-create-at: ")", at, R"("}
spec:
  template:
    metadata: {annotations: {batchd.io/sim-duration: ")", duration, R"("}}
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox, resources: {requests: {cpu: ")", cpu, R"("}}}]
)");
}

std::string Scenario() {
  std::string s = kCluster;
  for (int i = 1; i <= 4; ++i) {
    s += Job(absl::StrCat("j", i), "2", absl::StrCat(i * 5, "s"), absl::StrCat(60 * i, "s"));
  }
  return s;
}

std::unique_ptr<Simulator> Load(const std::string& text, SimOptions o = {}) {
  auto objs = ParseScenario(text, "s.yaml", *api::BuiltinScheme());
  EXPECT_TRUE(objs.ok()) << objs.status();
  auto sim = Simulator::Create(o);
  EXPECT_TRUE(sim.ok()) << sim.status();
  auto st = (*sim)->Load(std::move(*objs));
  EXPECT_TRUE(st.ok()) << st;
  return std::move(*sim);
}

// The events of `name` as "t event" strings.
std::vector<std::string> EventsOf(const std::string& events, const std::string& kind,
                                  const std::string& name) {
  std::vector<std::string> out;
  for (absl::string_view line : absl::StrSplit(events, '\n', absl::SkipEmpty())) {
    Json e = Json::parse(std::string(line));
    if (e["kind"] == kind && e["name"] == name) {
      out.push_back(absl::StrCat(e["t"].dump(), " ", e["event"].get<std::string>()));
    }
  }
  return out;
}

TEST(SimulatorTest, QueueingRunsToCompletionOnTheVirtualClock) {
  auto sim = Load(Scenario());
  ASSERT_TRUE(sim->Run().ok());
  EXPECT_TRUE(sim->finished());
  // j1 (5s, 60s) and j2 (10s, 120s) fit the 4 CPUs; j3 waits for j1 to finish
  // at 65s, j4 for j2 at 130s.
  EXPECT_THAT(EventsOf(sim->Events(), "Job", "j1"),
              ::testing::ElementsAre("5 Created", "65 Finished"));
  EXPECT_THAT(EventsOf(sim->Events(), "Job", "j3"),
              ::testing::ElementsAre("15 Created", "245 Finished"));
  std::string events = sim->Events();
  EXPECT_THAT(events, HasSubstr(R"({"t":65,"kind":"Workload","namespace":"default","name":"job-j3-)"));
  Json s = sim->Summary();
  EXPECT_EQ(s["workloads"]["admitted"], 4);
  EXPECT_EQ(s["workloads"]["finished"], 4);
  EXPECT_EQ(s["workloads"]["pendingAtEnd"], 0);
  EXPECT_EQ(s["makespanSeconds"], 365.0);  // 5s .. j4 admitted at 130s + 240s.
  EXPECT_EQ(s["clusterQueues"][0]["name"], "cq");
  EXPECT_EQ(s["clusterQueues"][0]["waitSeconds"]["max"], 110.0);  // j4: created 20s, admitted 130s.
  EXPECT_GT(s["clusterQueues"][0]["utilisation"]["default/cpu"].get<double>(), 0.5);
  EXPECT_EQ(s["jobs"]["Job"]["succeeded"], 4);
  std::string svg = sim->Svg();
  EXPECT_THAT(svg, HasSubstr("<svg"));
  EXPECT_THAT(svg, HasSubstr(">cq (pending max 2)</text>"));
  EXPECT_THAT(svg, HasSubstr("<path d=\"M"));
  EXPECT_THAT(sim->Table(), HasSubstr("cq                              4        0        0        4"));
}

// The ClusterQueue's status is written once per virtual instant (after the
// controllers settled), not after each queue manager cycle, and is current
// at the end of every step.
TEST(SimulatorTest, QueueStatusWrittenOncePerInstant) {
  auto sim = Load(Scenario());
  const api::KindDef& cqs = sim->client().Kind("kueue.x-k8s.io", "v1beta2", "clusterqueues");
  auto watch = sim->client().Watch(cqs, "", {}, "");
  ASSERT_TRUE(watch.ok()) << watch.status();
  auto status_of_cq = [&]() {
    auto cq = sim->client().Get(cqs, "", "cq");
    EXPECT_TRUE(cq.ok()) << cq.status();
    const Json& st = (*cq)["status"];
    return absl::StrCat(st.value("pendingWorkloads", -1), " pending, ",
                        st.value("admittedWorkloads", -1), " admitted");
  };
  // At 20s j1 and j2 run (4 CPUs), j3 and j4 wait.
  while (sim->Elapsed() < absl::Seconds(20)) ASSERT_TRUE(sim->Step().ok());
  ASSERT_TRUE(sim->Step().ok());  // The step at 20s.
  EXPECT_EQ(status_of_cq(), "2 pending, 2 admitted");
  ASSERT_TRUE(sim->Run().ok());
  EXPECT_EQ(status_of_cq(), "0 pending, 0 admitted");
  // Status writes: versions whose status differs from the one before (the
  // resource-in-use finalizer is a write too).
  int writes = 0;
  Json last;
  client::WatchEvent ev;
  while ((*watch)->Next(&ev, absl::ZeroDuration())) {
    const Json status = ev.Object().value("status", Json::object());
    writes += ev.type == "MODIFIED" && status != last;
    last = status;
  }
  EXPECT_GT(writes, 0);
  EXPECT_LE(writes, sim->Summary()["engine"]["steps"].get<int>());
}

TEST(SimulatorTest, SameScenarioAndSeedGiveIdenticalOutput) {
  std::string out[2];
  for (std::string& o : out) {
    auto sim = Load(Scenario());
    ASSERT_TRUE(sim->Run().ok());
    auto state = sim->State();
    ASSERT_TRUE(state.ok());
    o = sim->Events() + *state + sim->Summary().dump();
  }
  EXPECT_EQ(out[0], out[1]);
  EXPECT_THAT(out[0], HasSubstr("\"uid\""));
}

// The events streamed as they happen are the events kept in memory, byte for
// byte, and the simulator holds at most a chunk (plus the event that filled
// it) between writes; without events nothing is kept and the summary is the
// same.
TEST(SimulatorTest, StreamedEventsAreTheKeptEventsHeldAChunkAtATime) {
  // Records each write the simulator makes to the stream.
  class Recorder : public std::streambuf {
   public:
    std::vector<size_t> writes;
    std::string bytes;

   protected:
    std::streamsize xsputn(const char* s, std::streamsize n) override {
      writes.push_back(static_cast<size_t>(n));
      bytes.append(s, static_cast<size_t>(n));
      return n;
    }
    int_type overflow(int_type c) override {
      if (c != traits_type::eof()) xsputn(reinterpret_cast<const char*>(&c), 1);
      return c;
    }
  };
  auto kept = Load(Scenario());
  ASSERT_TRUE(kept->Run().ok());
  const std::string all = kept->Events();
  ASSERT_GT(all.size(), 1000u);
  size_t longest = 0;
  for (absl::string_view line : absl::StrSplit(all, '\n')) longest = std::max(longest, line.size());

  Recorder rec;
  std::ostream out(&rec);
  SimOptions o;
  o.events = SimOptions::EventsMode::kStream;
  o.events_to = &out;
  o.events_chunk = 256;
  auto streamed = Load(Scenario(), o);
  ASSERT_TRUE(streamed->Run().ok());
  EXPECT_EQ(streamed->Events(), "");  // Nothing kept for Events().
  ASSERT_TRUE(streamed->FlushEvents().ok());
  EXPECT_EQ(rec.bytes, all);
  EXPECT_GT(rec.writes.size(), all.size() / (256 + longest + 1));
  for (size_t n : rec.writes) EXPECT_LE(n, 256 + longest + 1);
  EXPECT_EQ(streamed->Summary().dump(), kept->Summary().dump());

  // A stream that fails is reported.
  out.setstate(std::ios::badbit);
  EXPECT_FALSE(streamed->FlushEvents().ok());

  SimOptions none;
  none.events = SimOptions::EventsMode::kNone;
  auto quiet = Load(Scenario(), none);
  ASSERT_TRUE(quiet->Run().ok());
  EXPECT_EQ(quiet->Events(), "");
  EXPECT_TRUE(quiet->FlushEvents().ok());
  EXPECT_EQ(quiet->Summary().dump(), kept->Summary().dump());
}

// Dropping finished Jobs (with their Workloads and Pods) changes neither the
// events nor the summary's behaviour; it only empties the store of them.
TEST(SimulatorTest, DroppingFinishedWorkKeepsEventsAndSummary) {
  std::string events[2], state[2];
  Json summary[2];
  for (int drop = 0; drop < 2; ++drop) {
    SimOptions o;
    o.drop_finished = drop == 1;
    auto sim = Load(Scenario(), o);
    ASSERT_TRUE(sim->Run().ok());
    EXPECT_TRUE(sim->finished());
    events[drop] = sim->Events();
    summary[drop] = sim->Summary();
    summary[drop].erase("engine");  // Deleting takes reconciles.
    summary[drop].erase("k8sEvents");
    auto st = sim->State();
    ASSERT_TRUE(st.ok());
    state[drop] = *st;
  }
  EXPECT_EQ(events[0], events[1]);
  EXPECT_EQ(summary[0].dump(), summary[1].dump());
  EXPECT_EQ(summary[1]["workloads"]["finished"], 4);
  // Kept: the Jobs, their Workloads and Pods are in the state; dropped: gone.
  EXPECT_THAT(state[0], HasSubstr("\"name\": \"j1\""));
  EXPECT_THAT(state[0], HasSubstr("\"kind\": \"Workload\""));
  EXPECT_THAT(state[0], HasSubstr("\"kind\": \"Pod\""));
  EXPECT_THAT(state[1], Not(HasSubstr("\"name\": \"j1\"")));
  EXPECT_THAT(state[1], Not(HasSubstr("\"kind\": \"Workload\"")));
  EXPECT_THAT(state[1], Not(HasSubstr("\"kind\": \"Pod\"")));
  EXPECT_THAT(state[1], HasSubstr("\"kind\": \"Node\""));
}

TEST(SimulatorTest, NeverFinishingWorkEndsAtUntilWithThePendingListed) {
  SimOptions o;
  o.until = absl::Hours(1);
  auto sim = Load(std::string(kCluster) + Job("huge", "6", "0s", "10s"), o);
  ASSERT_TRUE(sim->Run().ok());
  EXPECT_FALSE(sim->finished());
  EXPECT_EQ(sim->Elapsed(), absl::Hours(1));
  Json s = sim->Summary();
  EXPECT_EQ(s["finished"], false);
  EXPECT_EQ(s["workloads"]["pendingAtEnd"], 1);
  std::string pending = s["pending"].dump();
  EXPECT_THAT(pending, HasSubstr("\"kind\":\"Job\""));
  EXPECT_THAT(pending, HasSubstr("\"name\":\"huge\""));
  EXPECT_THAT(pending, HasSubstr("job-huge-"));
  EXPECT_THAT(sim->Table(), HasSubstr("pending at the end: 2"));
}

TEST(SimulatorTest, NodeOverAllocatableIsCaught) {
  // A pod created with spec.nodeName bypasses the scheduler; the simulated
  // kubelet runs it, and the node is then over its 8 CPUs.
  std::string s = std::string(kCluster) + Job("j1", "4", "0s", "100s") + R"(
---
apiVersion: v1
kind: Pod
metadata:
  name: squatter
  annotations: {batchd.io/sim-create-at: "30s", batchd.io/sim-duration: "1h"}
spec:
  nodeName: node-1
  containers: [{name: c, image: x, resources: {requests: {cpu: "6"}}}]
)";
  auto sim = Load(s);
  absl::Status st = sim->Run();
  ASSERT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;
  EXPECT_THAT(st.message(), HasSubstr("invariant violated at t=30s"));
  EXPECT_THAT(st.message(), HasSubstr("node node-1 over allocatable: cpu requested 10 > "
                                      "allocatable 8"));
  EXPECT_THAT(st.message(), HasSubstr("default/squatter"));
}

TEST(SimulatorTest, QuotaViolationInjectedIsCaught) {
  auto sim = Load(Scenario());
  // Run to 20s: j1 and j2 admitted, j3 pending.
  while (sim->Elapsed() < absl::Seconds(20)) ASSERT_TRUE(sim->Step().ok());
  const api::KindDef& wk = sim->client().Kind("kueue.x-k8s.io", "v1beta2", "workloads");
  auto list = sim->client().List(wk, "default");
  ASSERT_TRUE(list.ok());
  Json victim;
  for (const Json& w : list->items) {
    if (!w.value("status", Json::object()).contains("admission")) victim = w;
  }
  ASSERT_FALSE(victim.is_null());
  // Write an admission the queue manager never decided: 2 more CPUs in cq.
  Json admitted = list->items[0];
  victim["status"]["admission"] = admitted["status"]["admission"];
  for (const Json& c : admitted["status"]["conditions"]) {
    if (c["type"] == "QuotaReserved") victim["status"]["conditions"].push_back(c);
  }
  auto r = sim->client().UpdateStatus(wk, victim);
  ASSERT_TRUE(r.ok()) << r.status();
  absl::Status st;
  for (int i = 0; i < 3 && st.ok(); ++i) st = sim->Step().status();
  ASSERT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;
  EXPECT_THAT(st.message(), HasSubstr("ClusterQueue cq over quota: default/cpu admitted 6 > "
                                      "nominal 4"));
  EXPECT_THAT(st.message(), HasSubstr(api::meta::GetName(victim)));
  EXPECT_THAT(st.message(), HasSubstr("invariant violated at t="));
}

TEST(SimulatorTest, InvalidObjectStopsBeforeAnythingRuns) {
  std::string s = std::string(kCluster) + R"(
---
apiVersion: batch/v1
kind: Job
metadata: {name: bad}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main}]
)";
  auto objs = ParseScenario(s, "s.yaml", *api::BuiltinScheme());
  ASSERT_TRUE(objs.ok());
  auto sim = Simulator::Create({});
  ASSERT_TRUE(sim.ok());
  absl::Status st = (*sim)->Load(std::move(*objs));
  ASSERT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("s.yaml: document 5 (Job bad): "));
  EXPECT_THAT(st.message(), HasSubstr("spec.template.spec.containers[0].image: Required value"));
  EXPECT_EQ((*sim)->Events(), "");
}

}  // namespace
}  // namespace batchd::sim
