#include "agent/internal/hosts.h"

#include <gtest/gtest.h>

namespace batchd::agent::internal {
namespace {

using api::Json;

Json Pod(const std::string& name, const std::string& hostname, const std::string& subdomain) {
  Json spec = Json::object();
  if (!hostname.empty()) spec["hostname"] = hostname;
  if (!subdomain.empty()) spec["subdomain"] = subdomain;
  return {{"metadata", {{"name", name}, {"namespace", "ml"}}}, {"spec", spec}};
}

TEST(HostsTest, NamesFollowTheKubelet) {
  PodNames n = NamesOf(Pod("sort-w-0-1-abcde", "sort-w-0-1", "sort"));
  EXPECT_EQ(n.hostname, "sort-w-0-1");
  EXPECT_EQ(n.domain, "sort.ml.svc.cluster.local");
  EXPECT_EQ(n.uts_hostname, "sort-w-0-1");
  Json fqdn = Pod("p", "h", "s");
  fqdn["spec"]["setHostnameAsFQDN"] = true;
  EXPECT_EQ(NamesOf(fqdn).uts_hostname, "h.s.ml.svc.cluster.local");
  // No spec.hostname: the pod name, cut to 63 characters without a trailing '-'.
  const std::string long_name = std::string(62, 'a') + "-b";
  n = NamesOf(Pod(long_name, "", ""));
  EXPECT_EQ(n.hostname, std::string(62, 'a'));
  EXPECT_EQ(n.domain, "");
}

TEST(HostsTest, RendersNodeHostsThenSelfThenSortedPeers) {
  const PodNames self = NamesOf(Pod("w-1", "w-1", "sort"));
  std::string text = RenderHostsFile("127.0.0.1 localhost", "ml", "w-1", self, "sort",
                                     "10.0.0.2",
                                     {{"w-2", "10.0.0.3"}, {"leader", "10.0.0.1"},
                                      {"w-1", "10.0.0.9"},  // itself: left out
                                      {"w-2", "10.0.0.4"},  // a repeated name: the first kept
                                      {"", "10.0.0.5"}});
  EXPECT_EQ(text,
            "127.0.0.1 localhost\n"
            "# batchd: pod ml/w-1 and its peers in sort (kept current by the node agent)\n"
            "10.0.0.2\tw-1.sort.ml.svc.cluster.local\tw-1.sort\tw-1\n"
            "10.0.0.1\tleader.sort.ml.svc.cluster.local\tleader.sort\tleader\n"
            "10.0.0.3\tw-2.sort.ml.svc.cluster.local\tw-2.sort\tw-2\n");
}

TEST(HostsTest, HostAliasesComeLast) {
  const PodNames self = NamesOf(Pod("solo", "", ""));
  const Json aliases = Json::parse(R"([{"ip": "10.9.9.9", "hostnames": ["db", "db.lab"]}])");
  EXPECT_EQ(RenderHostsFile("", "ml", "solo", self, "", "10.0.0.2", {}, &aliases),
            "# batchd: pod ml/solo and its peers (kept current by the node agent)\n"
            "10.0.0.2\tsolo\n"
            "\n# Entries added by HostAliases.\n"
            "10.9.9.9\tdb\tdb.lab\n");
}

TEST(HostsTest, PodWithoutSubdomainHasOnlyItsName) {
  const PodNames self = NamesOf(Pod("solo", "", ""));
  EXPECT_EQ(RenderHostsFile("", "ml", "solo", self, "", "10.0.0.2", {}),
            "# batchd: pod ml/solo and its peers (kept current by the node agent)\n"
            "10.0.0.2\tsolo\n");
}

}  // namespace
}  // namespace batchd::agent::internal
