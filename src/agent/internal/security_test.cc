#include "agent/internal/security.h"

#include <map>

#include "agent/internal/pod_spec.h"
#include "common/testing/fake_clock.h"
#include "gtest/gtest.h"

namespace batchd::agent::internal {
namespace {

using api::Json;

Json Pod(Json pod_sc, Json container_sc) {
  Json pod = Json::parse(R"({"metadata": {"name": "p", "namespace": "ns", "uid": "u-1"},
    "spec": {"containers": [{"name": "c", "command": ["true"]}]}})");
  if (!pod_sc.is_null()) pod["spec"]["securityContext"] = pod_sc;
  if (!container_sc.is_null()) pod["spec"]["containers"][0]["securityContext"] = container_sc;
  return pod;
}

// A root agent with the pod user batchd-pod (uid 990, gid 991); uid 1234
// has a passwd entry (gid 1234, also in group 50), others have none.
NodeIdentity RootNode() {
  return NodeIdentity{
      .agent_is_root = true,
      .agent_uid = 0,
      .agent_gid = 0,
      .pod_user = "batchd-pod",
      .pod_uid = 990,
      .pod_gid = 991,
      .lookup_uid = [](int64_t uid) -> std::optional<UserGroups> {
        if (uid == 990) return UserGroups{.gid = 991, .groups = {991}};
        if (uid == 1234) return UserGroups{.gid = 1234, .groups = {1234, 50}};
        return std::nullopt;
      }};
}

NodeIdentity UserNode() {
  return NodeIdentity{.agent_is_root = false, .agent_uid = 1000, .agent_gid = 1000};
}

absl::StatusOr<ContainerIdentity> Resolve(const Json& pod, const NodeIdentity& node) {
  return ResolveContainerIdentity(pod, pod["spec"]["containers"][0], node);
}

TEST(SecurityTest, RootAgentRunsPodsAsThePodUserByDefault) {
  absl::StatusOr<ContainerIdentity> id = Resolve(Pod(nullptr, nullptr), RootNode());
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(id->uid, 990);
  EXPECT_EQ(id->gid, 991);
  EXPECT_EQ(id->groups, (std::vector<int64_t>{991}));
  EXPECT_FALSE(id->no_new_privs);
}

TEST(SecurityTest, RunAsUserAndGroupsWithContainerOverridingThePod) {
  Json pod = Pod({{"runAsUser", 1234}, {"fsGroup", 2000}, {"supplementalGroups", {3000}}},
                 {{"runAsUser", 4321}, {"runAsGroup", 4000}});
  absl::StatusOr<ContainerIdentity> id = Resolve(pod, RootNode());
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(id->uid, 4321);  // the container's wins
  EXPECT_EQ(id->gid, 4000);
  EXPECT_EQ(id->groups, (std::vector<int64_t>{4000, 2000, 3000}));
  // Pod level only, a user with a passwd entry: its group, and (Merge) its groups.
  id = Resolve(Pod({{"runAsUser", 1234}, {"fsGroup", 2000}}, nullptr), RootNode());
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(id->uid, 1234);
  EXPECT_EQ(id->gid, 1234);
  EXPECT_EQ(id->groups, (std::vector<int64_t>{1234, 2000, 50}));
  // Strict: only what the pod lists.
  id = Resolve(Pod({{"runAsUser", 1234}, {"supplementalGroupsPolicy", "Strict"}}, nullptr),
               RootNode());
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(id->groups, (std::vector<int64_t>{1234}));
  // A uid unknown to the host: the pod user's group, never root's.
  id = Resolve(Pod({{"runAsUser", 5555}}, nullptr), RootNode());
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(id->gid, 991);
}

TEST(SecurityTest, RunAsNonRootIsCheckedAsTheKubeletDoes) {
  absl::StatusOr<ContainerIdentity> id =
      Resolve(Pod({{"runAsNonRoot", true}}, {{"runAsUser", 0}}), RootNode());
  EXPECT_TRUE(absl::IsFailedPrecondition(id.status()));
  EXPECT_EQ(id.status().message(),
            "container's runAsUser breaks non-root policy (pod: \"p_ns(u-1)\", container: c)");
  // The default user is not root: runAsNonRoot passes.
  EXPECT_TRUE(Resolve(Pod({{"runAsNonRoot", true}}, nullptr), RootNode()).ok());
  // A non-root agent that is somehow uid 0 would be "image will run as root".
  NodeIdentity odd = UserNode();
  odd.agent_uid = 0;
  id = Resolve(Pod(nullptr, {{"runAsNonRoot", true}}), odd);
  EXPECT_EQ(id.status().message(),
            "container has runAsNonRoot and image will run as root (pod: \"p_ns(u-1)\", "
            "container: c)");
  // Explicit root without runAsNonRoot is the admission check's business.
  id = Resolve(Pod({{"runAsUser", 0}}, nullptr), RootNode());
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(id->uid, 0);
  EXPECT_EQ(id->gid, 0);
}

TEST(SecurityTest, NonRootAgentRefusesOtherIdentities) {
  absl::StatusOr<ContainerIdentity> id = Resolve(Pod(nullptr, nullptr), UserNode());
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(id->uid, -1);  // the shim's own
  EXPECT_TRUE(Resolve(Pod({{"runAsUser", 1000}}, nullptr), UserNode()).ok());
  id = Resolve(Pod({{"runAsUser", 1234}}, nullptr), UserNode());
  EXPECT_TRUE(absl::IsFailedPrecondition(id.status()));
  EXPECT_EQ(id.status().message(),
            "runAsUser 1234 cannot be honoured: the node agent does not run as root (it runs as "
            "uid 1000, gid 1000) and runs every container as itself (pod: \"p_ns(u-1)\", "
            "container: c)");
  EXPECT_FALSE(Resolve(Pod({{"fsGroup", 7}}, nullptr), UserNode()).ok());
  EXPECT_FALSE(Resolve(Pod(nullptr, {{"runAsGroup", 7}}), UserNode()).ok());
}

TEST(SecurityTest, PrivilegeFlags) {
  absl::StatusOr<ContainerIdentity> id = Resolve(
      Pod(nullptr, {{"allowPrivilegeEscalation", false}, {"capabilities", {{"drop", {"ALL"}}}}}),
      RootNode());
  ASSERT_TRUE(id.ok());
  EXPECT_TRUE(id->no_new_privs);
  EXPECT_TRUE(id->drop_all_capabilities);
}

TEST(SecurityTest, PodOwner) {
  EXPECT_EQ(PodOwner(Pod(nullptr, nullptr), RootNode()), std::make_pair(int64_t{990}, int64_t{991}));
  EXPECT_EQ(PodOwner(Pod({{"runAsUser", 1234}}, nullptr), RootNode()),
            std::make_pair(int64_t{1234}, int64_t{1234}));
  EXPECT_EQ(PodOwner(Pod({{"fsGroup", 2000}}, {{"runAsUser", 7}}), RootNode()),
            std::make_pair(int64_t{7}, int64_t{2000}));
  EXPECT_EQ(PodOwner(Pod(nullptr, nullptr), UserNode()), std::make_pair(int64_t{-1}, int64_t{-1}));
}

TEST(SecurityTest, SandboxSpecCarriesIdentityOwnerAndPidsLimit) {
  SandboxInputs in;
  in.identity = RootNode();
  in.pids_limit = 4096;
  absl::StatusOr<PodSandboxSpec> s = BuildSandboxSpec(Pod({{"runAsUser", 1234}}, nullptr), in);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->containers[0].uid, 1234);
  EXPECT_EQ(s->owner_uid, 1234);
  EXPECT_EQ(s->pids_limit, 4096);
  s = BuildSandboxSpec(Pod({{"runAsNonRoot", true}, {"runAsUser", 0}}, nullptr), in);
  EXPECT_TRUE(absl::IsFailedPrecondition(s.status()));
}

// UserGroupsCache: one NSS lookup per uid per ttl while the stamp holds.
struct CountingLookup {
  std::map<int64_t, int> calls;
  std::optional<UserGroups> operator()(int64_t uid) {
    ++calls[uid];
    if (uid == 990) return UserGroups{.gid = 991, .groups = {991, 50}};
    return std::nullopt;
  }
};

TEST(UserGroupsCacheTest, ReusesAnAnswerWithinTheTtl) {
  FakeClock clock;
  CountingLookup lookup;
  UserGroupsCache cache(clock, absl::Seconds(10), std::ref(lookup), [] { return "s1"; });
  for (int i = 0; i < 5; ++i) {
    std::optional<UserGroups> g = cache.Get(990);
    ASSERT_TRUE(g.has_value());
    EXPECT_EQ(g->gid, 991);
    EXPECT_EQ(g->groups, (std::vector<int64_t>{991, 50}));
  }
  EXPECT_EQ(lookup.calls[990], 1);
  // No passwd entry is an answer too.
  EXPECT_FALSE(cache.Get(4242).has_value());
  EXPECT_FALSE(cache.Get(4242).has_value());
  EXPECT_EQ(lookup.calls[4242], 1);
  clock.Advance(absl::Seconds(9));
  cache.Get(990);
  EXPECT_EQ(lookup.calls[990], 1);
  clock.Advance(absl::Seconds(1));
  cache.Get(990);
  EXPECT_EQ(lookup.calls[990], 2);
}

TEST(UserGroupsCacheTest, AChangedStampLooksUpAgain) {
  FakeClock clock;
  CountingLookup lookup;
  std::string stamp = "s1";
  UserGroupsCache cache(clock, absl::Seconds(10), std::ref(lookup), [&] { return stamp; });
  cache.Get(990);
  cache.Get(990);
  EXPECT_EQ(lookup.calls[990], 1);
  stamp = "s2";  // /etc/group edited
  cache.Get(990);
  EXPECT_EQ(lookup.calls[990], 2);
  cache.Get(990);
  EXPECT_EQ(lookup.calls[990], 2);
}

TEST(UserGroupsCacheTest, HoldsAtMostMaxEntriesDroppingTheOldest) {
  FakeClock clock;
  CountingLookup lookup;
  UserGroupsCache cache(clock, absl::Seconds(10), std::ref(lookup), nullptr, /*max_entries=*/2);
  cache.Get(1);
  clock.Advance(absl::Milliseconds(1));
  cache.Get(2);
  clock.Advance(absl::Milliseconds(1));
  cache.Get(3);  // full: uid 1, the oldest, goes
  EXPECT_EQ(cache.size(), 2u);
  cache.Get(2);
  cache.Get(3);
  EXPECT_EQ(lookup.calls[2], 1);
  EXPECT_EQ(lookup.calls[3], 1);
  cache.Get(1);
  EXPECT_EQ(lookup.calls[1], 2);
  EXPECT_EQ(cache.size(), 2u);
}

TEST(UserGroupsCacheTest, StampOfTheHostFilesIsStable) {
  // Two reads with no edit in between agree (the cache would never hit otherwise).
  EXPECT_EQ(PasswdGroupStamp(), PasswdGroupStamp());
  EXPECT_FALSE(PasswdGroupStamp().empty());
}

}  // namespace
}  // namespace batchd::agent::internal
