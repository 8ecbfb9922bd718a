#include "agent/internal/pod_status.h"

#include "gtest/gtest.h"

namespace batchd::agent::internal {
namespace {

using api::Json;
using State = ContainerStatus::State;

const absl::Time kT0 = absl::FromUnixSeconds(1767225600);

ContainerStatus Running(const std::string& name) {
  ContainerStatus c;
  c.name = name;
  c.state = State::kRunning;
  c.started = true;
  c.ready = true;
  c.started_at = kT0;
  return c;
}
ContainerStatus Exited(const std::string& name, int code) {
  ContainerStatus c;
  c.name = name;
  c.state = State::kTerminated;
  c.exit_code = code;
  c.reason = code == 0 ? "Completed" : "Error";
  c.started_at = kT0;
  c.finished_at = kT0 + absl::Seconds(1);
  return c;
}
ContainerStatus Waiting(const std::string& name) {
  ContainerStatus c;
  c.name = name;
  return c;
}
ContainerStatus CrashLoop(const std::string& name, int last_code) {
  ContainerStatus c = Waiting(name);
  c.reason = "CrashLoopBackOff";
  c.restart_count = 1;
  c.last_terminated = TerminatedState{last_code, 0, last_code ? "Error" : "Completed", "",
                                      kT0, kT0 + absl::Seconds(1)};
  return c;
}

Json Spec(const std::string& policy, int apps, bool init = false) {
  Json s = {{"restartPolicy", policy}, {"containers", Json::array()}};
  for (int i = 0; i < apps; ++i) s["containers"].push_back({{"name", "c" + std::to_string(i)}});
  if (init) s["initContainers"] = Json::array({{{"name", "init"}}});
  return s;
}

PodSandboxStatus Rt(std::vector<ContainerStatus> app, std::vector<ContainerStatus> init = {},
                    bool finished = false) {
  PodSandboxStatus s;
  s.found = true;
  s.supervisor_alive = !finished;
  s.app = std::move(app);
  s.init = std::move(init);
  s.finished = finished;
  return s;
}

TEST(ComputePhaseTest, KubeletRulesPerRestartPolicy) {
  struct Case {
    std::string name;
    Json spec;
    PodSandboxStatus rt;
    std::string want;
  };
  std::vector<Case> cases = {
      {"nothing started", Spec("Never", 1), Rt({Waiting("c0")}), "Pending"},
      {"running", Spec("Never", 1), Rt({Running("c0")}), "Running"},
      {"one running one waiting", Spec("Never", 2), Rt({Running("c0"), Waiting("c1")}),
       "Pending"},
      {"never, success", Spec("Never", 1), Rt({Exited("c0", 0)}), "Succeeded"},
      {"never, failure", Spec("Never", 1), Rt({Exited("c0", 1)}), "Failed"},
      {"never, one of two failed", Spec("Never", 2), Rt({Exited("c0", 0), Exited("c1", 2)}),
       "Failed"},
      {"never, one still running", Spec("Never", 2), Rt({Exited("c0", 1), Running("c1")}),
       "Running"},
      {"onfailure, success", Spec("OnFailure", 1), Rt({Exited("c0", 0)}), "Succeeded"},
      {"onfailure, failure restarts", Spec("OnFailure", 1), Rt({Exited("c0", 1)}), "Running"},
      {"onfailure, crashloop", Spec("OnFailure", 1), Rt({CrashLoop("c0", 1)}), "Running"},
      {"always, exited 0 restarts", Spec("Always", 1), Rt({Exited("c0", 0)}), "Running"},
      {"init running", Spec("Never", 1, true), Rt({Waiting("c0")}, {Running("init")}), "Pending"},
      {"init failed, never", Spec("Never", 1, true), Rt({Waiting("c0")}, {Exited("init", 1)}),
       "Failed"},
      {"init failed, onfailure retries", Spec("OnFailure", 1, true),
       Rt({Waiting("c0")}, {Exited("init", 1)}), "Pending"},
      {"init done, app running", Spec("Never", 1, true),
       Rt({Running("c0")}, {Exited("init", 0)}), "Running"},
      {"stopped: killed is failed", Spec("Always", 1), Rt({Exited("c0", 137)}, {}, true),
       "Failed"},
      {"stopped: all succeeded", Spec("Always", 1), Rt({Exited("c0", 0)}, {}, true), "Succeeded"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(ComputePhase(c.spec, c.rt, c.rt.finished), c.want);
  }
}

// Controller-driven restarts (api/core/v1/restart_generation.h).
PodSandboxStatus Gen(PodSandboxStatus rt, int64_t generation, bool failed = false,
                     bool restarting = false, bool held = false) {
  rt.generation = generation;
  rt.failed = failed;
  rt.restarting = restarting;
  rt.held = held;
  return rt;
}
ContainerStatus Rerun(ContainerStatus c) {
  c.restart_count = 1;
  c.last_terminated = TerminatedState{143, 15, "Error", "", kT0, kT0 + absl::Seconds(1)};
  return c;
}

TEST(ComputePhaseTest, ControllerDrivenPodsStayRunningBetweenRuns) {
  struct Case {
    std::string name;
    Json spec;
    PodSandboxStatus rt;
    std::string want;
  };
  std::vector<Case> cases = {
      {"a failed container waits: Running, not Failed", Spec("Never", 2),
       Gen(Rt({Exited("c0", 3), Running("c1")}), 0, true), "Running"},
      {"every container failed, waiting", Spec("Never", 1), Gen(Rt({Exited("c0", 3)}), 0, true),
       "Running"},
      {"a failed init container waits too", Spec("Never", 1, true),
       Gen(Rt({Waiting("c0")}, {Exited("init", 1)}), 0, true), "Pending"},
      {"stopping for the next generation", Spec("Never", 1),
       Gen(Rt({Exited("c0", 143)}), 1, false, true), "Running"},
      {"held after a run", Spec("Never", 1), Gen(Rt({Rerun(Waiting("c0"))}), 1, false, false, true),
       "Running"},
      {"held before any run", Spec("Never", 1), Gen(Rt({Waiting("c0")}), 0, false, false, true),
       "Pending"},
      {"re-running its init container", Spec("Never", 1, true),
       Gen(Rt({Rerun(Waiting("c0"))}, {Rerun(Running("init"))}), 1), "Running"},
      {"the next generation succeeds", Spec("Never", 1), Gen(Rt({Rerun(Exited("c0", 0))}), 1),
       "Succeeded"},
      {"deleted: terminal wins", Spec("Never", 1), Gen(Rt({Exited("c0", 3)}, {}, true), 0, true),
       "Failed"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(ComputePhase(c.spec, c.rt, c.rt.finished), c.want);
  }
}

Json Pod(const Json& spec) {
  return {{"metadata", {{"name", "p"}, {"namespace", "ns"}, {"uid", "u1"}}},
          {"spec", spec},
          {"status", {{"phase", "Pending"}}}};
}

const Json* Cond(const Json& st, const std::string& type) {
  for (const Json& c : st["conditions"]) {
    if (c["type"] == type) return &c;
  }
  return nullptr;
}

TEST(ComputePodStatusTest, RunningThenSucceeded) {
  Json spec = Spec("Never", 1);
  spec["containers"][0]["image"] = "busybox";
  StatusInput in{kT0 + absl::Seconds(1)};
  Json st = ComputePodStatus(Pod(spec), Rt({Running("c0")}), in);
  EXPECT_EQ(st["phase"], "Running");
  EXPECT_EQ(st["podIP"], "127.0.0.1");
  EXPECT_EQ(st["startTime"], "2026-01-01T00:00:01Z");
  const Json& cs = st["containerStatuses"][0];
  EXPECT_EQ(cs["containerID"], "batchd://u1/c0");
  EXPECT_EQ(cs["image"], "busybox");
  EXPECT_EQ(cs["state"]["running"]["startedAt"], "2026-01-01T00:00:00Z");
  EXPECT_EQ(cs["ready"], true);
  EXPECT_EQ((*Cond(st, "Ready"))["status"], "True");
  EXPECT_EQ((*Cond(st, "Initialized"))["status"], "True");

  Json pod = Pod(spec);
  pod["status"] = st;
  StatusInput later{kT0 + absl::Seconds(5)};
  Json done = ComputePodStatus(pod, Rt({Exited("c0", 0)}, {}, true), later);
  EXPECT_EQ(done["phase"], "Succeeded");
  EXPECT_EQ(done["startTime"], st["startTime"]);  // Kept.
  const Json& term = done["containerStatuses"][0]["state"]["terminated"];
  EXPECT_EQ(term["exitCode"], 0);
  EXPECT_EQ(term["reason"], "Completed");
  EXPECT_EQ(term["finishedAt"], "2026-01-01T00:00:01Z");
  EXPECT_EQ((*Cond(done, "Ready"))["reason"], "PodCompleted");
  EXPECT_EQ((*Cond(done, "Ready"))["lastTransitionTime"], "2026-01-01T00:00:05Z");
  // Unchanged conditions keep their transition time.
  EXPECT_EQ((*Cond(done, "PodScheduled"))["lastTransitionTime"], "2026-01-01T00:00:01Z");
  // Same input, same output: the agent writes nothing the second time.
  pod["status"] = done;
  EXPECT_EQ(ComputePodStatus(pod, Rt({Exited("c0", 0)}, {}, true), later), done);
}

TEST(ComputePodStatusTest, LimitsNotAppliedIsACondition) {
  Json spec = Spec("Never", 1);
  PodSandboxStatus rt = Rt({Running("c0")});
  rt.limits_warning = "pids.max not applied: no cgroup v1 pids hierarchy is mounted";
  StatusInput in{kT0 + absl::Seconds(1)};
  Json st = ComputePodStatus(Pod(spec), rt, in);
  const Json* c = Cond(st, kResourceLimitsCondition);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ((*c)["status"], "False");
  EXPECT_EQ((*c)["reason"], "CgroupLimitsNotApplied");
  EXPECT_EQ((*c)["message"], rt.limits_warning);
  // Written once: the same input keeps it as it is.
  Json pod = Pod(spec);
  pod["status"] = st;
  EXPECT_EQ(ComputePodStatus(pod, rt, StatusInput{kT0 + absl::Seconds(9)}), st);
  // Without a warning there is no such condition.
  EXPECT_EQ(Cond(ComputePodStatus(Pod(spec), Rt({Running("c0")}), in), kResourceLimitsCondition),
            nullptr);
}

TEST(ComputePodStatusTest, WaitingReasonsLastStateAndOverrides) {
  Json spec = Spec("OnFailure", 1, true);
  StatusInput in{kT0};
  Json st = ComputePodStatus(Pod(spec), PodSandboxStatus{}, in);
  EXPECT_EQ(st["phase"], "Pending");
  EXPECT_EQ(st["initContainerStatuses"][0]["state"]["waiting"]["reason"], "PodInitializing");
  EXPECT_EQ(st["containerStatuses"][0]["state"]["waiting"]["reason"], "PodInitializing");
  EXPECT_EQ((*Cond(st, "Initialized"))["message"], "containers with incomplete status: [init]");

  Json crash = ComputePodStatus(Pod(spec), Rt({CrashLoop("c0", 3)}, {Exited("init", 0)}), in);
  EXPECT_EQ(crash["phase"], "Running");
  const Json& c = crash["containerStatuses"][0];
  EXPECT_EQ(c["restartCount"], 1);
  EXPECT_EQ(c["state"]["waiting"]["reason"], "CrashLoopBackOff");
  EXPECT_EQ(c["lastState"]["terminated"]["exitCode"], 3);

  StatusInput deadline{kT0};
  deadline.failed_reason = {{"DeadlineExceeded", "too long"}};
  Json dl = ComputePodStatus(Pod(spec), Rt({Running("c0")}, {Exited("init", 0)}), deadline);
  EXPECT_EQ(dl["phase"], "Failed");
  EXPECT_EQ(dl["reason"], "DeadlineExceeded");

  StatusInput cfg{kT0};
  cfg.config_error = "secret \"s\" not found";
  Json ce = ComputePodStatus(Pod(Spec("Never", 1)), PodSandboxStatus{}, cfg);
  EXPECT_EQ(ce["phase"], "Pending");
  EXPECT_EQ(ce["containerStatuses"][0]["state"]["waiting"]["reason"],
            "CreateContainerConfigError");

  Json failed = Pod(Spec("Never", 1));
  failed["status"]["phase"] = "Failed";
  EXPECT_EQ(ComputePodStatus(failed, Rt({Running("c0")}), in)["phase"], "Failed");  // Terminal.
}

}  // namespace
}  // namespace batchd::agent::internal

namespace batchd::agent::internal {
namespace {

TEST(ComputePodStatusTest, RestartGenerationCondition) {
  Json spec = Spec("Never", 2);
  StatusInput in{kT0};
  struct Case {
    std::string name;
    PodSandboxStatus rt;
    std::string status, reason, message;
  };
  const std::vector<Case> cases = {
      {"running", Gen(Rt({Running("c0"), Running("c1")}), 2), "True", "Running", "generation 2"},
      {"failed", Gen(Rt({Running("c0"), Exited("c1", 4)}), 2, true), "False", "ContainerFailed",
       "generation 2: container c1 exited with code 4"},
      {"restarting", Gen(Rt({Running("c0"), Exited("c1", 4)}), 3, false, true), "False",
       "Restarting", "generation 3"},
      {"held", Gen(Rt({Waiting("c0"), Waiting("c1")}), 3, false, false, true), "False", "Held",
       "generation 3"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Json st = ComputePodStatus(Pod(spec), c.rt, in);
    const Json* cond = Cond(st, "batchd.io/RestartGeneration");
    ASSERT_NE(cond, nullptr);
    EXPECT_EQ((*cond)["status"], c.status);
    EXPECT_EQ((*cond)["reason"], c.reason);
    EXPECT_EQ((*cond)["message"], c.message);
  }
  // Not controller-driven: no such condition.
  EXPECT_EQ(Cond(ComputePodStatus(Pod(spec), Rt({Running("c0"), Running("c1")}), in),
                 "batchd.io/RestartGeneration"),
            nullptr);
}

}  // namespace
}  // namespace batchd::agent::internal
