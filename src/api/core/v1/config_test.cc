#include <gtest/gtest.h>

#include "api/core/v1/internal/config.h"

namespace batchd::api::core_v1::internal {
namespace {

std::string Msg(const ErrorList& errs) { return errs.empty() ? "" : JoinMessages(errs); }

absl::Time Now() { return absl::FromUnixSeconds(1704153600); }  // 2024-01-02T00:00:00Z

Json Secret(Json data = Json::object()) {
  return Json{{"apiVersion", "v1"},
              {"kind", "Secret"},
              {"metadata",
               {{"name", "db"}, {"namespace", "default"},
                {"creationTimestamp", "2024-01-01T23:00:00Z"}}},
              {"data", std::move(data)}};
}

TEST(SecretTest, StringDataIsMergedIntoDataOnWrite) {
  Json s = Secret({{"user", "YWRtaW4="}, {"password", "b2xk"}});
  s["stringData"] = {{"password", "s3cr3t"}, {"host", "db"}};
  SetDefaultsSecret(s);
  EXPECT_EQ(s["type"], "Opaque");
  EXPECT_FALSE(s.contains("stringData"));  // write-only
  EXPECT_EQ(s["data"], (Json{{"user", "YWRtaW4="}, {"password", "czNjcjN0"}, {"host", "ZGI="}}));
  EXPECT_EQ(Msg(ValidateSecret(s)), "");
}

TEST(SecretTest, ValidationNeverEchoesValues) {
  Json s = Secret({{"bad key", "YQ=="}, {"pw", "not base64!!s3cr3t"}, {"nopad", "YWJj"},
                   {"unpadded", "YQ"}, {"spaces", "YW Jj"}, {"lines", "YW\nJj"}});
  SetDefaultsSecret(s);
  const std::string msg = Msg(ValidateSecret(s));
  EXPECT_NE(msg.find("data[bad key]: Invalid value: \"bad key\": a valid config key must consist "
                     "of alphanumeric characters, '-', '_' or '.'"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("data[pw]: Invalid value: \"<secret contents redacted>\": illegal base64 "
                     "data"),
            std::string::npos)
      << msg;
  EXPECT_EQ(msg.find("s3cr3t"), std::string::npos) << msg;
  // Go's StdEncoding: padding required, no spaces; line breaks ignored.
  EXPECT_NE(msg.find("data[unpadded]: Invalid value"), std::string::npos) << msg;
  EXPECT_NE(msg.find("data[spaces]: Invalid value"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("data[nopad]"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("data[lines]"), std::string::npos) << msg;
}

TEST(SecretTest, TypesRequireTheirKeysAndSizeIsBounded) {
  Json tls = Secret({{"tls.crt", "YQ=="}});
  tls["type"] = "kubernetes.io/tls";
  EXPECT_EQ(Msg(ValidateSecret(tls)), "data[tls.key]: Required value");
  Json big = Secret({{"a", std::string(1500000, 'A')}});
  SetDefaultsSecret(big);
  EXPECT_NE(Msg(ValidateSecret(big)).find("data: Too long"), std::string::npos);
}

TEST(SecretTest, ImmutableAndTypeUpdates) {
  Json old = Secret({{"a", "YQ=="}});
  old["immutable"] = true;
  SetDefaultsSecret(old);
  Json changed = old;
  changed["data"]["a"] = "Yg==";
  EXPECT_EQ(Msg(ValidateSecretUpdate(changed, old)),
            "data: Forbidden: field is immutable when `immutable` is set");
  Json unset = old;
  unset.erase("immutable");
  EXPECT_EQ(Msg(ValidateSecretUpdate(unset, old)),
            "immutable: Forbidden: field is immutable when `immutable` is set");
  Json relabelled = old;
  relabelled["metadata"]["labels"] = {{"x", "y"}};
  EXPECT_EQ(Msg(ValidateSecretUpdate(relabelled, old)), "");  // metadata may change
  Json retyped = old;
  retyped["type"] = "kubernetes.io/basic-auth";
  EXPECT_NE(Msg(ValidateSecretUpdate(retyped, old)).find("type: Invalid value"), std::string::npos);
}

TEST(SecretTest, Table) {
  const KindDef k = SecretKind();
  Json s = Secret({{"a", "YQ=="}, {"b", "Yg=="}});
  SetDefaultsSecret(s);
  ASSERT_EQ(k.columns.size(), 3u);
  EXPECT_EQ(k.row_cells(s, Now()), (std::vector<Json>{"Opaque", 2, "60m"}));
  EXPECT_EQ(k.field_value(s, "type"), "Opaque");
}

TEST(ConfigMapTest, Validation) {
  Json cm = {{"metadata", {{"name", "cfg"}, {"namespace", "default"}}},
             {"data", {{"mode", "fast"}, {"..x", "1"}}},
             {"binaryData", {{"mode", "AAE="}, {"blob", "@@"}}}};
  const std::string msg = Msg(ValidateConfigMap(cm));
  EXPECT_NE(msg.find("data[..x]: Invalid value: \"..x\": must not start with '..'"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("binaryData[blob]: Invalid value: \"@@\": illegal base64 data"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("data[mode]: Invalid value: \"mode\": duplicate of key present in "
                     "binaryData"),
            std::string::npos)
      << msg;
  Json ok = {{"metadata", {{"name", "cfg"}}}, {"data", {{"a", "1"}}}, {"immutable", true}};
  EXPECT_EQ(Msg(ValidateConfigMap(ok)), "");
  Json changed = ok;
  changed["data"]["a"] = "2";
  EXPECT_EQ(Msg(ValidateConfigMapUpdate(changed, ok)),
            "data: Forbidden: field is immutable when `immutable` is set");
  const KindDef k = ConfigMapKind();
  ok["metadata"]["creationTimestamp"] = "2024-01-01T23:00:00Z";
  EXPECT_EQ(k.row_cells(ok, Now()), (std::vector<Json>{1, "60m"}));
  EXPECT_EQ(k.short_names, (std::vector<std::string>{"cm"}));
}

}  // namespace
}  // namespace batchd::api::core_v1::internal
