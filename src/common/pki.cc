#include "common/pki.h"

#include <arpa/inet.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace batchd::pki {

namespace {

struct Free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
  void operator()(BIGNUM* p) const { BN_free(p); }
};
template <class T>
using Ptr = std::unique_ptr<T, Free>;

absl::Status SslError(const std::string& what) {
  return absl::InternalError(absl::StrCat("openssl: ", what));
}

std::string ToPem(X509* cert) {
  Ptr<BIO> bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(bio.get(), cert);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, n);
}

std::string ToPem(EVP_PKEY* key) {
  Ptr<BIO> bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, n);
}

Ptr<X509> CertFromPem(const std::string& pem) {
  Ptr<BIO> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  return Ptr<X509>(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
}

Ptr<EVP_PKEY> KeyFromPem(const std::string& pem) {
  Ptr<BIO> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  return Ptr<EVP_PKEY>(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
}

bool AddExt(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  Ptr<X509_EXTENSION> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
  return ext && X509_add_ext(cert, ext.get(), -1) == 1;
}

// A certificate for `key` named `subject`, valid for `validity`, with a
// random serial; issuer and extensions are set by the caller.
Ptr<X509> NewCert(EVP_PKEY* key, const std::string& cn, const std::vector<std::string>& orgs,
                  absl::Duration validity) {
  Ptr<X509> cert(X509_new());
  X509_set_version(cert.get(), 2);
  unsigned char serial[16];
  RAND_bytes(serial, sizeof(serial));
  serial[0] &= 0x7f;
  Ptr<BIGNUM> bn(BN_bin2bn(serial, sizeof(serial), nullptr));
  BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert.get()));
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);  // Tolerates clock skew.
  X509_gmtime_adj(X509_getm_notAfter(cert.get()),
                  static_cast<long>(absl::ToInt64Seconds(validity)));
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  for (const auto& o : orgs) {
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8,
                               reinterpret_cast<const unsigned char*>(o.c_str()), -1, -1, 0);
  }
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  return cert;
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

absl::Status WriteFile(const std::string& path, const std::string& data, mode_t mode) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return absl::InternalError("cannot write " + tmp);
    ::chmod(tmp.c_str(), mode);
    out << data;
    out.flush();
    if (!out) return absl::InternalError("cannot write " + tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return absl::InternalError("cannot rename " + tmp + ": " + ec.message());
  return absl::OkStatus();
}

}  // namespace

bool IsIpAddress(const std::string& s) {
  unsigned char buf[16];
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

absl::StatusOr<KeyPair> NewCa(const std::string& common_name, absl::Duration validity) {
  Ptr<EVP_PKEY> key(EVP_EC_gen("P-256"));
  if (!key) return SslError("generate a key");
  Ptr<X509> cert = NewCert(key.get(), common_name, {}, validity);
  X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get()));
  if (!AddExt(cert.get(), cert.get(), NID_basic_constraints, "critical,CA:TRUE") ||
      !AddExt(cert.get(), cert.get(), NID_key_usage,
              "critical,digitalSignature,keyCertSign,cRLSign") ||
      !AddExt(cert.get(), cert.get(), NID_subject_key_identifier, "hash")) {
    return SslError("CA extensions");
  }
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) return SslError("sign the CA");
  return KeyPair{ToPem(cert.get()), ToPem(key.get())};
}

absl::StatusOr<KeyPair> Issue(const KeyPair& ca, const CertRequest& req) {
  Ptr<X509> ca_cert = CertFromPem(ca.cert_pem);
  Ptr<EVP_PKEY> ca_key = KeyFromPem(ca.key_pem);
  if (!ca_cert || !ca_key) return absl::InvalidArgumentError("the CA certificate or key is not PEM");
  Ptr<EVP_PKEY> key(EVP_EC_gen("P-256"));
  if (!key) return SslError("generate a key");
  Ptr<X509> cert = NewCert(key.get(), req.common_name, req.organizations, req.validity);
  X509_set_issuer_name(cert.get(), X509_get_subject_name(ca_cert.get()));
  std::vector<std::string> eku;
  if (req.server_auth) eku.push_back("serverAuth");
  if (req.client_auth) eku.push_back("clientAuth");
  std::vector<std::string> sans;
  for (const auto& d : req.dns_names) sans.push_back("DNS:" + d);
  for (const auto& ip : req.ips) sans.push_back("IP:" + ip);
  bool ok = AddExt(cert.get(), ca_cert.get(), NID_basic_constraints, "critical,CA:FALSE") &&
            AddExt(cert.get(), ca_cert.get(), NID_key_usage,
                   "critical,digitalSignature,keyEncipherment") &&
            AddExt(cert.get(), ca_cert.get(), NID_authority_key_identifier, "keyid:always");
  if (ok && !eku.empty()) {
    ok = AddExt(cert.get(), ca_cert.get(), NID_ext_key_usage, absl::StrJoin(eku, ","));
  }
  if (ok && !sans.empty()) {
    ok = AddExt(cert.get(), ca_cert.get(), NID_subject_alt_name, absl::StrJoin(sans, ","));
  }
  if (!ok) return SslError("certificate extensions (a bad name in the SANs?)");
  if (X509_sign(cert.get(), ca_key.get(), EVP_sha256()) == 0) return SslError("sign");
  return KeyPair{ToPem(cert.get()), ToPem(key.get())};
}

namespace {

// DIR/ca.crt and ca.key, created (with DIR, mode 0700) when missing; a new
// CA removes `stale` (certificates the old one signed).
absl::StatusOr<KeyPair> LoadOrCreateCa(const std::string& dir, const std::string& ca_name,
                                       const std::vector<std::string>& stale) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return absl::InternalError("cannot create " + dir + ": " + ec.message());
  ::chmod(dir.c_str(), 0700);
  const std::string cert_file = (fs::path(dir) / "ca.crt").string();
  const std::string key_file = (fs::path(dir) / "ca.key").string();
  if (fs::exists(cert_file) && fs::exists(key_file)) {
    auto c = ReadFile(cert_file);
    auto k = ReadFile(key_file);
    if (!c.ok()) return c.status();
    if (!k.ok()) return k.status();
    return KeyPair{*c, *k};
  }
  auto c = NewCa(ca_name);
  if (!c.ok()) return c.status();
  if (auto st = WriteFile(key_file, c->key_pem, 0600); !st.ok()) return st;
  if (auto st = WriteFile(cert_file, c->cert_pem, 0644); !st.ok()) return st;
  for (const auto& f : stale) fs::remove(fs::path(dir) / f, ec);
  return *c;
}

}  // namespace

absl::StatusOr<ServingPki> EnsureServingPki(const std::string& dir,
                                            const std::vector<std::string>& sans,
                                            const std::string& common_name) {
  namespace fs = std::filesystem;
  std::error_code ec;
  ServingPki p;
  p.ca_cert_file = (fs::path(dir) / "ca.crt").string();
  p.ca_key_file = (fs::path(dir) / "ca.key").string();
  p.cert_file = (fs::path(dir) / "apiserver.crt").string();
  p.key_file = (fs::path(dir) / "apiserver.key").string();
  p.client_ca_file = p.ca_cert_file;
  const std::string sans_file = (fs::path(dir) / "apiserver.sans").string();

  auto ca_or = LoadOrCreateCa(dir, common_name == "batchd-apiserver" ? "batchd-ca" : common_name + "-ca",
                              {"apiserver.crt", kKubeletClientCert});
  if (!ca_or.ok()) return ca_or.status();
  const KeyPair& ca = *ca_or;
  std::set<std::string> names = {"localhost", "127.0.0.1", "::1"};
  for (const auto& s : sans) {
    if (!s.empty()) names.insert(s);
  }
  std::string want = absl::StrJoin(names, "\n");
  auto have = ReadFile(sans_file);
  if (fs::exists(p.cert_file) && fs::exists(p.key_file) && have.ok() && *have == want) return p;
  CertRequest req;
  req.common_name = common_name;
  req.server_auth = true;
  for (const auto& n : names) (IsIpAddress(n) ? req.ips : req.dns_names).push_back(n);
  auto leaf = Issue(ca, req);
  if (!leaf.ok()) return leaf.status();
  if (auto st = WriteFile(p.key_file, leaf->key_pem, 0600); !st.ok()) return st;
  if (auto st = WriteFile(p.cert_file, leaf->cert_pem, 0644); !st.ok()) return st;
  if (auto st = WriteFile(sans_file, want, 0644); !st.ok()) return st;
  return p;
}

absl::StatusOr<ClientCertFiles> EnsureKubeletClientCert(const std::string& dir) {
  namespace fs = std::filesystem;
  auto ca = LoadOrCreateCa(dir, "batchd-ca", {"apiserver.crt", kKubeletClientCert});
  if (!ca.ok()) return ca.status();
  ClientCertFiles f{(fs::path(dir) / kKubeletClientCert).string(),
                    (fs::path(dir) / kKubeletClientKey).string(),
                    (fs::path(dir) / "ca.crt").string()};
  if (fs::exists(f.cert_file) && fs::exists(f.key_file)) return f;
  CertRequest req;
  req.common_name = kKubeletClientUser;
  req.organizations = {"system:masters"};
  req.client_auth = true;
  auto leaf = Issue(*ca, req);
  if (!leaf.ok()) return leaf.status();
  if (auto st = WriteFile(f.key_file, leaf->key_pem, 0600); !st.ok()) return st;
  if (auto st = WriteFile(f.cert_file, leaf->cert_pem, 0644); !st.ok()) return st;
  return f;
}

}  // namespace batchd::pki
