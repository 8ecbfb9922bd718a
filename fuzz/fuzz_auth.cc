// libFuzzer target: every credential parser on arbitrary bytes must return
// (a user, anonymous, or an error) without crashing: the token file CSV
// parser, base64url, the ServiceAccount JWT verifier and the authenticator's
// Authorization header handling. Seeds: fuzz/corpus/fuzz_auth/.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "auth/authenticator.h"
#include "auth/service_account_tokens.h"

namespace {

struct Fixture {
  Fixture() {
    sa = batchd::auth::ServiceAccountTokens::Generate({}).value();
    batchd::auth::AuthenticatorOptions o;
    o.tokens.Add("tok", batchd::auth::UserInfo{"alice", "1", {"g"}, {}});
    o.service_accounts = sa.get();
    o.service_account_uid = [](const std::string&, const std::string&) {
      return std::optional<std::string>("u");
    };
    o.allow_loopback_admin = true;
    authn = std::make_unique<batchd::auth::Authenticator>(o);
  }
  std::unique_ptr<batchd::auth::ServiceAccountTokens> sa;
  std::unique_ptr<batchd::auth::Authenticator> authn;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture* f = new Fixture();
  std::string in(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> warnings;
  (void)batchd::auth::TokenTable::Parse(in, "fuzz.csv", &warnings);
  std::string out;
  (void)batchd::auth::Base64UrlDecode(in, &out);
  (void)f->sa->Verify(in, absl::FromUnixSeconds(1'800'000'000));
  (void)f->authn->Authenticate(in, nullptr, size % 2 == 0);
  (void)f->authn->Authenticate("Bearer " + in, nullptr, false);
  return 0;
}
