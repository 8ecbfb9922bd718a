#include "agent/internal/hosts.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "api/json_access.h"
#include "common/string_view.h"

namespace batchd::agent::internal {

PodNames NamesOf(const api::Json& pod) {
  const api::Json& spec = api::MemberObject(pod, "spec");
  PodNames n;
  n.hostname = std::string(api::StringMember(spec, "hostname"));
  if (n.hostname.empty()) {
    n.hostname = std::string(api::StringMember(api::MemberObject(pod, "metadata"), "name"));
    if (n.hostname.size() > 63) n.hostname.resize(63);
    while (!n.hostname.empty() && (n.hostname.back() == '-' || n.hostname.back() == '.')) {
      n.hostname.pop_back();
    }
  }
  const std::string_view sub = api::StringMember(spec, "subdomain");
  if (!sub.empty()) {
    n.domain = absl::StrCat(Sv(sub), ".",
                            Sv(api::StringMember(api::MemberObject(pod, "metadata"), "namespace")),
                            ".svc.", kClusterDomain);
  }
  n.uts_hostname = api::BoolMember(spec, "setHostnameAsFQDN") && !n.domain.empty()
                       ? absl::StrCat(n.hostname, ".", n.domain)
                       : n.hostname;
  return n;
}

namespace {

// "ADDR\t<host>.<domain>\t<host>.<sub>\t<host>", or "ADDR\t<host>" without a domain.
std::string Line(std::string_view address, std::string_view host, std::string_view subdomain,
                 std::string_view domain) {
  if (domain.empty()) return absl::StrCat(Sv(address), "\t", Sv(host), "\n");
  return absl::StrCat(Sv(address), "\t", Sv(host), ".", Sv(domain), "\t", Sv(host), ".",
                      Sv(subdomain), "\t", Sv(host), "\n");
}

}  // namespace

std::string RenderHostsFile(std::string_view node_hosts, std::string_view ns,
                            std::string_view pod_name, const PodNames& self,
                            std::string_view subdomain, std::string_view address,
                            std::vector<Peer> peers, const api::Json* host_aliases) {
  std::string out(node_hosts);
  if (!out.empty() && out.back() != '\n') out.push_back('\n');
  absl::StrAppend(&out, "# batchd: pod ", Sv(ns), "/", Sv(pod_name), " and its peers",
                  subdomain.empty() ? "" : " in ", Sv(subdomain),
                  " (kept current by the node agent)\n");
  out += Line(address, self.hostname, subdomain, self.domain);
  std::sort(peers.begin(), peers.end(), [](const Peer& a, const Peer& b) {
    return a.hostname != b.hostname ? a.hostname < b.hostname : a.address < b.address;
  });
  std::set<std::string_view> seen = {self.hostname};
  for (const Peer& p : peers) {
    if (p.hostname.empty() || p.address.empty() || !seen.insert(p.hostname).second) continue;
    out += Line(p.address, p.hostname, subdomain, self.domain);
  }
  if (host_aliases != nullptr && host_aliases->is_array() && !host_aliases->empty()) {
    out += "\n# Entries added by HostAliases.\n";
    for (const api::Json& a : *host_aliases) {
      absl::StrAppend(&out, Sv(api::StringMember(a, "ip")));
      for (const api::Json& h : api::MemberArray(a, "hostnames")) {
        absl::StrAppend(&out, "\t", Sv(api::AsString(h)));
      }
      out += "\n";
    }
  }
  return out;
}

}  // namespace batchd::agent::internal
