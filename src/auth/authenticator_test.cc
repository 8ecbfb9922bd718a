#include "auth/authenticator.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/field_error.h"
#include "common/pki.h"
#include "gtest/gtest.h"

namespace batchd::auth {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

TEST(TokenTableTest, ParsesKubernetesCsv) {
  std::vector<std::string> warnings;
  auto t = TokenTable::Parse(
      "s3cr3t,alice,1001,\"team-a,batch-users\"\n"
      "t2,bob,1002\r\n"
      "\n"
      ",nobody,0\n"
      "t3,carol,1003,ops,extra-column\n"
      "t2,bob2,1004\n",
      "tokens.csv", &warnings);
  ASSERT_TRUE(t.ok()) << t.status();
  const UserInfo* a = t->Find("s3cr3t");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->name, "alice");
  EXPECT_EQ(a->uid, "1001");
  EXPECT_EQ(a->groups, (std::vector<std::string>{"team-a", "batch-users"}));
  EXPECT_EQ(t->Find("t3")->groups, std::vector<std::string>{"ops"});
  EXPECT_EQ(t->Find("t2")->name, "bob2");  // duplicate: last wins
  EXPECT_EQ(t->Find("nope"), nullptr);
  EXPECT_EQ(warnings.size(), 2u);  // the empty token and the duplicate
}

TEST(TokenTableTest, TooFewColumnsIsKubernetesError) {
  auto t = TokenTable::Parse("tok,alice\n", "/etc/t.csv", nullptr);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(),
            "token file '/etc/t.csv' must have at least 3 columns (token, user name, user uid), "
            "found 2");
  EXPECT_FALSE(TokenTable::Parse("\"tok,alice,1\n", "f", nullptr).ok());  // unterminated quote
}

TEST(SplitCsvRecordTest, QuotesAndEscapes) {
  std::vector<std::string> f;
  ASSERT_TRUE(SplitCsvRecord(R"(a,"b,c","d""e",)", &f));
  EXPECT_EQ(f, (std::vector<std::string>{"a", "b,c", "d\"e", ""}));
}

class AuthenticatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto sa = ServiceAccountTokens::Generate({});
    ASSERT_TRUE(sa.ok());
    sa_ = std::move(*sa);
    AuthenticatorOptions o;
    o.tokens.Add("alice-token", UserInfo{"alice", "1", {"team-a"}, {}});
    o.tokens.Add("admin-token", LocalAdminUser());
    o.service_accounts = sa_.get();
    o.service_account_uid = [this](const std::string& ns,
                                   const std::string& name) -> std::optional<std::string> {
      if (ns == "team-a" && name == "bot") return bot_uid_;
      return std::nullopt;
    };
    o.now = [this] { return now_; };
    authn_ = std::make_unique<Authenticator>(o);
    o.allow_loopback_admin = true;
    loopback_admin_ = std::make_unique<Authenticator>(o);
  }
  ServiceAccountClaims Claims() {
    ServiceAccountClaims c;
    c.ns = "team-a";
    c.name = "bot";
    c.uid = "uid-1";
    c.issued_at = kNow;
    c.expires = kNow + absl::Hours(1);
    c.jti = "j1";
    return c;
  }

  std::unique_ptr<ServiceAccountTokens> sa_;
  std::unique_ptr<Authenticator> authn_, loopback_admin_;
  std::string bot_uid_ = "uid-1";
  absl::Time now_ = kNow + absl::Minutes(1);
};

TEST_F(AuthenticatorTest, StaticTokens) {
  auto u = authn_->Authenticate("Bearer alice-token", nullptr, false);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->name, "alice");
  EXPECT_EQ(u->groups, (std::vector<std::string>{"team-a", kAuthenticatedGroup}));
  EXPECT_TRUE(authn_->Authenticate("bearer alice-token", nullptr, false).ok());  // scheme case
  auto bad = authn_->Authenticate("Bearer wrong", nullptr, false);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kUnauthenticated);
  // A wrong token is 401 even from loopback with the loopback admin on.
  EXPECT_EQ(loopback_admin_->Authenticate("Bearer wrong", nullptr, true).status().code(),
            absl::StatusCode::kUnauthenticated);
}

TEST_F(AuthenticatorTest, AnonymousAndLoopbackAdmin) {
  for (const char* h : {"", "Bearer ", "Basic YWxpY2U6cHc=", "Bearer"}) {
    auto u = authn_->Authenticate(h, nullptr, true);
    ASSERT_TRUE(u.ok()) << h;
    EXPECT_EQ(u->name, kAnonymousUser) << h;
    EXPECT_EQ(u->groups, std::vector<std::string>{kUnauthenticatedGroup});
  }
  auto admin = loopback_admin_->Authenticate("", nullptr, true);
  ASSERT_TRUE(admin.ok());
  EXPECT_TRUE(admin->InGroup(kMastersGroup));
  // Not from loopback: anonymous.
  EXPECT_EQ(loopback_admin_->Authenticate("", nullptr, false)->name, kAnonymousUser);
}

TEST_F(AuthenticatorTest, AnonymousOff) {
  AuthenticatorOptions o;
  o.tokens.Add("alice-token", UserInfo{"alice", "1", {"team-a"}, {}});
  o.anonymous = false;
  Authenticator closed(o);
  for (const char* h : {"", "Bearer ", "Basic YWxpY2U6cHc="}) {
    EXPECT_EQ(closed.Authenticate(h, nullptr, false).status().code(),
              absl::StatusCode::kUnauthenticated) << h;
  }
  EXPECT_EQ(closed.Authenticate("Bearer alice-token", nullptr, false)->name, "alice");
  ClientCertificate cert{"bob", {"ops"}};
  EXPECT_EQ(closed.Authenticate("", &cert, false)->name, "bob");
  // The loopback admin, when asked for, still comes first.
  o.allow_loopback_admin = true;
  Authenticator local(o);
  EXPECT_TRUE(local.Authenticate("", nullptr, true)->InGroup(kMastersGroup));
  EXPECT_EQ(local.Authenticate("", nullptr, false).status().code(),
            absl::StatusCode::kUnauthenticated);
}

TEST_F(AuthenticatorTest, ClientCertificateBeatsToken) {
  ClientCertificate c{"jbeda", {"app1", "app2"}};
  auto u = authn_->Authenticate("Bearer wrong", &c, false);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->name, "jbeda");
  EXPECT_EQ(u->groups, (std::vector<std::string>{"app1", "app2", kAuthenticatedGroup}));
  ClientCertificate empty{"", {"x"}};
  EXPECT_EQ(authn_->Authenticate("Bearer alice-token", &empty, false)->name, "alice");
}

TEST_F(AuthenticatorTest, ServiceAccountTokens) {
  std::string token = sa_->Issue(Claims());
  auto u = authn_->Authenticate("Bearer " + token, nullptr, false);
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->name, "system:serviceaccount:team-a:bot");
  EXPECT_EQ(u->uid, "uid-1");
  EXPECT_EQ(u->groups, (std::vector<std::string>{"system:serviceaccounts",
                                                 "system:serviceaccounts:team-a",
                                                 "system:authenticated"}));
  // Expired.
  now_ = kNow + absl::Hours(2);
  EXPECT_EQ(authn_->Authenticate("Bearer " + token, nullptr, false).status().code(),
            absl::StatusCode::kUnauthenticated);
  now_ = kNow + absl::Minutes(1);
  // The ServiceAccount was deleted and re-created (new uid): refused.
  bot_uid_ = "uid-2";
  EXPECT_FALSE(authn_->Authenticate("Bearer " + token, nullptr, false).ok());
  bot_uid_ = "uid-1";
  // A foreign key's signature.
  auto other = ServiceAccountTokens::Generate({});
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(authn_->Authenticate("Bearer " + (*other)->Issue(Claims()), nullptr, false).ok());
  // Wrong audience (kubectl create token --audience foo).
  ServiceAccountClaims c = Claims();
  c.audiences = {"foo"};
  EXPECT_FALSE(authn_->Authenticate("Bearer " + sa_->Issue(c), nullptr, false).ok());
  // A tampered payload.
  std::vector<std::string> parts = absl::StrSplit(token, '.');
  std::string payload;
  ASSERT_TRUE(Base64UrlDecode(parts[1], &payload));
  auto pos = payload.find("team-a");
  payload.replace(pos, 6, "team-b");
  std::string forged = absl::StrCat(parts[0], ".", Base64UrlEncode(payload), ".", parts[2]);
  EXPECT_EQ(authn_->Authenticate("Bearer " + forged, nullptr, false).status().code(),
            absl::StatusCode::kUnauthenticated);
}

TEST_F(AuthenticatorTest, NodeTokens) {
  ServiceAccountClaims c;
  c.node = "n1";
  c.issued_at = kNow;
  c.expires = kNow + absl::Hours(1);
  auto u = authn_->Authenticate("Bearer " + sa_->Issue(c), nullptr, false);
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->name, "system:node:n1");
  EXPECT_EQ(u->groups, (std::vector<std::string>{kNodesGroup, kAuthenticatedGroup}));
  now_ = kNow + absl::Hours(2);
  EXPECT_FALSE(authn_->Authenticate("Bearer " + sa_->Issue(c), nullptr, false).ok());
}

TEST_F(AuthenticatorTest, MalformedJwtsNeverCrash) {
  for (const char* t : {"a.b.c", "...", "eyJhbGciOiJub25lIn0.e30.", "x.y", "a.b.c.d",
                        "eyJhbGciOiJSUzI1NiJ9.eyJleHAiOiJ4In0.AAAA", "====.====.===="}) {
    EXPECT_EQ(authn_->Authenticate(std::string("Bearer ") + t, nullptr, false).status().code(),
              absl::StatusCode::kUnauthenticated)
        << t;
  }
  // alg none with an empty signature is refused (only RS256 is accepted).
  std::string none = Base64UrlEncode(R"({"alg":"none"})") + "." + Base64UrlEncode("{}") + ".";
  EXPECT_FALSE(sa_->Verify(none, kNow).ok());
}

TEST(Base64UrlTest, RoundTrip) {
  for (std::string s : std::vector<std::string>{"", "f", "fo", "foo", "foob", "fooba", "foobar", std::string("\0\xff\xfe", 3)}) {
    std::string out;
    ASSERT_TRUE(Base64UrlDecode(Base64UrlEncode(s), &out));
    EXPECT_EQ(out, s);
  }
  std::string out;
  EXPECT_FALSE(Base64UrlDecode("a", &out));
  EXPECT_FALSE(Base64UrlDecode("ab+/", &out));
}

TEST(ServiceAccountTokensTest, KeyPersistsAcrossRestarts) {
  std::string dir = ::testing::TempDir() + "/sa-key-test-" + RandomHex(4);
  auto a = ServiceAccountTokens::LoadOrCreate(dir + "/pki/sa.key", {});
  ASSERT_TRUE(a.ok()) << a.status();
  ServiceAccountClaims c{"ns", "n", "u", "", {}, kNow, kNow + absl::Hours(1), "j"};
  std::string token = (*a)->Issue(c);
  auto b = ServiceAccountTokens::LoadOrCreate(dir + "/pki/sa.key", {});
  ASSERT_TRUE(b.ok()) << b.status();
  auto claims = (*b)->Verify(token, kNow);
  ASSERT_TRUE(claims.ok()) << claims.status();
  EXPECT_EQ(claims->name, "n");
}

TEST(ServiceAccountTokensTest, Es256WithAnEcP256Key) {
  std::string dir = ::testing::TempDir() + "/sa-ec-key-test-" + RandomHex(4);
  std::filesystem::create_directories(dir);
  auto ca = pki::NewCa("sa");  // an EC P-256 key pair
  ASSERT_TRUE(ca.ok()) << ca.status();
  std::ofstream(dir + "/sa.key") << ca->key_pem;
  auto sa = ServiceAccountTokens::LoadOrCreate(dir + "/sa.key", {});
  ASSERT_TRUE(sa.ok()) << sa.status();
  ServiceAccountClaims c{"ns", "n", "u", "", {}, kNow, kNow + absl::Hours(1), "j"};
  std::string token = (*sa)->Issue(c);
  std::vector<std::string> parts = absl::StrSplit(token, '.');
  ASSERT_EQ(parts.size(), 3u);
  std::string header, sig;
  ASSERT_TRUE(Base64UrlDecode(parts[0], &header));
  EXPECT_EQ(api::Json::parse(header)["alg"], "ES256");
  ASSERT_TRUE(Base64UrlDecode(parts[2], &sig));
  EXPECT_EQ(sig.size(), 64u);  // JWS r || s, not DER
  auto claims = (*sa)->Verify(token, kNow);
  ASSERT_TRUE(claims.ok()) << claims.status();
  EXPECT_EQ(claims->name, "n");
  // A flipped signature bit, and an RS256 token from another key, fail.
  std::string bad = token;
  bad[bad.size() - 2] = bad[bad.size() - 2] == 'A' ? 'B' : 'A';
  EXPECT_FALSE((*sa)->Verify(bad, kNow).ok());
  auto rsa = ServiceAccountTokens::Generate({});
  ASSERT_TRUE(rsa.ok());
  EXPECT_FALSE((*sa)->Verify((*rsa)->Issue(c), kNow).ok());
  EXPECT_FALSE((*rsa)->Verify(token, kNow).ok());
  // Not a key: refused with what it must be.
  std::ofstream(dir + "/junk.key") << "not a key";
  auto junk = ServiceAccountTokens::LoadOrCreate(dir + "/junk.key", {});
  ASSERT_FALSE(junk.ok());
  EXPECT_NE(junk.status().message().find("is not a PEM RSA or EC P-256 private key"),
            std::string::npos);
}

}  // namespace
}  // namespace batchd::auth
