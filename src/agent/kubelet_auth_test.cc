// The agent's log port: kubelet's authentication (a verified client
// certificate, else 401) and webhook authorization (a review per user,
// verb and subresource, cached), and where the server's proxy connects.
#include "agent/kubelet_auth.h"

#include "agent/internal/kubelet_client.h"
#include "auth/user.h"
#include "common/testing/fake_clock.h"
#include "gtest/gtest.h"

namespace batchd::agent {
namespace {

using api::Json;

apiserver::HttpRequest Get(const std::string& path, const std::string& cn,
                           std::vector<std::string> orgs = {}) {
  apiserver::HttpRequest r;
  r.method = "GET";
  r.path = path;
  if (!cn.empty()) r.peer_cert = apiserver::HttpRequest::PeerCertificate{cn, std::move(orgs)};
  return r;
}

TEST(KubeletAuthTest, AttributesFollowKubeletsPathMapping) {
  EXPECT_EQ(KubeletRequestAttributes(Get("/containerLogs/ns/p/c", "")).subresource, "proxy");
  EXPECT_EQ(KubeletRequestAttributes(Get("/stats/summary", "")).subresource, "stats");
  EXPECT_EQ(KubeletRequestAttributes(Get("/metrics/cadvisor", "")).subresource, "metrics");
  EXPECT_EQ(KubeletRequestAttributes(Get("/logs/syslog", "")).subresource, "log");
  EXPECT_EQ(KubeletRequestAttributes(Get("/statsx", "")).subresource, "proxy");
  auto post = Get("/exec/ns/p/c", "");
  post.method = "POST";
  EXPECT_EQ(KubeletRequestAttributes(post).verb, "create");
  EXPECT_EQ(KubeletRequestAttributes(Get("/pods", "")).verb, "get");
}

TEST(KubeletAuthTest, NoCertificateIsUnauthorizedWithoutAReview) {
  FakeClock clock;
  int reviews = 0;
  KubeletAuth auth([&](const KubeletUser&, const std::string&, const std::string&) {
    ++reviews;
    return absl::StatusOr<bool>(true);
  }, clock);
  apiserver::BufferWriter w;
  EXPECT_FALSE(auth.Admit(Get("/containerLogs/ns/p/c", ""), w));
  EXPECT_EQ(w.code(), 401);
  EXPECT_EQ(w.body(), "Unauthorized\n");
  apiserver::BufferWriter w2;
  auto empty_cn = Get("/containerLogs/ns/p/c", "");
  empty_cn.peer_cert = apiserver::HttpRequest::PeerCertificate{"", {"system:masters"}};
  EXPECT_FALSE(auth.Admit(empty_cn, w2));
  EXPECT_EQ(w2.code(), 401);
  EXPECT_EQ(reviews, 0);
}

TEST(KubeletAuthTest, ReviewedAndCachedAsKubeletDoes) {
  FakeClock clock;
  std::vector<std::string> asked;
  KubeletAuth auth([&](const KubeletUser& u, const std::string& verb, const std::string& sub) {
    asked.push_back(u.name + " " + verb + " " + sub);
    bool masters = false;
    for (const auto& g : u.groups) masters |= g == "system:masters";
    return absl::StatusOr<bool>(masters);
  }, clock);
  apiserver::BufferWriter ok;
  EXPECT_TRUE(auth.Admit(Get("/containerLogs/ns/p/c", "batchd-apiserver-kubelet-client",
                             {"system:masters"}), ok));
  apiserver::BufferWriter denied;
  EXPECT_FALSE(auth.Admit(Get("/stats/summary", "system:node:n2", {"system:nodes"}), denied));
  EXPECT_EQ(denied.code(), 403);
  EXPECT_EQ(denied.body(),
            "Forbidden (user=system:node:n2, verb=get, resource=nodes, subresource=stats)\n");
  ASSERT_EQ(asked.size(), 2u);
  EXPECT_EQ(asked[0], "batchd-apiserver-kubelet-client get proxy");
  // Cached: allowed for 5 minutes, denied for 30 seconds.
  apiserver::BufferWriter w;
  EXPECT_TRUE(auth.Admit(Get("/containerLogs/ns/q/c", "batchd-apiserver-kubelet-client",
                             {"system:masters"}), w));
  EXPECT_FALSE(auth.Admit(Get("/stats/summary", "system:node:n2", {"system:nodes"}), w));
  EXPECT_EQ(asked.size(), 2u);
  clock.Advance(absl::Seconds(31));
  EXPECT_FALSE(auth.Admit(Get("/stats/summary", "system:node:n2", {"system:nodes"}), w));
  EXPECT_EQ(asked.size(), 3u);
  EXPECT_TRUE(auth.Admit(Get("/containerLogs/ns/q/c", "batchd-apiserver-kubelet-client",
                             {"system:masters"}), w));
  EXPECT_EQ(asked.size(), 3u);
  clock.Advance(absl::Minutes(5));
  EXPECT_TRUE(auth.Admit(Get("/containerLogs/ns/q/c", "batchd-apiserver-kubelet-client",
                             {"system:masters"}), w));
  EXPECT_EQ(asked.size(), 4u);
}

TEST(KubeletAuthTest, AFailedReviewRefusesAndIsNotCached) {
  FakeClock clock;
  int calls = 0;
  KubeletAuth auth([&](const KubeletUser&, const std::string&, const std::string&) {
    ++calls;
    return absl::StatusOr<bool>(absl::UnavailableError("server down"));
  }, clock);
  apiserver::BufferWriter w;
  EXPECT_FALSE(auth.Admit(Get("/containerLogs/ns/p/c", "u"), w));
  EXPECT_EQ(w.code(), 500);
  EXPECT_FALSE(auth.Admit(Get("/containerLogs/ns/p/c", "u"), w));
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(auth.cached(), 0u);
}

TEST(KubeletAuthTest, TheCacheIsBounded) {
  FakeClock clock;
  KubeletAuth auth([](const KubeletUser&, const std::string&, const std::string&) {
    return absl::StatusOr<bool>(true);
  }, clock);
  for (size_t i = 0; i < kMaxCachedDecisions + 10; ++i) {
    apiserver::BufferWriter w;
    ASSERT_TRUE(auth.Admit(Get("/stats/summary", "user" + std::to_string(i)), w));
    ASSERT_LE(auth.cached(), kMaxCachedDecisions);
  }
}

TEST(KubeletClientTest, TheProxyGoesOnlyWhereTheNodesAnnotationSays) {
  KubeletClientOptions kc{"/pki/kubelet-client.crt", "/pki/kubelet-client.key"};
  Json node = {{"metadata", {{"name", "n1"}}},
               {"status", {{"addresses", {{{"type", "InternalIP"}, {"address", "10.0.0.9"}}}},
                           {"daemonEndpoints", {{"kubeletEndpoint", {{"Port", 10250}}}}}}}};
  // status.addresses alone (which other writers may set) is not enough.
  auto none = internal::KubeletTargetFor(node, kc);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no authenticated log endpoint"), std::string::npos);
  node["metadata"]["annotations"][auth::kKubeletEndpointAnnotation] =
      Json({{"address", "10.0.0.5"}, {"port", 10251}, {"ca", "PEM"}}).dump();
  auto t = internal::KubeletTargetFor(node, kc);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->base_url, "https://10.0.0.5:10251");
  EXPECT_EQ(t->options.ca_data, "PEM");
  EXPECT_EQ(t->options.client_cert_file, kc.cert_file);
  EXPECT_EQ(t->options.client_key_file, kc.key_file);
  node["metadata"]["annotations"][auth::kKubeletEndpointAnnotation] =
      Json({{"address", "fd00::1"}, {"port", 1}, {"ca", "PEM"}}).dump();
  EXPECT_EQ(internal::KubeletTargetFor(node, kc)->base_url, "https://[fd00::1]:1");
  for (const Json& bad : {Json({{"address", "evil.example.com"}, {"port", 1}, {"ca", "PEM"}}),
                          Json({{"address", "10.0.0.5"}, {"port", 0}, {"ca", "PEM"}}),
                          Json({{"address", "10.0.0.5"}, {"port", 70000}, {"ca", "PEM"}}),
                          Json({{"address", "10.0.0.5"}, {"port", 1}})}) {
    node["metadata"]["annotations"][auth::kKubeletEndpointAnnotation] = bad.dump();
    EXPECT_FALSE(internal::KubeletTargetFor(node, kc).ok()) << bad.dump();
  }
  node["metadata"]["annotations"][auth::kKubeletEndpointAnnotation] = "not json";
  EXPECT_FALSE(internal::KubeletTargetFor(node, kc).ok());
  // Without a client certificate the server does not connect at all.
  node["metadata"]["annotations"][auth::kKubeletEndpointAnnotation] =
      Json({{"address", "10.0.0.5"}, {"port", 10251}, {"ca", "PEM"}}).dump();
  EXPECT_FALSE(internal::KubeletTargetFor(node, {}).ok());
}

}  // namespace
}  // namespace batchd::agent
