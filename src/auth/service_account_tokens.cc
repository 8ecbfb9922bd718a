#include "auth/service_account_tokens.h"

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/sha.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/field_error.h"
#include "auth/user.h"
#include "common/string_view.h"

namespace batchd::auth {

using api::Json;

namespace {

constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

absl::Status Unauth(std::string why) { return absl::UnauthenticatedError(std::move(why)); }

}  // namespace

std::string Base64UrlEncode(std::string_view in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    out += kB64[v >> 18];
    out += kB64[(v >> 12) & 63];
    out += kB64[(v >> 6) & 63];
    out += kB64[v & 63];
  }
  if (i + 1 == in.size()) {
    uint32_t v = uint8_t(in[i]) << 16;
    out += kB64[v >> 18];
    out += kB64[(v >> 12) & 63];
  } else if (i + 2 == in.size()) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8);
    out += kB64[v >> 18];
    out += kB64[(v >> 12) & 63];
    out += kB64[(v >> 6) & 63];
  }
  return out;
}

bool Base64UrlDecode(std::string_view in, std::string* out) {
  out->clear();
  if (in.size() % 4 == 1) return false;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    int v;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    else if (c >= '0' && c <= '9') v = c - '0' + 52;
    else if (c == '-') v = 62;
    else if (c == '_') v = 63;
    else return false;
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return true;
}

std::string Sha256Hex(std::string_view s) {
  unsigned char d[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(s.data()), s.size(), d);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : d) {
    out += hex[c >> 4];
    out += hex[c & 15];
  }
  return out;
}

std::string RandomHex(size_t n) {
  std::string buf(n, '\0');
  RAND_bytes(reinterpret_cast<unsigned char*>(buf.data()), static_cast<int>(n));
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : buf) {
    out += hex[c >> 4];
    out += hex[c & 15];
  }
  return out;
}

struct ServiceAccountTokens::Key {
  EVP_PKEY* pkey = nullptr;
  ~Key() { EVP_PKEY_free(pkey); }
  // ES256 (an EC P-256 key) or RS256 (an RSA key), as the key decides.
  bool ec() const { return EVP_PKEY_get_base_id(pkey) == EVP_PKEY_EC; }
  const char* alg() const { return ec() ? "ES256" : "RS256"; }
};

namespace {

// An EC key on P-256 (the only curve ES256 names).
bool IsP256(EVP_PKEY* pkey) {
  char curve[64] = {};
  size_t len = 0;
  return EVP_PKEY_get_utf8_string_param(pkey, "group", curve, sizeof(curve), &len) == 1 &&
         std::string_view(curve, len) == "prime256v1";
}

// JWS ES256 signatures are r || s, 32 bytes each (RFC 7518 3.4); OpenSSL
// signs and verifies DER.
std::string DerToJose(const std::string& der) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(der.data());
  ECDSA_SIG* sig = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der.size()));
  if (!sig) return "";
  std::string out(64, '\0');
  const BIGNUM* r = nullptr;
  const BIGNUM* s = nullptr;
  ECDSA_SIG_get0(sig, &r, &s);
  bool ok = BN_bn2binpad(r, reinterpret_cast<unsigned char*>(out.data()), 32) == 32 &&
            BN_bn2binpad(s, reinterpret_cast<unsigned char*>(out.data()) + 32, 32) == 32;
  ECDSA_SIG_free(sig);
  return ok ? out : "";
}

std::string JoseToDer(const std::string& jose) {
  if (jose.size() != 64) return "";
  ECDSA_SIG* sig = ECDSA_SIG_new();
  BIGNUM* r = BN_bin2bn(reinterpret_cast<const unsigned char*>(jose.data()), 32, nullptr);
  BIGNUM* s = BN_bin2bn(reinterpret_cast<const unsigned char*>(jose.data()) + 32, 32, nullptr);
  if (!sig || !r || !s || ECDSA_SIG_set0(sig, r, s) != 1) {
    BN_free(r);
    BN_free(s);
    ECDSA_SIG_free(sig);
    return "";
  }
  unsigned char* der = nullptr;
  int n = i2d_ECDSA_SIG(sig, &der);
  std::string out = n > 0 ? std::string(reinterpret_cast<char*>(der), n) : "";
  OPENSSL_free(der);
  ECDSA_SIG_free(sig);
  return out;
}

}  // namespace

ServiceAccountTokens::ServiceAccountTokens(std::unique_ptr<Key> key, Options opts)
    : key_(std::move(key)), opts_(std::move(opts)) {
  if (opts_.api_audiences.empty()) opts_.api_audiences = {opts_.issuer};
}
ServiceAccountTokens::~ServiceAccountTokens() = default;

absl::StatusOr<std::unique_ptr<ServiceAccountTokens>> ServiceAccountTokens::Generate(Options opts) {
  auto key = std::make_unique<Key>();
  key->pkey = EVP_RSA_gen(2048);
  if (!key->pkey) return absl::InternalError("cannot generate the service account signing key");
  return std::unique_ptr<ServiceAccountTokens>(new ServiceAccountTokens(std::move(key), std::move(opts)));
}

absl::StatusOr<std::unique_ptr<ServiceAccountTokens>> ServiceAccountTokens::LoadOrCreate(
    const std::string& key_path, Options opts) {
  std::error_code ec;
  if (std::filesystem::exists(key_path, ec)) {
    FILE* f = std::fopen(key_path.c_str(), "r");
    if (!f) return absl::InvalidArgumentError("cannot read the service account key " + key_path);
    auto key = std::make_unique<Key>();
    key->pkey = PEM_read_PrivateKey(f, nullptr, nullptr, nullptr);
    std::fclose(f);
    const bool rsa = key->pkey && EVP_PKEY_get_base_id(key->pkey) == EVP_PKEY_RSA;
    const bool p256 = key->pkey && EVP_PKEY_get_base_id(key->pkey) == EVP_PKEY_EC &&
                      IsP256(key->pkey);
    if (!rsa && !p256) {
      return absl::InvalidArgumentError("the service account key " + key_path +
                                        " is not a PEM RSA or EC P-256 private key");
    }
    return std::unique_ptr<ServiceAccountTokens>(
        new ServiceAccountTokens(std::move(key), std::move(opts)));
  }
  auto gen = Generate(std::move(opts));
  if (!gen.ok()) return gen.status();
  std::filesystem::create_directories(std::filesystem::path(key_path).parent_path(), ec);
  std::string tmp = key_path + ".tmp";
  mode_t old = umask(077);
  FILE* f = std::fopen(tmp.c_str(), "w");
  umask(old);
  if (!f) return absl::InvalidArgumentError("cannot write the service account key " + key_path);
  bool ok = PEM_write_PrivateKey(f, (*gen)->key_->pkey, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  ok = std::fflush(f) == 0 && fsync(fileno(f)) == 0 && ok;
  std::fclose(f);
  if (!ok) return absl::InternalError("cannot write the service account key " + key_path);
  std::filesystem::rename(tmp, key_path, ec);
  if (ec) return absl::InternalError("cannot write the service account key " + key_path);
  return gen;
}

bool ServiceAccountTokens::LooksLikeJwt(std::string_view token) {
  int dots = 0;
  for (char c : token) {
    if (c == '.') ++dots;
    else if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
  }
  return dots == 2;
}

std::string ServiceAccountTokens::Issue(const ServiceAccountClaims& c) const {
  Json header = {{"alg", key_->alg()}, {"typ", "JWT"}};
  std::vector<std::string> aud = c.audiences.empty() ? opts_.api_audiences : c.audiences;
  int64_t iat = absl::ToUnixSeconds(c.issued_at), exp = absl::ToUnixSeconds(c.expires);
  Json payload = {{"aud", aud}, {"exp", exp}, {"iat", iat}, {"iss", opts_.issuer},
                  {"jti", c.jti}, {"nbf", iat}};
  if (!c.node.empty()) {
    payload["kubernetes.io"] = {{"node", {{"name", c.node}}}};
    payload["sub"] = absl::StrCat(kNodeUserPrefix, c.node);
  } else {
    payload["kubernetes.io"] = {{"namespace", c.ns},
                                {"serviceaccount", {{"name", c.name}, {"uid", c.uid}}}};
    payload["sub"] = absl::StrCat(kServiceAccountPrefix, c.ns, ":", c.name);
  }
  std::string signing_input =
      absl::StrCat(Base64UrlEncode(header.dump()), ".", Base64UrlEncode(payload.dump()));
  std::string sig;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  size_t len = 0;
  if (EVP_DigestSignInit(ctx, nullptr, EVP_sha256(), nullptr, key_->pkey) == 1 &&
      EVP_DigestSign(ctx, nullptr, &len, reinterpret_cast<const unsigned char*>(signing_input.data()),
                     signing_input.size()) == 1) {
    sig.resize(len);
    if (EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(sig.data()), &len,
                       reinterpret_cast<const unsigned char*>(signing_input.data()),
                       signing_input.size()) == 1) {
      sig.resize(len);
    } else {
      sig.clear();
    }
  }
  EVP_MD_CTX_free(ctx);
  if (key_->ec()) sig = DerToJose(sig);
  return absl::StrCat(signing_input, ".", Base64UrlEncode(sig));
}

absl::StatusOr<ServiceAccountClaims> ServiceAccountTokens::Verify(std::string_view token,
                                                                 absl::Time now) const {
  if (token.size() > 16384 || !LooksLikeJwt(token)) return Unauth("not a JWT");
  std::vector<std::string> parts = absl::StrSplit(Sv(token), '.');
  if (parts.size() != 3) return Unauth("not a JWT");
  std::string header_raw, payload_raw, sig;
  if (!Base64UrlDecode(parts[0], &header_raw) || !Base64UrlDecode(parts[1], &payload_raw) ||
      !Base64UrlDecode(parts[2], &sig)) {
    return Unauth("malformed JWT encoding");
  }
  Json header = Json::parse(header_raw, nullptr, false);
  // Only the key's own algorithm (never "none", never RS256 with an EC key).
  if (!header.is_object() || header.value("alg", Json()) != Json(key_->alg())) {
    return Unauth("unsupported JWT algorithm");
  }
  if (key_->ec()) {
    sig = JoseToDer(sig);
    if (sig.empty()) return Unauth("invalid JWT signature");
  }
  std::string_view signing_input = token.substr(0, parts[0].size() + 1 + parts[1].size());
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  bool ok = EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, key_->pkey) == 1 &&
            EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(sig.data()), sig.size(),
                             reinterpret_cast<const unsigned char*>(signing_input.data()),
                             signing_input.size()) == 1;
  EVP_MD_CTX_free(ctx);
  if (!ok) return Unauth("invalid JWT signature");
  Json p = Json::parse(payload_raw, nullptr, false);
  if (!p.is_object()) return Unauth("malformed JWT claims");
  if (p.value("iss", Json()) != Json(opts_.issuer)) return Unauth("JWT issuer mismatch");
  auto num = [&](const char* k) -> std::optional<int64_t> {
    auto it = p.find(k);
    if (it == p.end() || !it->is_number_integer()) return std::nullopt;
    return it->get<int64_t>();
  };
  auto exp = num("exp");
  if (!exp || now >= absl::FromUnixSeconds(*exp)) return Unauth("token has expired");
  constexpr absl::Duration kSkew = absl::Seconds(60);
  if (auto nbf = num("nbf"); nbf && now + kSkew < absl::FromUnixSeconds(*nbf)) {
    return Unauth("token is not valid yet");
  }
  ServiceAccountClaims c;
  c.expires = absl::FromUnixSeconds(*exp);
  c.issued_at = absl::FromUnixSeconds(num("iat").value_or(0));
  if (auto it = p.find("aud"); it != p.end()) {
    if (it->is_string()) c.audiences.push_back(it->get<std::string>());
    if (it->is_array()) {
      for (const auto& a : *it) {
        if (a.is_string()) c.audiences.push_back(a.get<std::string>());
      }
    }
  }
  bool aud_ok = false;
  for (const auto& a : c.audiences) {
    for (const auto& want : opts_.api_audiences) aud_ok = aud_ok || a == want;
  }
  if (!aud_ok) return Unauth("token audiences are not accepted");
  auto k8s = p.find("kubernetes.io");
  if (k8s == p.end() || !k8s->is_object()) return Unauth("missing kubernetes.io claim");
  auto str = [](const Json& o, const char* k) {
    auto it = o.find(k);
    return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  c.jti = str(p, "jti");
  if (auto node = k8s->find("node"); node != k8s->end() && node->is_object() &&
                                     !k8s->contains("serviceaccount")) {
    c.node = str(*node, "name");
    if (c.node.empty() || str(p, "sub") != absl::StrCat(kNodeUserPrefix, c.node)) {
      return Unauth("malformed node claims");
    }
    return c;
  }
  c.ns = str(*k8s, "namespace");
  auto sa = k8s->find("serviceaccount");
  if (sa != k8s->end() && sa->is_object()) {
    c.name = str(*sa, "name");
    c.uid = str(*sa, "uid");
  }
  if (c.ns.empty() || c.name.empty() ||
      str(p, "sub") != absl::StrCat(kServiceAccountPrefix, c.ns, ":", c.name)) {
    return Unauth("malformed service account claims");
  }
  return c;
}

}  // namespace batchd::auth
