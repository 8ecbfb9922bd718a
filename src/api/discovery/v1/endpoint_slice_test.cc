#include <gtest/gtest.h>

#include "api/discovery/v1/discovery_v1.h"

namespace batchd::api::discovery_v1 {
namespace {

std::string Msg(const ErrorList& errs) { return errs.empty() ? "" : JoinMessages(errs); }

absl::Time Now() { return absl::FromUnixSeconds(1704153600); }  // 2024-01-02T00:00:00Z

EndpointValue Ep(const std::string& pod, const std::string& host = "") {
  EndpointValue e;
  e.address = "10.0.0.1";
  e.hostname = host;
  e.node_name = "node-a";
  e.ready = e.serving = true;
  e.pod_namespace = "default";
  e.pod_name = pod;
  e.pod_uid = "uid-" + pod;
  return e;
}

Json Slice(std::vector<EndpointValue> eps = {Ep("p0", "w-0")}) {
  return BuildEndpointSlice("default", "workers-0", {"workers", "svc-uid"}, eps,
                            {{"rpc", 7000, "TCP", ""}});
}

TEST(EndpointSliceTest, WriterRoundTripsThroughTheView) {
  std::vector<EndpointValue> eps = {Ep("p0", "w-0"), Ep("p1")};
  eps[1].ready = false;
  eps[1].terminating = true;
  Json slice = Slice(eps);
  EXPECT_EQ(Msg(ValidateEndpointSlice(slice)), "");
  EndpointSliceView v = EndpointSliceView::Parse(slice);
  EXPECT_EQ(v.service_name, "workers");
  EXPECT_EQ(v.managed_by, kManagedByController);
  EXPECT_EQ(v.meta.ControllerUid(), "svc-uid");
  EXPECT_EQ(EndpointValues(v), eps);
  EXPECT_EQ(EndpointPortValues(v), (std::vector<EndpointPortValue>{{"rpc", 7000, "TCP", ""}}));
  EXPECT_TRUE(v.endpoints[0].ResolvesAsReady());
  EXPECT_FALSE(v.endpoints[1].ResolvesAsReady());
  EXPECT_EQ(v.endpoints[1].hostname, "");
}

TEST(EndpointSliceTest, UnsetReadyResolves) {
  Json slice = Slice();
  slice["endpoints"][0].erase("conditions");
  EXPECT_TRUE(EndpointSliceView::Parse(slice).endpoints[0].ResolvesAsReady());
}

TEST(EndpointSliceTest, Validate) {
  struct Case {
    std::string name;
    std::function<void(Json&)> edit;
    std::string want;
  };
  std::vector<Case> cases = {
      {"valid", [](Json&) {}, ""},
      {"address type", [](Json& s) { s.erase("addressType"); }, "addressType: Required value"},
      {"unknown address type", [](Json& s) { s["addressType"] = "IP"; },
       "addressType: Unsupported value: \"IP\": supported values: \"FQDN\", \"IPv4\", \"IPv6\""},
      {"bad IPv4", [](Json& s) { s["endpoints"][0]["addresses"] = {"10.0.0.300"}; },
       "endpoints[0].addresses[0]: Invalid value: \"10.0.0.300\": must be a valid IPv4 address"},
      {"no address", [](Json& s) { s["endpoints"][0]["addresses"] = Json::array(); },
       "endpoints[0].addresses: Required value: must contain at least 1 address"},
      {"FQDN", [](Json& s) {
         s["addressType"] = "FQDN";
         s["endpoints"][0]["addresses"] = {"example"};
       },
       "endpoints[0].addresses[0]: Invalid value: \"example\": should be a domain with at least "
       "two segments separated by dots"},
      {"hostname", [](Json& s) { s["endpoints"][0]["hostname"] = "W_0"; },
       "endpoints[0].hostname: Invalid value: \"W_0\": a lowercase RFC 1123 label must consist "
       "of lower case alphanumeric characters or '-', and must start and end with an "
       "alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
       "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"},
      {"protocol", [](Json& s) { s["ports"][0]["protocol"] = "ICMP"; },
       "ports[0].protocol: Unsupported value: \"ICMP\": supported values: \"SCTP\", \"TCP\", "
       "\"UDP\""},
      {"duplicate port name", [](Json& s) { s["ports"].push_back(s["ports"][0]); },
       "ports[1].name: Duplicate value: \"rpc\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Json slice = Slice();
    c.edit(slice);
    EXPECT_EQ(Msg(ValidateEndpointSlice(slice)), c.want);
  }
}

TEST(EndpointSliceTest, AtMostAThousandEndpoints) {
  std::vector<EndpointValue> eps(kMaxEndpoints, Ep("p"));
  EXPECT_EQ(Msg(ValidateEndpointSlice(Slice(eps))), "");
  eps.push_back(Ep("p"));
  EXPECT_EQ(Msg(ValidateEndpointSlice(Slice(eps))),
            "endpoints: Too many: 1001: must have at most 1000 items");
}

TEST(EndpointSliceTest, AddressTypeImmutable) {
  Json old = Slice();
  Json now = old;
  now["addressType"] = "FQDN";
  now["endpoints"][0]["addresses"] = {"a.example.com"};
  EXPECT_EQ(Msg(ValidateEndpointSliceUpdate(now, old)),
            "addressType: Invalid value: \"FQDN\": field is immutable");
}

TEST(EndpointSliceTest, Rows) {
  EXPECT_EQ(EndpointSliceColumns().size(), 4u);
  std::vector<EndpointValue> eps = {Ep("a"), Ep("b"), Ep("c"), Ep("d"), Ep("e")};
  eps[1].address = "10.0.0.2";
  Json slice = Slice(eps);
  slice["metadata"]["creationTimestamp"] = "2024-01-01T23:00:00Z";
  EXPECT_EQ(EndpointSliceRowCells(slice, Now()),
            (std::vector<Json>{"IPv4", "7000", "10.0.0.1,10.0.0.2,10.0.0.1 + 2 more...", "60m"}));
  Json bare = Json::object();
  EXPECT_EQ(EndpointSliceRowCells(bare, Now()),
            (std::vector<Json>{"", "<unset>", "<unset>", "<unknown>"}));
}

}  // namespace
}  // namespace batchd::api::discovery_v1
