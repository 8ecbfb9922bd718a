#include "scheduler/internal/pod_affinity.h"

#include <set>

#include "gtest/gtest.h"
#include "scheduler/internal/cache.h"

namespace batchd::scheduler::internal {
namespace {

using api::Json;

// Nodes a1, a2 in zone a; b1 in zone b; bare (no zone label).
Json Node(const std::string& name, const std::string& zone) {
  Json labels = {{"kubernetes.io/hostname", name}};
  if (!zone.empty()) labels["zone"] = zone;
  return {{"metadata", {{"name", name}, {"labels", labels}}},
          {"status",
           {{"allocatable", {{"cpu", "8"}, {"memory", "8Gi"}, {"pods", "110"}}},
            {"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
}

Json Pod(const std::string& name, Json labels, Json affinity = nullptr,
         const std::string& ns = "ns") {
  Json spec = {{"containers", Json::array({{{"name", "c"}}})}};
  if (!affinity.is_null()) spec["affinity"] = affinity;
  return {{"metadata", {{"name", name}, {"namespace", ns}, {"labels", labels}}},
          {"spec", spec},
          {"status", {{"phase", "Pending"}}}};
}

// {"requiredDuringSchedulingIgnoredDuringExecution": [term]} under `side`.
Json Required(const std::string& side, Json term) {
  return {{side, {{"requiredDuringSchedulingIgnoredDuringExecution", Json::array({term})}}}};
}
Json Term(Json match_labels, const std::string& topology = "zone") {
  return {{"labelSelector", {{"matchLabels", match_labels}}}, {"topologyKey", topology}};
}

struct Placed {
  Json pod;
  std::string node;
};

struct Case {
  std::string name;
  std::vector<Placed> placed;
  Json pod;
  std::set<std::string> want_nodes;  // The nodes that pass.
  std::string want_reason;           // The reason of the nodes that fail ("" when none fail).
};

void RunCase(const Case& c, const std::map<std::string, Labels>& namespaces = {}) {
  SCOPED_TRACE(c.name);
  Cache cache;
  for (const auto& [name, zone] : std::vector<std::pair<std::string, std::string>>{
           {"a1", "a"}, {"a2", "a"}, {"b1", "b"}, {"bare", ""}}) {
    cache.UpsertNode(Node(name, zone));
  }
  for (const auto& [ns, labels] : namespaces) cache.UpsertNamespace(ns, labels);
  for (const Placed& p : c.placed) {
    cache.AddPod(*ParsePod(p.pod, cache.resources()), p.node, /*assumed=*/false);
  }
  auto pod = ParsePod(c.pod, cache.resources());
  const InterPodState state = cache.InterPodFor(*pod);
  std::set<std::string> passed;
  std::set<std::string> reasons;
  for (const auto& [name, n] : cache.nodes()) {
    std::vector<std::string> r;
    if (state.Passes(n.labels, &r)) {
      passed.insert(name);
    } else {
      ASSERT_EQ(r.size(), 1u);
      reasons.insert(r[0]);
    }
  }
  EXPECT_EQ(passed, c.want_nodes);
  if (c.want_reason.empty()) {
    EXPECT_TRUE(reasons.empty());
  } else {
    EXPECT_EQ(reasons, std::set<std::string>{c.want_reason});
  }
}

const std::set<std::string> kAll = {"a1", "a2", "b1", "bare"};
const std::set<std::string> kZoned = {"a1", "a2", "b1"};

TEST(InterPodAffinityTest, RequiredAffinity) {
  const Json to_db = Required("podAffinity", Term({{"app", "db"}}));
  const Placed db_in_a{Pod("db", {{"app", "db"}}), "a2"};
  const std::vector<Case> cases = {
      {"a matching pod's zone only", {db_in_a}, Pod("web", {{"app", "web"}}, to_db),
       {"a1", "a2"}, kAffinityReason},
      {"no matching pod, not self-matching: nowhere", {{Pod("x", {{"app", "x"}}), "a1"}},
       Pod("web", {{"app", "web"}}, to_db), {}, kAffinityReason},
      {"first of a self-attracting group: any node with the topology key", {},
       Pod("db2", {{"app", "db"}}, to_db), kZoned, kAffinityReason},
      {"pods of another namespace do not count",
       {{Pod("db", {{"app", "db"}}, nullptr, "other"), "a2"}},
       Pod("web", {{"app", "web"}}, to_db), {}, kAffinityReason},
      {"a null labelSelector matches nothing", {db_in_a},
       Pod("web", {{"app", "web"}},
           Required("podAffinity", Json{{"topologyKey", "zone"}})),
       {}, kAffinityReason},
      {"every term must hold",
       {db_in_a, {Pod("cache", {{"app", "cache"}}), "b1"}},
       Pod("web", {{"app", "web"}},
           {{"podAffinity",
             {{"requiredDuringSchedulingIgnoredDuringExecution",
               Json::array({Term({{"app", "db"}}), Term({{"app", "cache"}})})}}}}),
       {}, kAffinityReason},
  };
  for (const Case& c : cases) RunCase(c);
}

TEST(InterPodAffinityTest, RequiredAntiAffinityAndSymmetry) {
  const Json away_from_web = Required("podAntiAffinity", Term({{"app", "web"}}));
  const std::vector<Case> cases = {
      {"not in a matching pod's zone; a node without the key has no domain",
       {{Pod("web", {{"app", "web"}}), "a1"}}, Pod("w2", {{"app", "x"}}, away_from_web),
       {"b1", "bare"}, kAntiAffinityReason},
      {"per host", {{Pod("web", {{"app", "web"}}), "a1"}},
       Pod("w2", {{"app", "x"}},
           Required("podAntiAffinity", Term({{"app", "web"}}, "kubernetes.io/hostname"))),
       {"a2", "b1", "bare"}, kAntiAffinityReason},
      {"a placed pod's anti-affinity repels a matching newcomer",
       {{Pod("lonely", {{"app", "lonely"}}, away_from_web), "b1"}},
       Pod("web", {{"app", "web"}}), {"a1", "a2", "bare"}, kExistingAntiAffinityReason},
      {"...and not a pod it does not match",
       {{Pod("lonely", {{"app", "lonely"}}, away_from_web), "b1"}},
       Pod("db", {{"app", "db"}}), kAll, ""},
      {"a placed pod's anti-affinity is relative to its own namespace",
       {{Pod("lonely", {{"app", "lonely"}}, away_from_web, "other"), "b1"}},
       Pod("web", {{"app", "web"}}), kAll, ""},
  };
  for (const Case& c : cases) RunCase(c);
}

TEST(InterPodAffinityTest, NamespacesAndMatchLabelKeys) {
  Json in_list = Term({{"app", "db"}});
  in_list["namespaces"] = Json::array({"other"});
  Json all_ns = Term({{"app", "db"}});
  all_ns["namespaceSelector"] = Json::object();
  Json team_ns = Term({{"app", "db"}});
  team_ns["namespaceSelector"] = {{"matchLabels", {{"team", "x"}}}};
  Json by_key = {{"labelSelector", {{"matchLabels", {{"app", "db"}}}}},
                 {"matchLabelKeys", Json::array({"version"})},
                 {"topologyKey", "zone"}};
  const std::vector<Case> cases = {
      {"namespaces lists the other namespace",
       {{Pod("db", {{"app", "db"}}, nullptr, "other"), "b1"}},
       Pod("web", {{"app", "web"}}, Required("podAffinity", in_list)), {"b1"}, kAffinityReason},
      {"an empty namespaceSelector: every namespace",
       {{Pod("db", {{"app", "db"}}, nullptr, "third"), "b1"}},
       Pod("web", {{"app", "web"}}, Required("podAffinity", all_ns)), {"b1"}, kAffinityReason},
      {"a namespaceSelector by namespace labels",
       {{Pod("db", {{"app", "db"}}, nullptr, "blue"), "b1"},
        {Pod("db", {{"app", "db"}}, nullptr, "red"), "a1"}},
       Pod("web", {{"app", "web"}}, Required("podAffinity", team_ns)), {"b1"}, kAffinityReason},
      {"matchLabelKeys adds the pod's own value",
       {{Pod("db1", {{"app", "db"}, {"version", "1"}}), "a1"},
        {Pod("db2", {{"app", "db"}, {"version", "2"}}), "b1"}},
       Pod("web", {{"app", "web"}, {"version", "2"}}, Required("podAffinity", by_key)),
       {"b1"}, kAffinityReason},
  };
  for (const Case& c : cases) RunCase(c, {{"blue", {{"team", "x"}}}, {"red", {{"team", "y"}}}});
}

TEST(InterPodAffinityTest, SignatureSeparatesPodsWithTerms) {
  ResourceIndex resources;
  const Json to_db = Required("podAffinity", Term({{"app", "db"}}));
  auto a = ParsePod(Pod("a", {{"job", "1"}}, to_db), resources);
  auto b = ParsePod(Pod("b", {{"job", "2"}}, to_db), resources);
  auto c = ParsePod(Pod("c", {{"job", "1"}}), resources);
  auto d = ParsePod(Pod("d", {{"job", "2"}}), resources);
  EXPECT_NE(a->signature, b->signature);  // Same terms, other labels.
  EXPECT_EQ(c->signature, d->signature);  // No terms: labels do not matter.
  EXPECT_NE(a->inter_pod, nullptr);
  EXPECT_EQ(c->inter_pod, nullptr);
}

TEST(InterPodAffinityTest, PlacementSensitivityFollowsAntiAffinityPods) {
  Cache cache;
  cache.UpsertNode(Node("a1", "a"));
  auto plain = ParsePod(Pod("p", {{"app", "x"}}), cache.resources());
  EXPECT_FALSE(cache.PlacementSensitive(*plain));
  auto lonely = ParsePod(Pod("lonely", {{"app", "l"}},
                             Required("podAntiAffinity", Term({{"app", "x"}}))),
                         cache.resources());
  EXPECT_TRUE(cache.PlacementSensitive(*lonely));
  cache.AddPod(*lonely, "a1", /*assumed=*/true);
  EXPECT_TRUE(cache.PlacementSensitive(*plain));
  EXPECT_EQ(cache.Schedule(*plain).node, "");
  cache.RemovePod(lonely->key);
  EXPECT_FALSE(cache.PlacementSensitive(*plain));
  EXPECT_EQ(cache.Schedule(*plain).node, "a1");
}

}  // namespace
}  // namespace batchd::scheduler::internal
