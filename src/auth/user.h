// UserInfo: who a request comes from, as kube-apiserver's authenticators
// resolve it (user name, uid, groups, extra), plus the well-known names of
// the Kubernetes identity model.
//
// Thread-safety: a plain value.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace batchd::auth {

inline constexpr char kAnonymousUser[] = "system:anonymous";
inline constexpr char kUnauthenticatedGroup[] = "system:unauthenticated";
inline constexpr char kAuthenticatedGroup[] = "system:authenticated";
inline constexpr char kMastersGroup[] = "system:masters";
inline constexpr char kServiceAccountsGroup[] = "system:serviceaccounts";
inline constexpr char kServiceAccountPrefix[] = "system:serviceaccount:";
inline constexpr char kNodesGroup[] = "system:nodes";
inline constexpr char kNodeUserPrefix[] = "system:node:";
// The annotation of a Node that says where its agent's authenticated log
// port is: {"address": IP, "port": N, "ca": PEM of the CA its serving
// certificate chains to}. Only the node itself (system:node:NAME) may set or
// change it; the API server keeps the stored value on anyone else's writes
// (docs/security.md), so the log proxy never connects where a client said.
inline constexpr char kKubeletEndpointAnnotation[] = "batchd.io/kubelet-endpoint";
// The user that `--allow-loopback-admin` and the generated admin token act as.
inline constexpr char kLocalAdminUser[] = "batchd-admin";

struct UserInfo {
  std::string name;
  std::string uid;
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::string>> extra;

  bool InGroup(const std::string& g) const {
    for (const auto& x : groups) {
      if (x == g) return true;
    }
    return false;
  }
  bool IsAnonymous() const { return name == kAnonymousUser; }
};

// system:anonymous in system:unauthenticated.
UserInfo AnonymousUser();
// The local administrator: batchd-admin in system:masters and system:authenticated.
UserInfo LocalAdminUser();
// "system:serviceaccount:NS:NAME" with the groups Kubernetes gives it.
UserInfo ServiceAccountUser(const std::string& ns, const std::string& name, const std::string& uid);
// Adds system:authenticated unless present (never to system:anonymous).
void AddAuthenticatedGroup(UserInfo& u);

}  // namespace batchd::auth
