// Authentication as kube-apiserver does it, in its order: a verified client
// certificate (CN = user, O = groups), then a bearer token (the static token
// file, `--token-auth-file` in Kubernetes' CSV format, and the generated admin
// token; then ServiceAccount JWTs), then — only for requests carrying no
// credentials — the loopback admin (`--allow-loopback-admin`) or
// system:anonymous (401 instead with `--anonymous-auth=false`). A bearer
// token nobody recognises is 401, never anonymous.
//
// Thread-safety: immutable after construction; Authenticate is thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "auth/service_account_tokens.h"
#include "auth/user.h"

namespace batchd::auth {

// The subject of a client certificate that verified against the client CA.
struct ClientCertificate {
  std::string common_name;
  std::vector<std::string> organizations;
};

// The static tokens, by token (as Kubernetes' tokenfile authenticator keeps
// them). Not by a cryptographic hash: OpenSSL 3's one-shot SHA256() fetches
// its implementation under global locks on every call, which cost a third of
// the create throughput at 16 connections (docs/benchmarks.md).
class TokenTable {
 public:
  // Parses Kubernetes' token file: RFC 4180 CSV rows `token,user,uid[,"g1,g2"]`,
  // extra columns ignored. Fewer than 3 columns is an error with Kubernetes'
  // text; an empty token is skipped and a duplicate replaces the earlier row
  // (each with a warning appended to `warnings`).
  static absl::StatusOr<TokenTable> Parse(std::string_view csv, const std::string& path,
                                          std::vector<std::string>* warnings);
  void Add(const std::string& token, UserInfo user);
  const UserInfo* Find(std::string_view token) const;
  size_t size() const { return by_token_.size(); }

 private:
  std::unordered_map<std::string, UserInfo> by_token_;
};

// One CSV record split into fields (quotes and "" escapes handled); false on
// an unterminated quote. Exposed for the fuzz target.
bool SplitCsvRecord(std::string_view line, std::vector<std::string>* fields);

struct AuthenticatorOptions {
  TokenTable tokens;
  // ServiceAccount tokens; null: JWTs are not accepted.
  const ServiceAccountTokens* service_accounts = nullptr;
  // The uid of ServiceAccount NS/NAME, or nullopt when it does not exist; a
  // token of a deleted (or re-created) ServiceAccount is refused.
  std::function<std::optional<std::string>(const std::string& ns, const std::string& name)>
      service_account_uid;
  // Requests from 127.0.0.0/8 or ::1 without credentials act as batchd-admin.
  bool allow_loopback_admin = false;
  // kube-apiserver's --anonymous-auth: requests without credentials (and not
  // the loopback admin) are system:anonymous; when false they are 401.
  bool anonymous = true;
  std::function<absl::Time()> now = [] { return absl::Now(); };
};

class Authenticator {
 public:
  explicit Authenticator(AuthenticatorOptions opts) : opts_(std::move(opts)) {}
  // The requester, system:anonymous included; Unauthenticated (401) when a
  // credential was presented and is not valid.
  absl::StatusOr<UserInfo> Authenticate(std::string_view authorization_header,
                                        const ClientCertificate* cert, bool loopback) const;

 private:
  AuthenticatorOptions opts_;
};

}  // namespace batchd::auth
