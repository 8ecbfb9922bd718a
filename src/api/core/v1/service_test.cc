#include <gtest/gtest.h>

#include "api/core/v1/internal/service.h"

namespace batchd::api::core_v1::internal {
namespace {

std::string Msg(const ErrorList& errs) { return errs.empty() ? "" : JoinMessages(errs); }

absl::Time Now() { return absl::FromUnixSeconds(1704153600); }  // 2024-01-02T00:00:00Z

Json Headless(const std::string& name = "workers") {
  return Json{{"apiVersion", "v1"},
              {"kind", "Service"},
              {"metadata", {{"name", name}, {"namespace", "default"}}},
              {"spec",
               {{"clusterIP", "None"},
                {"selector", {{"app", "sort"}}},
                {"ports", Json::array({{{"name", "rpc"}, {"port", 7000}}})}}}};
}

Json Defaulted(Json svc) {
  SetDefaultsService(svc);
  return svc;
}

TEST(ServiceTest, Defaults) {
  Json svc = Defaulted(Headless());
  const Json& spec = svc["spec"];
  EXPECT_EQ(spec["type"], "ClusterIP");
  EXPECT_EQ(spec["sessionAffinity"], "None");
  EXPECT_EQ(spec["ports"][0]["protocol"], "TCP");
  EXPECT_EQ(spec["ports"][0]["targetPort"], 7000);
  EXPECT_EQ(spec["clusterIPs"], Json::array({"None"}));
  EXPECT_EQ(spec["internalTrafficPolicy"], "Cluster");
  EXPECT_EQ(spec["ipFamilyPolicy"], "SingleStack");
  EXPECT_EQ(spec["ipFamilies"], Json::array({"IPv4"}));
  // A given targetPort (a name too) is kept.
  Json named = Headless();
  named["spec"]["ports"][0]["targetPort"] = "rpc";
  EXPECT_EQ(Defaulted(named)["spec"]["ports"][0]["targetPort"], "rpc");
  EXPECT_EQ(Msg(ValidateService(Defaulted(Headless()))), "");
}

TEST(ServiceTest, Validate) {
  struct Case {
    std::string name;
    std::function<void(Json&)> edit;
    std::string want;  // Joined messages; "" when valid.
  };
  const std::string no_vip =
      "batchd serves only headless Services (type ClusterIP with clusterIP: None): there are no "
      "virtual service IPs, node ports or load balancers; pods reach each other by name at "
      "their node's address";
  std::vector<Case> cases = {
      {"valid", [](Json&) {}, ""},
      {"no ports is fine when headless", [](Json& s) { s["spec"].erase("ports"); }, ""},
      {"name is a DNS-1035 label", [](Json& s) { s["metadata"]["name"] = "1abc"; },
       "metadata.name: Invalid value: \"1abc\": a DNS-1035 label must consist of lower case "
       "alphanumeric characters or '-', start with an alphabetic character, and end with an "
       "alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
       "'[a-z]([-a-z0-9]*[a-z0-9])?')"},
      {"cluster IP", [](Json& s) { s["spec"].erase("clusterIP"); },
       "spec.clusterIP: Forbidden: " + no_vip},
      {"explicit IP", [](Json& s) { s["spec"]["clusterIP"] = "10.0.0.1"; },
       "spec.clusterIP: Forbidden: " + no_vip},
      {"node port type",
       [](Json& s) { s["spec"]["type"] = "NodePort"; },
       "spec.type: Forbidden: type NodePort is not supported by batchd (" + no_vip + ")"},
      {"load balancer type", [](Json& s) { s["spec"]["type"] = "LoadBalancer"; },
       "spec.type: Forbidden: type LoadBalancer is not supported by batchd (" + no_vip + ")"},
      {"external name",
       [](Json& s) {
         s["spec"]["type"] = "ExternalName";
         s["spec"]["externalName"] = "example.com";
       },
       "[spec.type: Forbidden: type ExternalName is not supported by batchd (" + no_vip +
           "), spec.externalName: Forbidden: externalName is not supported by batchd (" +
           no_vip + ")]"},
      {"unknown type", [](Json& s) { s["spec"]["type"] = "Mesh"; },
       "spec.type: Unsupported value: \"Mesh\": supported values: \"ClusterIP\", "
       "\"ExternalName\", \"LoadBalancer\", \"NodePort\""},
      {"selector required", [](Json& s) { s["spec"].erase("selector"); },
       "spec.selector: Required value: batchd serves headless Services with a selector only: "
       "their EndpointSlices list the selected pods"},
      {"bad selector", [](Json& s) { s["spec"]["selector"] = {{"app", "a b"}}; },
       "spec.selector: Invalid value: \"a b\": a valid label must be an empty string or consist "
       "of alphanumeric characters, '-', '_' or '.', and must start and end with an "
       "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
       "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"},
      {"port range", [](Json& s) { s["spec"]["ports"][0]["port"] = 70000; },
       "[spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive, "
       "spec.ports[0].targetPort: Invalid value: 70000: must be between 1 and 65535, "
       "inclusive]"},
      {"two ports need names",
       [](Json& s) {
         s["spec"]["ports"].push_back({{"port", 8000}, {"protocol", "TCP"}, {"targetPort", 8000}});
       },
       "spec.ports[1].name: Required value"},
      {"duplicate port",
       [](Json& s) {
         s["spec"]["ports"].push_back(
             {{"name", "b"}, {"port", 7000}, {"protocol", "TCP"}, {"targetPort", 1}});
       },
       "spec.ports[1]: Duplicate value: {\"port\":7000,\"protocol\":\"TCP\"}"},
      {"bad named target", [](Json& s) { s["spec"]["ports"][0]["targetPort"] = "Rpc"; },
       "spec.ports[0].targetPort: Invalid value: \"Rpc\": must contain only alpha-numeric "
       "characters (a-z, 0-9), and hyphens (-)"},
      {"node port", [](Json& s) { s["spec"]["ports"][0]["nodePort"] = 30000; },
       "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"},
      {"protocol", [](Json& s) { s["spec"]["ports"][0]["protocol"] = "ICMP"; },
       "spec.ports[0].protocol: Unsupported value: \"ICMP\": supported values: \"SCTP\", "
       "\"TCP\", \"UDP\""},
      {"client IP affinity", [](Json& s) { s["spec"]["sessionAffinity"] = "ClientIP"; },
       "spec.sessionAffinity: Forbidden: ClientIP session affinity is not supported by batchd: "
       "a headless service has no proxy to keep it"},
      {"external IPs", [](Json& s) { s["spec"]["externalIPs"] = {"1.2.3.4"}; },
       "spec.externalIPs: Forbidden: externalIPs is not supported by batchd (" + no_vip + ")"},
      {"dual stack", [](Json& s) { s["spec"]["ipFamilyPolicy"] = "RequireDualStack"; },
       "spec.ipFamilyPolicy: Invalid value: \"RequireDualStack\": this cluster is not "
       "configured for dual-stack services"},
      {"IPv6", [](Json& s) { s["spec"]["ipFamilies"] = {"IPv6"}; },
       "spec.ipFamilies[0]: Invalid value: \"IPv6\": not configured on this cluster"},
      {"clusterIPs mismatch", [](Json& s) { s["spec"]["clusterIPs"] = {"10.0.0.1"}; },
       "spec.clusterIPs[0]: Invalid value: \"10.0.0.1\": must match `clusterIP` when set"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Json svc = Headless();
    c.edit(svc);
    SetDefaultsService(svc);
    EXPECT_EQ(Msg(ValidateService(svc)), c.want);
  }
}

TEST(ServiceTest, ClusterIpImmutable) {
  Json old = Defaulted(Headless());
  Json now = old;
  now["spec"]["clusterIP"] = "10.0.0.9";
  now["spec"]["clusterIPs"] = {"10.0.0.9"};
  EXPECT_EQ(Msg(ValidateServiceUpdate(now, old)),
            "spec.clusterIP: Invalid value: \"10.0.0.9\": field is immutable");
  now = old;
  now["spec"]["selector"] = {{"app", "other"}};
  now["spec"]["publishNotReadyAddresses"] = true;
  EXPECT_EQ(Msg(ValidateServiceUpdate(now, old)), "");
}

TEST(ServiceTest, Rows) {
  EXPECT_EQ(ServiceColumns().size(), 6u);
  Json svc = Defaulted(Headless());
  svc["metadata"]["creationTimestamp"] = "2024-01-01T23:55:00Z";
  svc["spec"]["ports"].push_back({{"name", "b"}, {"port", 53}, {"protocol", "UDP"}});
  svc["spec"]["selector"]["tier"] = "a";
  EXPECT_EQ(ServiceRowCells(svc, Now()),
            (std::vector<Json>{"ClusterIP", "None", "<none>", "7000/TCP,53/UDP", "5m",
                               "app=sort,tier=a"}));
  Json bare = Json::object();
  EXPECT_EQ(ServiceRowCells(bare, Now()),
            (std::vector<Json>{"", "<none>", "<none>", "<none>", "<unknown>", "<none>"}));
}

}  // namespace
}  // namespace batchd::api::core_v1::internal
