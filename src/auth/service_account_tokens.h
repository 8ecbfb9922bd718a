// ServiceAccount tokens: signed JWTs (RS256 with an RSA key, ES256 with an
// EC P-256 key, as kube-apiserver's --service-account-key-file) with Kubernetes' bound-token
// claims (iss, sub = system:serviceaccount:NS:NAME, aud, exp, iat, nbf, jti
// and the `kubernetes.io` claim with the namespace and the ServiceAccount's
// name and uid), issued through the TokenRequest subresource and verified by
// the authenticator. The RSA key lives in a PEM file created on first start
// (mode 0600), so tokens survive restarts.
//
// OpenSSL stays in the .cc: this header is light.
//
// Thread-safety: immutable after creation; Issue and Verify are thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace batchd::auth {

struct ServiceAccountClaims {
  // A ServiceAccount token names its namespace, name and uid; a node
  // credential (`batchctl create node-token`) names only `node`, and
  // authenticates as system:node:<node> in system:nodes.
  std::string ns;
  std::string name;
  std::string uid;
  std::string node;
  std::vector<std::string> audiences;
  absl::Time issued_at;
  absl::Time expires;
  std::string jti;
};

class ServiceAccountTokens {
 public:
  struct Options {
    std::string issuer = "https://batchd.local";
    // Accepted audiences; empty means {issuer}.
    std::vector<std::string> api_audiences;
  };
  // Loads the PEM private key at `key_path` (RSA: RS256; EC P-256: ES256;
  // anything else is refused), or creates a 2048-bit RSA key there (parent
  // directories too) when the file does not exist.
  static absl::StatusOr<std::unique_ptr<ServiceAccountTokens>> LoadOrCreate(
      const std::string& key_path, Options opts);
  // A fresh in-memory key (tests, --store memory without a data dir).
  static absl::StatusOr<std::unique_ptr<ServiceAccountTokens>> Generate(Options opts);
  ~ServiceAccountTokens();

  const std::string& issuer() const { return opts_.issuer; }
  const std::vector<std::string>& api_audiences() const { return opts_.api_audiences; }
  // The signed token for `c` (audiences default to the API audiences).
  std::string Issue(const ServiceAccountClaims& c) const;
  // Checks the format, signature (the key's algorithm only), issuer, expiry (with 60 s of
  // clock skew for nbf/iat as Kubernetes allows) and that the audiences meet
  // the API audiences. Unauthenticated on any failure; never throws.
  absl::StatusOr<ServiceAccountClaims> Verify(std::string_view token, absl::Time now) const;
  // True when `token` has the shape of a JWT (three base64url parts).
  static bool LooksLikeJwt(std::string_view token);

 private:
  struct Key;
  ServiceAccountTokens(std::unique_ptr<Key> key, Options opts);
  std::unique_ptr<Key> key_;
  Options opts_;
};

// base64url without padding (RFC 7515), exposed for tests and fuzzing.
std::string Base64UrlEncode(std::string_view in);
bool Base64UrlDecode(std::string_view in, std::string* out);
// Lower-case hex SHA-256 of `s`.
std::string Sha256Hex(std::string_view s);
// `n` random bytes from the system's CSPRNG, hex-encoded (tokens, jti).
std::string RandomHex(size_t n);

}  // namespace batchd::auth
