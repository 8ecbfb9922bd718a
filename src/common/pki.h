// A small PKI for batchd's TLS: a self-signed CA and certificates it signs
// (EC P-256, SHA-256), as PEM strings. `batchd server` uses it to create its
// CA and serving certificate on first start (EnsureServingPki); tests use it
// to issue client certificates. OpenSSL stays inside pki.cc.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace batchd::pki {

struct KeyPair {
  std::string cert_pem;
  std::string key_pem;
};

struct CertRequest {
  std::string common_name;
  std::vector<std::string> organizations;
  // Subject alternative names: host names and IP addresses (v4 or v6).
  std::vector<std::string> dns_names;
  std::vector<std::string> ips;
  bool server_auth = false;
  bool client_auth = false;
  absl::Duration validity = absl::Hours(24 * 365);
};

// A self-signed CA certificate (basicConstraints CA:TRUE).
absl::StatusOr<KeyPair> NewCa(const std::string& common_name,
                              absl::Duration validity = absl::Hours(24 * 365 * 10));
// A leaf certificate signed by `ca`.
absl::StatusOr<KeyPair> Issue(const KeyPair& ca, const CertRequest& req);

// The files of a server's PKI.
struct ServingPki {
  std::string ca_cert_file;    // Trust this to reach the server (kubectl --certificate-authority).
  std::string ca_key_file;
  std::string cert_file;       // The serving certificate and its key.
  std::string key_file;
  std::string client_ca_file;  // Client certificates verify against this (the same CA).
};

// Creates DIR/ca.crt, ca.key, apiserver.crt and apiserver.key (keys mode
// 0600) unless they exist. The serving certificate names `sans` (host names
// and IPs, which always include localhost, 127.0.0.1 and ::1); it is
// re-issued from the existing CA when the set of names changes.
// `common_name` is the serving certificate's subject (a node agent's log
// port uses its own PKI, with CN "system:node:NAME" and a CA of its own).
absl::StatusOr<ServingPki> EnsureServingPki(const std::string& dir,
                                            const std::vector<std::string>& sans,
                                            const std::string& common_name = "batchd-apiserver");

// The API server's client certificate for node agents' log ports
// (kube-apiserver's --kubelet-client-certificate): DIR/kubelet-client.crt and
// .key, CN kKubeletClientUser, O system:masters, clientAuth, signed by
// DIR/ca.crt (created with the CA when missing, as EnsureServingPki would).
inline constexpr char kKubeletClientCert[] = "kubelet-client.crt";
inline constexpr char kKubeletClientKey[] = "kubelet-client.key";
inline constexpr char kKubeletClientUser[] = "batchd-apiserver-kubelet-client";
struct ClientCertFiles {
  std::string cert_file;
  std::string key_file;
  std::string ca_file;  // The CA that signed it (what agents' --client-ca-file names).
};
absl::StatusOr<ClientCertFiles> EnsureKubeletClientCert(const std::string& dir);

// True when `s` is an IPv4 or IPv6 address literal.
bool IsIpAddress(const std::string& s);

}  // namespace batchd::pki
