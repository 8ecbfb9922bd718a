#include "scheduler/predicates.h"

#include "gtest/gtest.h"

namespace batchd::scheduler {
namespace {

using api::Json;

TEST(PredicatesTest, TolerationMatchesTaint) {
  struct Case {
    std::string name;
    Json toleration;
    Taint taint;
    bool want;
  };
  const Taint gpu{"gpu", "true", TaintEffect::kNoSchedule, ""};
  std::vector<Case> cases = {
      {"equal", Json{{"key", "gpu"}, {"value", "true"}, {"effect", "NoSchedule"}}, gpu, true},
      {"default operator is Equal", Json{{"key", "gpu"}, {"value", "true"}}, gpu, true},
      {"value differs", Json{{"key", "gpu"}, {"value", "false"}}, gpu, false},
      {"exists on key", Json{{"key", "gpu"}, {"operator", "Exists"}}, gpu, true},
      {"empty key exists tolerates all", Json{{"operator", "Exists"}}, gpu, true},
      {"effect mismatch", Json{{"operator", "Exists"}, {"effect", "NoExecute"}}, gpu, false},
      {"other key", Json{{"key", "x"}, {"operator", "Exists"}}, gpu, false},
      {"empty key with Equal", Json{{"value", "true"}}, gpu, false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto tols = ParseTolerations(Json{{"tolerations", Json::array({c.toleration})}});
    ASSERT_EQ(tols.size(), 1u);
    EXPECT_EQ(ToleratesTaint(tols[0], c.taint), c.want);
  }
}

TEST(PredicatesTest, TolerationSecondsParsed) {
  auto tols = ParseTolerations(Json::parse(
      R"({"tolerations":[{"key":"k","operator":"Exists","effect":"NoExecute","tolerationSeconds":30}]})"));
  ASSERT_EQ(tols.size(), 1u);
  EXPECT_EQ(tols[0].toleration_seconds, 30);
  EXPECT_EQ(FindToleration(tols, Taint{"k", "", TaintEffect::kNoExecute, ""}), &tols[0]);
  EXPECT_EQ(FindToleration(tols, Taint{"k", "", TaintEffect::kNoSchedule, ""}), nullptr);
}

TEST(PredicatesTest, NodeAffinity) {
  struct Case {
    std::string name;
    std::string spec;
    bool want;
  };
  const std::map<std::string, std::string> labels = {{"zone", "a"}, {"gpus", "4"}};
  auto terms = [](const std::string& t) {
    return R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":)" +
           t + "}}}}";
  };
  std::vector<Case> cases = {
      {"no constraints", "{}", true},
      {"selector match", R"({"nodeSelector":{"zone":"a"}})", true},
      {"selector mismatch", R"({"nodeSelector":{"zone":"b"}})", false},
      {"selector missing key", R"({"nodeSelector":{"rack":"1"}})", false},
      {"In", terms(R"([{"matchExpressions":[{"key":"zone","operator":"In","values":["a","b"]}]}])"), true},
      {"NotIn", terms(R"([{"matchExpressions":[{"key":"zone","operator":"NotIn","values":["a"]}]}])"), false},
      {"NotIn missing key", terms(R"([{"matchExpressions":[{"key":"r","operator":"NotIn","values":["a"]}]}])"), true},
      {"Exists", terms(R"([{"matchExpressions":[{"key":"gpus","operator":"Exists"}]}])"), true},
      {"DoesNotExist", terms(R"([{"matchExpressions":[{"key":"gpus","operator":"DoesNotExist"}]}])"), false},
      {"Gt", terms(R"([{"matchExpressions":[{"key":"gpus","operator":"Gt","values":["3"]}]}])"), true},
      {"Gt equal", terms(R"([{"matchExpressions":[{"key":"gpus","operator":"Gt","values":["4"]}]}])"), false},
      {"Lt", terms(R"([{"matchExpressions":[{"key":"gpus","operator":"Lt","values":["5"]}]}])"), true},
      {"Lt non-integer label", terms(R"([{"matchExpressions":[{"key":"zone","operator":"Lt","values":["5"]}]}])"), false},
      {"terms are ORed", terms(R"([{"matchExpressions":[{"key":"zone","operator":"In","values":["b"]}]},{"matchExpressions":[{"key":"zone","operator":"In","values":["a"]}]}])"), true},
      {"empty term matches nothing", terms(R"([{}])"), false},
      {"no terms matches nothing", terms(R"([])"), false},
      {"matchFields name", terms(R"([{"matchFields":[{"key":"metadata.name","operator":"In","values":["n1"]}]}])"), true},
      {"matchFields other name", terms(R"([{"matchFields":[{"key":"metadata.name","operator":"In","values":["n2"]}]}])"), false},
      {"selector AND affinity", R"({"nodeSelector":{"zone":"b"},"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"Exists"}]}]}}}})", false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(NodeAffinity::FromPodSpec(Json::parse(c.spec)).Matches("n1", labels), c.want);
  }
}

TEST(PredicatesTest, PodRequests) {
  struct Case {
    std::string name;
    std::string spec;
    std::map<std::string, int64_t> want;  // milli
  };
  std::vector<Case> cases = {
      {"sum of containers",
       R"({"containers":[{"resources":{"requests":{"cpu":"500m","memory":"1Gi"}}},{"resources":{"requests":{"cpu":"1"}}}]})",
       {{"cpu", 1500}, {"memory", (int64_t{1} << 30) * 1000}}},
      {"init container max wins",
       R"({"containers":[{"resources":{"requests":{"cpu":"1"}}}],"initContainers":[{"resources":{"requests":{"cpu":"2","nvidia.com/gpu":"1"}}}]})",
       {{"cpu", 2000}, {"nvidia.com/gpu", 1000}}},
      {"sidecar adds to app and to later init",
       R"({"containers":[{"resources":{"requests":{"cpu":"1"}}}],"initContainers":[{"restartPolicy":"Always","resources":{"requests":{"cpu":"500m"}}},{"resources":{"requests":{"cpu":"1200m"}}}]})",
       {{"cpu", 1700}}},
      {"overhead added",
       R"({"containers":[{"resources":{"requests":{"cpu":"1"}}}],"overhead":{"cpu":"250m"}})",
       {{"cpu", 1250}}},
      {"no requests", R"({"containers":[{"name":"a"}]})", {}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::map<std::string, int64_t> got;
    for (const auto& [k, v] : PodRequests(Json::parse(c.spec))) got[k] = v.milli();
    EXPECT_EQ(got, c.want);
  }
}

}  // namespace
}  // namespace batchd::scheduler
