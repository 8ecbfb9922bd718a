// Pod names on batchd's shared node network: a pod's host name and domain
// (the kubelet's rules), and its hosts file — the node's /etc/hosts followed
// by the pod's own names and those of its peers, the pods that its
// headless Service (spec.subdomain) lists with a hostname — so the ordinary
// resolver (getent, glibc, Python's socket) finds `<host>`, `<host>.<sub>`
// and `<host>.<sub>.<ns>.svc.cluster.local` at the address of the node that
// runs each of them. Pure functions; thread-compatible.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "api/field_error.h"

namespace batchd::agent::internal {

inline constexpr char kClusterDomain[] = "cluster.local";

struct PodNames {
  std::string hostname;  // spec.hostname, else the pod name cut to 63 characters
  std::string domain;    // "<subdomain>.<ns>.svc.cluster.local", or "" without a subdomain
  // What the pod's UTS host name is set to: `hostname`, or hostname.domain
  // with spec.setHostnameAsFQDN.
  std::string uts_hostname;
};
// REQUIRES: `pod` is a Pod object.
PodNames NamesOf(const api::Json& pod);

struct Peer {
  std::string hostname;
  std::string address;
};

// The hosts file of pod `pod_name` in `ns` whose names are `self` at
// `address`: `node_hosts` (the node's /etc/hosts) as is, then a section
// with the pod's line and one line per peer (sorted by host name; the pod
// itself and repeated names left out), each peer reachable as
// `<host>.<subdomain>.<ns>.svc.cluster.local`, `<host>.<subdomain>` and `<host>`,
// then the pod's spec.hostAliases (`host_aliases`, an array or null) as the
// kubelet writes them.
std::string RenderHostsFile(std::string_view node_hosts, std::string_view ns,
                            std::string_view pod_name, const PodNames& self,
                            std::string_view subdomain, std::string_view address,
                            std::vector<Peer> peers, const api::Json* host_aliases = nullptr);

}  // namespace batchd::agent::internal
