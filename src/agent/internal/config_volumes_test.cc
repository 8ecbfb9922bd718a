// Secret and configMap volumes: which files, with which modes, and how they
// are written (once, whole, never outside the volume).
#include "agent/internal/config_volumes.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "agent/internal/volumes.h"
#include "common/testing/temp_dir.h"
#include "gtest/gtest.h"

namespace batchd::agent::internal {
namespace {

using api::Json;

// "hello" / "s3cret" in base64.
const Json kSecret = {{"data", {{"user", "aGVsbG8="}, {"password", "czNjcmV0"}}}};
const Json kConfig = {{"data", {{"app.conf", "a=1\n"}}}, {"binaryData", {{"blob", "AAE="}}}};

ObjectLookup Lookup() {
  return [](std::string_view resource, const std::string& ns,
            const std::string& name) -> absl::StatusOr<std::optional<Json>> {
    if (ns != "team-a") return std::optional<Json>();
    if (resource == "secrets" && name == "db") return std::optional<Json>(kSecret);
    if (resource == "configmaps" && name == "cfg") return std::optional<Json>(kConfig);
    return std::optional<Json>();
  };
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int Mode(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? static_cast<int>(st.st_mode & 07777) : -1;
}

TEST(ConfigVolumesTest, EveryKeyOrTheListedItemsWithTheirModes) {
  auto all = ConfigVolumeFiles(Json{{"name", "v"}, {"secret", {{"secretName", "db"}}}}, "team-a",
                               Lookup());
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].path, "password");
  EXPECT_EQ((*all)[0].content, "s3cret");
  EXPECT_EQ((*all)[0].mode, 0644);
  auto items = ConfigVolumeFiles(
      Json::parse(R"({"name":"v","secret":{"secretName":"db","defaultMode":288,
                     "items":[{"key":"user","path":"creds/user"},{"key":"password","path":"pw","mode":256}]}})"),
      "team-a", Lookup());
  ASSERT_TRUE(items.ok()) << items.status();
  ASSERT_EQ(items->size(), 2u);
  EXPECT_EQ((*items)[0].path, "creds/user");
  EXPECT_EQ((*items)[0].mode, 0440);
  EXPECT_EQ((*items)[1].mode, 0400);
  auto cm = ConfigVolumeFiles(Json{{"name", "v"}, {"configMap", {{"name", "cfg"}}}}, "team-a",
                              Lookup());
  ASSERT_TRUE(cm.ok()) << cm.status();
  ASSERT_EQ(cm->size(), 2u);
  EXPECT_EQ((*cm)[0].path, "app.conf");
  EXPECT_EQ((*cm)[1].path, "blob");
  EXPECT_EQ((*cm)[1].content, std::string("\0\1", 2));
}

TEST(ConfigVolumesTest, MissingObjectsAndKeysAsTheKubeletSaysUnlessOptional) {
  auto missing = ConfigVolumeFiles(Json{{"name", "v"}, {"secret", {{"secretName", "nope"}}}},
                                   "team-a", Lookup());
  EXPECT_EQ(missing.status().message(), "secret \"nope\" not found");
  auto cm_missing = ConfigVolumeFiles(Json{{"name", "v"}, {"configMap", {{"name", "nope"}}}},
                                      "team-a", Lookup());
  EXPECT_EQ(cm_missing.status().message(), "configmap \"nope\" not found");
  auto optional = ConfigVolumeFiles(
      Json{{"name", "v"}, {"secret", {{"secretName", "nope"}, {"optional", true}}}}, "team-a",
      Lookup());
  ASSERT_TRUE(optional.ok());
  EXPECT_TRUE(optional->empty());
  auto key = ConfigVolumeFiles(
      Json::parse(R"({"name":"v","configMap":{"name":"cfg","items":[{"key":"x","path":"x"}]}})"),
      "team-a", Lookup());
  EXPECT_EQ(key.status().message(), "configmap references non-existent config key: x");
  auto skey = ConfigVolumeFiles(
      Json::parse(R"({"name":"v","secret":{"secretName":"db","items":[{"key":"x","path":"x"}]}})"),
      "team-a", Lookup());
  EXPECT_EQ(skey.status().message(), "references non-existent secret key: x");
  auto opt_key = ConfigVolumeFiles(
      Json::parse(R"({"name":"v","secret":{"secretName":"db","optional":true,
                     "items":[{"key":"x","path":"x"},{"key":"user","path":"u"}]}})"),
      "team-a", Lookup());
  ASSERT_TRUE(opt_key.ok());
  ASSERT_EQ(opt_key->size(), 1u);
  // A path leaving the volume is refused (the API refuses it too).
  auto escape = ConfigVolumeFiles(
      Json::parse(R"({"name":"v","secret":{"secretName":"db","items":[{"key":"user","path":"../x"}]}})"),
      "team-a", Lookup());
  EXPECT_FALSE(escape.ok());
}

TEST(ConfigVolumesTest, WrittenOnceWholeWithTheirModes) {
  ScopedTempDir tmp("config-volumes");
  const std::string dir = tmp.path() + "/pod-uid/v";
  ASSERT_TRUE(WriteConfigVolume(dir, {{"a", "one", 0400}, {"sub/b", "two", 0640}}, -1, -1).ok());
  EXPECT_EQ(Read(dir + "/a"), "one");
  EXPECT_EQ(Mode(dir + "/a"), 0400);
  EXPECT_EQ(Read(dir + "/sub/b"), "two");
  EXPECT_EQ(Mode(dir + "/sub/b"), 0640);
  EXPECT_EQ(Mode(tmp.path() + "/pod-uid"), 0711);
  EXPECT_FALSE(std::filesystem::exists(dir + ".tmp"));
  // Not rewritten for a re-adopted pod (no update propagation).
  ASSERT_TRUE(WriteConfigVolume(dir, {{"a", "changed", 0644}}, -1, -1).ok());
  EXPECT_EQ(Read(dir + "/a"), "one");
  EXPECT_FALSE(WriteConfigVolume(tmp.path() + "/pod-uid/w", {{"../../x", "evil", 0644}}, -1, -1).ok());
  EXPECT_FALSE(std::filesystem::exists(tmp.path() + "/x"));
  EXPECT_FALSE(std::filesystem::exists(tmp.path() + "/pod-uid/w"));
}

TEST(ConfigVolumesTest, ResolvedAsReadOnlyHostVolumes) {
  ScopedTempDir tmp("config-volumes");
  Json pod = Json::parse(R"({"metadata":{"namespace":"team-a","name":"p"},"spec":{
    "volumes":[{"name":"creds","secret":{"secretName":"db"}},{"name":"cfg","configMap":{"name":"cfg"}}],
    "containers":[{"name":"c","volumeMounts":[{"name":"creds","mountPath":"/creds"},
                                              {"name":"cfg","mountPath":"/etc/app"}]}]}})");
  ConfigVolumes config{tmp.path() + "/uid1", Lookup()};
  auto v = ResolveVolumes(pod, tmp.path() + "/claims", -1, -1, &config);
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_EQ(v->volumes.size(), 2u);
  EXPECT_EQ(v->volumes[0].type, VolumeSpec::Type::kHost);
  EXPECT_EQ(v->volumes[0].host_path, tmp.path() + "/uid1/creds");
  EXPECT_EQ(Read(tmp.path() + "/uid1/creds/password"), "s3cret");
  EXPECT_EQ(Read(tmp.path() + "/uid1/cfg/app.conf"), "a=1\n");
  for (const MountSpec& m : v->mounts["c"]) EXPECT_TRUE(m.read_only) << m.volume;
  // A missing Secret: the kubelet's FailedMount text, naming no value.
  pod["spec"]["volumes"][0]["secret"]["secretName"] = "gone";
  auto failed = ResolveVolumes(pod, tmp.path() + "/claims", -1, -1, &config);
  EXPECT_EQ(failed.status().message(),
            "MountVolume.SetUp failed for volume \"creds\" : secret \"gone\" not found");
  // Without a place for them (no agent support), refused.
  EXPECT_FALSE(ResolveVolumes(pod, tmp.path() + "/claims").ok());
}

}  // namespace
}  // namespace batchd::agent::internal
