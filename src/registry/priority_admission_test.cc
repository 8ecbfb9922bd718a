#include "registry/priority_admission.h"

#include "api/scheduling/v1/scheduling_v1.h"
#include "common/testing/fake_clock.h"
#include "gtest/gtest.h"
#include "registry/errors.h"
#include "store/memory/memory_store.h"

namespace batchd::registry {
namespace {

using api::Json;
using api::scheduling_v1::kSystemClusterCritical;
using api::scheduling_v1::kSystemNodeCritical;

class PriorityAdmissionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    reg_ = std::make_unique<Registry>(store_, api::BuiltinScheme(), clock_);
    ASSERT_TRUE(reg_->Start().ok());
    AddPriorityAdmission(*reg_);
    ASSERT_TRUE(EnsureSystemPriorityClasses(*reg_).ok());
    pods_ = reg_->scheme().ByResource("", "v1", "pods");
    pcs_ = reg_->scheme().ByResource("scheduling.k8s.io", "v1", "priorityclasses");
  }
  static Json Pod(const std::string& name, Json spec_extra = Json::object()) {
    Json spec = {{"containers", {{{"name", "c"}, {"image", "x"}}}}};
    spec.update(spec_extra);
    return {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", name}}}, {"spec", spec}};
  }
  static Json Class(const std::string& name, int value, Json extra = Json::object()) {
    Json pc = {{"apiVersion", "scheduling.k8s.io/v1"},
               {"kind", "PriorityClass"},
               {"metadata", {{"name", name}}},
               {"value", value}};
    pc.update(extra);
    return pc;
  }
  absl::StatusOr<Json> CreatePod(Json pod) {
    return reg_->Create(*pods_, "default", std::move(pod), WriteOptions{});
  }
  absl::StatusOr<Json> CreateClass(Json pc) {
    return reg_->Create(*pcs_, "", std::move(pc), WriteOptions{});
  }

  FakeClock clock_;
  store::MemoryStore store_;
  std::unique_ptr<Registry> reg_;
  const api::KindDef* pods_ = nullptr;
  const api::KindDef* pcs_ = nullptr;
};

TEST_F(PriorityAdmissionTest, SystemClassesExistOnce) {
  ASSERT_TRUE(EnsureSystemPriorityClasses(*reg_).ok());  // a second start changes nothing
  auto all = reg_->List(*pcs_, "", ListOptions{});
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->items.size(), 2u);
  auto node = reg_->Get(*pcs_, "", kSystemNodeCritical);
  auto cluster = reg_->Get(*pcs_, "", kSystemClusterCritical);
  ASSERT_TRUE(node.ok() && cluster.ok());
  EXPECT_EQ((*(*node)->Shared())["value"], 2000001000);
  EXPECT_EQ((*(*cluster)->Shared())["value"], 2000000000);
  EXPECT_EQ((*(*cluster)->Shared())["preemptionPolicy"], "PreemptLowerPriority");
  auto del = reg_->Delete(*pcs_, "", kSystemNodeCritical, DeleteOptions{});
  EXPECT_EQ(GetPayload(del.status()).reason, "Forbidden");
  EXPECT_EQ(del.status().message(),
            "priorityclasses.scheduling.k8s.io \"system-node-critical\" is forbidden: this is a "
            "system priority class and cannot be deleted");
  EXPECT_TRUE(reg_->Get(*pcs_, "", kSystemNodeCritical).ok());
}

TEST_F(PriorityAdmissionTest, PodsGetTheirClassesPriority) {
  ASSERT_TRUE(CreateClass(Class("high", 1000)).ok());
  ASSERT_TRUE(CreateClass(Class("polite", 50, {{"preemptionPolicy", "Never"}})).ok());
  struct Case {
    std::string name;
    Json spec;
    int want_priority;
    std::string want_policy;
    std::string want_class;
  };
  int n = 0;
  for (const Case& c : std::vector<Case>{
           {"no class, no default", Json::object(), 0, "PreemptLowerPriority", ""},
           {"class", {{"priorityClassName", "high"}}, 1000, "PreemptLowerPriority", "high"},
           {"class with Never", {{"priorityClassName", "polite"}}, 50, "Never", "polite"},
           {"system class", {{"priorityClassName", "system-node-critical"}}, 2000001000,
            "PreemptLowerPriority", "system-node-critical"},
           {"priority equal to the class's", {{"priorityClassName", "high"}, {"priority", 1000}},
            1000, "PreemptLowerPriority", "high"},
           {"policy equal to the class's",
            {{"priorityClassName", "polite"}, {"preemptionPolicy", "Never"}}, 50, "Never",
            "polite"},
       }) {
    SCOPED_TRACE(c.name);
    auto pod = CreatePod(Pod("p" + std::to_string(n++), c.spec));
    ASSERT_TRUE(pod.ok()) << pod.status();
    EXPECT_EQ((*pod)["spec"]["priority"], c.want_priority);
    EXPECT_EQ((*pod)["spec"]["preemptionPolicy"], c.want_policy);
    EXPECT_EQ((*pod)["spec"].value("priorityClassName", ""), c.want_class);
  }
}

TEST_F(PriorityAdmissionTest, ForbiddenPodsAreNotWritten) {
  ASSERT_TRUE(CreateClass(Class("high", 1000)).ok());
  struct Case {
    std::string name;
    Json spec;
    std::string want_message;
  };
  for (const Case& c : std::vector<Case>{
           {"unknown class", {{"priorityClassName", "nope"}},
            "pods \"bad\" is forbidden: no PriorityClass with name nope was found"},
           {"priority differs", {{"priorityClassName", "high"}, {"priority", 7}},
            "pods \"bad\" is forbidden: the integer value of priority (7) must not be provided "
            "in pod spec; priority admission controller computed 1000 from the given "
            "PriorityClass name"},
           {"priority without a class", {{"priority", 7}},
            "the integer value of priority (7) must not be provided in pod spec; priority "
            "admission controller computed 0 from the given PriorityClass name"},
           {"policy differs", {{"priorityClassName", "high"}, {"preemptionPolicy", "Never"}},
            "the string value of PreemptionPolicy (Never) must not be provided in pod spec; "
            "priority admission controller computed PreemptLowerPriority from the given "
            "PriorityClass name"},
       }) {
    SCOPED_TRACE(c.name);
    auto pod = CreatePod(Pod("bad", c.spec));
    ASSERT_FALSE(pod.ok());
    EXPECT_EQ(GetPayload(pod.status()).reason, "Forbidden");
    EXPECT_NE(pod.status().message().find(c.want_message), std::string::npos)
        << pod.status().message();
    EXPECT_EQ(reg_->Get(*pods_, "default", "bad").status().code(), absl::StatusCode::kNotFound);
  }
}

TEST_F(PriorityAdmissionTest, GeneratedNamesAreNamedByTheirPrefix) {
  Json pod = Pod("", {{"priorityClassName", "nope"}});
  pod["metadata"].erase("name");
  pod["metadata"]["generateName"] = "job-";
  auto r = CreatePod(pod);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "pods \"job-\" is forbidden: no PriorityClass with name nope was found");
  pod["spec"].erase("priorityClassName");
  r = CreatePod(pod);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)["metadata"]["name"].get<std::string>().rfind("job-", 0), 0u);
}

TEST_F(PriorityAdmissionTest, OneGlobalDefault) {
  ASSERT_TRUE(CreateClass(Class("low", 5, {{"globalDefault", true}})).ok());
  auto pod = CreatePod(Pod("p"));
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ((*pod)["spec"]["priorityClassName"], "low");
  EXPECT_EQ((*pod)["spec"]["priority"], 5);

  auto second = CreateClass(Class("other", 9, {{"globalDefault", true}}));
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(GetPayload(second.status()).reason, "Forbidden");
  EXPECT_NE(second.status().message().find(
                "PriorityClass low is already marked as default. Only one default can exist"),
            std::string::npos)
      << second.status().message();

  // The default itself may be updated; another class may not become one.
  auto low = reg_->Get(*pcs_, "", "low");
  ASSERT_TRUE(low.ok());
  Json updated = (*low)->Decode();
  updated["description"] = "the default";
  EXPECT_TRUE(reg_->Update(*pcs_, "", "low", updated, false, WriteOptions{}).ok());
  ASSERT_TRUE(CreateClass(Class("other", 9)).ok());
  auto other = reg_->Get(*pcs_, "", "other");
  ASSERT_TRUE(other.ok());
  updated = (*other)->Decode();
  updated["globalDefault"] = true;
  auto r = reg_->Update(*pcs_, "", "other", updated, false, WriteOptions{});
  EXPECT_EQ(GetPayload(r.status()).reason, "Forbidden");
}

// Pods created between changes to the classes see each change: the default
// class is remembered only while the classes are the same versions.
TEST_F(PriorityAdmissionTest, DefaultFollowsClassChanges) {
  int n = 0;
  auto class_of_next_pod = [&]() -> std::string {
    auto pod = CreatePod(Pod("d" + std::to_string(n++)));
    if (!pod.ok()) return pod.status().ToString();
    return (*pod)["spec"].value("priorityClassName", "") + "=" +
           (*pod)["spec"]["priority"].dump();
  };
  EXPECT_EQ(class_of_next_pod(), "=0");
  EXPECT_EQ(class_of_next_pod(), "=0");
  ASSERT_TRUE(CreateClass(Class("low", 5, {{"globalDefault", true}})).ok());
  EXPECT_EQ(class_of_next_pod(), "low=5");
  EXPECT_EQ(class_of_next_pod(), "low=5");
  // No longer the default (an update), then another one is.
  auto low = reg_->Get(*pcs_, "", "low");
  ASSERT_TRUE(low.ok());
  Json updated = (*low)->Decode();
  updated["globalDefault"] = false;
  ASSERT_TRUE(reg_->Update(*pcs_, "", "low", updated, false, WriteOptions{}).ok());
  EXPECT_EQ(class_of_next_pod(), "=0");
  ASSERT_TRUE(CreateClass(Class("mid", 7, {{"globalDefault", true}})).ok());
  EXPECT_EQ(class_of_next_pod(), "mid=7");
  ASSERT_TRUE(reg_->Delete(*pcs_, "", "mid", DeleteOptions{}).ok());
  EXPECT_EQ(class_of_next_pod(), "=0");
}

TEST_F(PriorityAdmissionTest, UpdateWithoutPriorityKeepsIt) {
  ASSERT_TRUE(CreateClass(Class("high", 1000)).ok());
  auto pod = CreatePod(Pod("p", {{"priorityClassName", "high"}}));
  ASSERT_TRUE(pod.ok()) << pod.status();
  Json body = *pod;
  body["spec"].erase("priority");
  body["spec"].erase("preemptionPolicy");
  body["metadata"]["labels"] = {{"a", "b"}};
  auto updated = reg_->Update(*pods_, "default", "p", body, false, WriteOptions{});
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ((*updated)["spec"]["priority"], 1000);
  EXPECT_EQ((*updated)["spec"]["preemptionPolicy"], "PreemptLowerPriority");
}

}  // namespace
}  // namespace batchd::registry
