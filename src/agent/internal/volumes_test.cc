#include "agent/internal/volumes.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "common/testing/temp_dir.h"

namespace batchd::agent::internal {
namespace {

using api::Json;
namespace fs = std::filesystem;

Json Pod(Json volumes, Json mounts) {
  return {{"metadata", {{"name", "p"}, {"namespace", "ml"}}},
          {"spec",
           {{"volumes", volumes},
            {"initContainers", Json::array({{{"name", "init"}, {"volumeMounts", mounts}}})},
            {"containers", Json::array({{{"name", "main"}}})}}}};
}

TEST(VolumesTest, HostPathTypeChecks) {
  ScopedTempDir tmp;
  const std::string dir = tmp.path() + "/d", file = tmp.path() + "/f";
  fs::create_directory(dir);
  std::ofstream(file) << "x";
  struct Case {
    std::string path, type, want;  // want "" = OK
  };
  const std::vector<Case> cases = {
      {dir, "", ""},
      {tmp.path() + "/missing", "", ""},
      {dir, "Directory", ""},
      {file, "Directory", "hostPath type check failed: " + file + " is not a directory"},
      {tmp.path() + "/missing", "Directory",
       "hostPath type check failed: " + tmp.path() + "/missing is not a directory"},
      {file, "File", ""},
      {dir, "File", "hostPath type check failed: " + dir + " is not a file"},
      {dir, "Socket", "hostPath type check failed: " + dir + " is not a socket file"},
      {file, "CharDevice", "hostPath type check failed: " + file + " is not a character device"},
      {file, "DirectoryOrCreate", "hostPath type check failed: " + file + " is not a directory"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.path + " " + c.type);
    absl::Status s = CheckHostPath(c.path, c.type);
    EXPECT_EQ(s.ok() ? "" : std::string(s.message()), c.want);
  }
  // The *OrCreate types create what is missing.
  EXPECT_TRUE(CheckHostPath(tmp.path() + "/new/dir", "DirectoryOrCreate").ok());
  EXPECT_TRUE(fs::is_directory(tmp.path() + "/new/dir"));
  EXPECT_TRUE(CheckHostPath(tmp.path() + "/new/file", "FileOrCreate").ok());
  EXPECT_TRUE(fs::is_regular_file(tmp.path() + "/new/file"));
}

TEST(VolumesTest, ResolvesEveryKindAndMount) {
  ScopedTempDir tmp;
  Json volumes = Json::array({
      {{"name", "scratch"}, {"emptyDir", {{"medium", "Memory"}, {"sizeLimit", "64Mi"}}}},
      {{"name", "data"}, {"hostPath", {{"path", tmp.path() + "/data"}, {"type", "DirectoryOrCreate"}}}},
      {{"name", "ckpt"}, {"persistentVolumeClaim", {{"claimName", "ckpt"}, {"readOnly", true}}}},
  });
  Json mounts = Json::array({
      {{"name", "scratch"}, {"mountPath", "/scratch"}},
      {{"name", "data"}, {"mountPath", "/data"}, {"subPath", "in"}, {"readOnly", true}},
      {{"name", "ckpt"}, {"mountPath", "/ckpt"}},
  });
  absl::StatusOr<PodVolumes> v = ResolveVolumes(Pod(volumes, mounts), tmp.path() + "/claims");
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_EQ(v->volumes.size(), 3u);
  EXPECT_EQ(v->volumes[0].type, VolumeSpec::Type::kEmptyDir);
  EXPECT_TRUE(v->volumes[0].memory);
  EXPECT_EQ(v->volumes[0].size_limit_bytes, 64 << 20);
  EXPECT_EQ(v->volumes[0].size_limit_text, "64Mi");
  EXPECT_EQ(v->volumes[1].host_path, tmp.path() + "/data");
  EXPECT_TRUE(fs::is_directory(tmp.path() + "/data"));
  EXPECT_EQ(v->volumes[2].host_path, tmp.path() + "/claims/ml/ckpt");
  EXPECT_TRUE(fs::is_directory(tmp.path() + "/claims/ml/ckpt"));
  EXPECT_TRUE(v->any_mount());
  const std::vector<MountSpec>& m = v->mounts.at("init");
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[1], (MountSpec{"data", "/data", "in", true}));
  EXPECT_TRUE(m[2].read_only);  // The claim's readOnly.
  EXPECT_TRUE(v->mounts.at("main").empty());
}

TEST(VolumesTest, WhatTheAgentCreatesBelongsToThePodUser) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give files away";
  ScopedTempDir tmp;
  Json volumes = Json::array({
      {{"name", "data"}, {"hostPath", {{"path", tmp.path() + "/data"}, {"type", "DirectoryOrCreate"}}}},
      {{"name", "f"}, {"hostPath", {{"path", tmp.path() + "/f"}, {"type", "FileOrCreate"}}}},
      {{"name", "ckpt"}, {"persistentVolumeClaim", {{"claimName", "ckpt"}}}},
  });
  fs::create_directories(tmp.path() + "/old");  // exists: keeps its owner
  volumes.push_back({{"name", "old"}, {"hostPath", {{"path", tmp.path() + "/old"}, {"type", "Directory"}}}});
  absl::StatusOr<PodVolumes> v =
      ResolveVolumes(Pod(volumes, Json::array()), tmp.path() + "/claims", 4321, 4322);
  ASSERT_TRUE(v.ok()) << v.status();
  struct stat st;
  for (const char* p : {"/data", "/f", "/claims/ml/ckpt"}) {
    ASSERT_EQ(stat((tmp.path() + p).c_str(), &st), 0) << p;
    EXPECT_EQ(st.st_uid, 4321u) << p;
    EXPECT_EQ(st.st_gid, 4322u) << p;
  }
  ASSERT_EQ(stat((tmp.path() + "/claims/ml/ckpt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0770u);
  ASSERT_EQ(stat((tmp.path() + "/old").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
}

TEST(VolumesTest, FailedMountMessages) {
  ScopedTempDir tmp;
  Json missing = Json::array(
      {{{"name", "data"}, {"hostPath", {{"path", tmp.path() + "/nope"}, {"type", "Directory"}}}}});
  absl::StatusOr<PodVolumes> v = ResolveVolumes(Pod(missing, Json::array()), tmp.path());
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().message(), "MountVolume.SetUp failed for volume \"data\" : hostPath type "
                                  "check failed: " + tmp.path() + "/nope is not a directory");
  Json other = Json::array({{{"name", "cm"}, {"configMap", {{"name", "x"}}}}});
  v = ResolveVolumes(Pod(other, Json::array()), tmp.path());
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().message(), "MountVolume.SetUp failed for volume \"cm\" : this volume type "
                                  "is not supported by batchd");
  Json escape = Json::array({{{"name", "c"}, {"persistentVolumeClaim", {{"claimName", "../x"}}}}});
  EXPECT_FALSE(ResolveVolumes(Pod(escape, Json::array()), tmp.path()).ok());
}

}  // namespace
}  // namespace batchd::agent::internal
