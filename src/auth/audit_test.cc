#include "auth/audit.h"

#include <filesystem>
#include <fstream>

#include "auth/service_account_tokens.h"
#include "gtest/gtest.h"

namespace batchd::auth {
namespace {

int Lines(const std::string& path) {
  std::ifstream in(path);
  int n = 0;
  for (std::string l; std::getline(in, l);) {
    EXPECT_TRUE(api::Json::parse(l, nullptr, false).is_object()) << l;
    ++n;
  }
  return n;
}

TEST(AuditLogTest, WritesJsonLinesAndRotatesBounded) {
  std::string dir = ::testing::TempDir() + "/audit-" + RandomHex(4);
  AuditOptions o;
  o.path = dir + "/audit.log";
  o.max_backups = 2;
  o.max_size_bytes_override = 1000;
  auto log = AuditLog::Open(o);
  ASSERT_TRUE(log.ok()) << log.status();
  api::Json ev = {{"kind", "Event"}, {"apiVersion", "audit.k8s.io/v1"},
                  {"pad", std::string(200, 'x')}};
  for (int i = 0; i < 40; ++i) (*log)->Write(ev);
  namespace fs = std::filesystem;
  EXPECT_TRUE(fs::exists(o.path));
  EXPECT_TRUE(fs::exists(o.path + ".1"));
  EXPECT_TRUE(fs::exists(o.path + ".2"));
  EXPECT_FALSE(fs::exists(o.path + ".3"));  // bounded: at most max_backups files
  for (const std::string p : {o.path, o.path + ".1", o.path + ".2"}) {
    EXPECT_LE(fs::file_size(p), 1000u) << p;
    EXPECT_GT(Lines(p), 0) << p;
  }
}

}  // namespace
}  // namespace batchd::auth
