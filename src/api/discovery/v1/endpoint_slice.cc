#include <arpa/inet.h>

#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/core/v1/kind_helpers.h"
#include "api/discovery/v1/discovery_v1.h"
#include "api/json_access.h"
#include "api/validation/names.h"
#include "api/validation/object_meta.h"

namespace batchd::api::discovery_v1 {
namespace {

constexpr char kPrefix[] = "io.k8s.api.discovery.v1.";
std::string R(const char* name) { return std::string(kPrefix) + name; }

SchemaPtr EndpointSchema() {
  static const SchemaPtr conditions =
      Object(R("EndpointConditions"), "EndpointConditions represents the current condition of "
                                      "an endpoint.")
          .Field("ready", Bool("The endpoint is ready to receive traffic (a pod that is Ready "
                               "and not terminating, or any pod when the service publishes "
                               "not-ready addresses)."))
          .Field("serving", Bool("The endpoint is Ready, whether terminating or not."))
          .Field("terminating", Bool("The endpoint is terminating."))
          .Build();
  static const SchemaPtr for_zone =
      Object(R("ForZone"), "ForZone provides information about which zones should consume "
                           "this endpoint.")
          .Field("name", Str("The name of the zone.")).Require("name").Build();
  static const SchemaPtr for_node =
      Object(R("ForNode"), "ForNode provides information about which nodes should consume "
                           "this endpoint.")
          .Field("name", Str("The name of the node.")).Require("name").Build();
  static const SchemaPtr hints =
      Object(R("EndpointHints"), "EndpointHints provides hints describing how an endpoint "
                                 "should be consumed.")
          .Field("forNodes", ArrayOf(for_node, "Nodes that should consume this endpoint.")
                                 .ListType("atomic"))
          .Field("forZones", ArrayOf(for_zone, "Zones that should consume this endpoint.")
                                 .ListType("atomic"))
          .Build();
  static const SchemaPtr s =
      Object(R("Endpoint"), "Endpoint represents a single logical \"backend\" implementing a "
                            "service.")
          .Field("addresses", ArrayOf(Str(), "Addresses of this endpoint (on batchd: the "
                                             "address of the node that runs the pod).")
                                  .ListType("set"))
          .Field("conditions", conditions)
          .Field("deprecatedTopology", MapOf(Str(), "Deprecated topology information."))
          .Field("hints", hints)
          .Field("hostname", Str("Hostname of this endpoint: a pod's spec.hostname when its "
                                 "spec.subdomain names the service."))
          .Field("nodeName", Str("The node hosting this endpoint."))
          .Field("targetRef", core_v1::ObjectReferenceSchema())
          .Field("zone", Str("The zone this endpoint exists in."))
          .Require("addresses")
          .Build();
  return s;
}

SchemaPtr EndpointSliceSchema() {
  static const SchemaPtr port =
      Object(R("EndpointPort"), "EndpointPort represents a Port used by an EndpointSlice.")
          .Field("appProtocol", Str("The application protocol for this port."))
          .Field("name", Str("The name of this port (the service port's name)."))
          .Field("port", Int32("The port number of the endpoint."))
          .Field("protocol", Str("TCP, UDP or SCTP."))
          .Build();
  static const SchemaPtr s =
      core_v1::TopLevel(R("EndpointSlice"),
                        "EndpointSlice represents a subset of the endpoints that implement a "
                        "service.")
          .Field("addressType", Str("The type of address carried by this slice: IPv4, IPv6 or "
                                    "FQDN. Immutable.")
                                    .Enum({"FQDN", "IPv4", "IPv6"}))
          .Field("endpoints", ArrayOf(EndpointSchema(), "A list of unique endpoints in this "
                                                        "slice.")
                                  .ListType("atomic"))
          .Field("ports", ArrayOf(port, "The network ports exposed by each endpoint.")
                              .ListType("atomic"))
          .Require("addressType")
          .Build();
  return s;
}

void AddEach(ErrorList& errs, const Path& p, const Json& v, const validation::Messages& msgs) {
  for (const std::string& m : msgs) errs.push_back(Invalid(p, v, m));
}

bool IsIp(int family, const std::string& s) {
  unsigned char buf[16];
  return inet_pton(family, s.c_str(), buf) == 1;
}

void ValidateAddress(ErrorList& errs, const std::string& type, const Json& addr, const Path& p) {
  std::string a(AsString(addr));
  if (type == "IPv4") {
    if (!IsIp(AF_INET, a)) errs.push_back(Invalid(p, addr, "must be a valid IPv4 address"));
  } else if (type == "IPv6") {
    if (!IsIp(AF_INET6, a)) errs.push_back(Invalid(p, addr, "must be a valid IPv6 address"));
  } else if (type == "FQDN") {
    std::string name = !a.empty() && a.back() == '.' ? a.substr(0, a.size() - 1) : a;
    if (name.empty()) {
      errs.push_back(Required(p));
      return;
    }
    AddEach(errs, p, addr, validation::IsDNS1123Subdomain(name));
    if (name.find('.') == std::string::npos) {
      errs.push_back(Invalid(p, addr, "should be a domain with at least two segments "
                                      "separated by dots"));
    }
  }
}

void ValidateEndpoints(ErrorList& errs, const Json& endpoints, const std::string& type,
                       const Path& path) {
  if (endpoints.size() > kMaxEndpoints) {
    errs.push_back(TooMany(path, endpoints.size(), kMaxEndpoints));
  }
  for (size_t i = 0; i < endpoints.size() && i < kMaxEndpoints; ++i) {
    const Json& ep = endpoints[i];
    Path p = path.Index(i);
    const Json& addrs = MemberArray(ep, "addresses");
    if (addrs.empty()) {
      errs.push_back(Required(p.Child("addresses"), "must contain at least 1 address"));
    } else if (addrs.size() > kMaxAddresses) {
      errs.push_back(TooMany(p.Child("addresses"), addrs.size(), kMaxAddresses));
    }
    for (size_t j = 0; j < addrs.size() && j < kMaxAddresses; ++j) {
      ValidateAddress(errs, type, addrs[j], p.Child("addresses").Index(j));
    }
    if (std::string host(StringMember(ep, "hostname")); !host.empty()) {
      AddEach(errs, p.Child("hostname"), host, validation::IsDNS1123Label(host));
    }
    if (std::string node(StringMember(ep, "nodeName")); !node.empty()) {
      AddEach(errs, p.Child("nodeName"), node, validation::IsDNS1123Subdomain(node));
    }
    AppendErrors(errs, validation::ValidateLabels(MemberObject(ep, "deprecatedTopology"),
                                                  p.Child("deprecatedTopology")));
  }
}

void ValidatePorts(ErrorList& errs, const Json& ports, const Path& path) {
  if (ports.size() > kMaxPorts) errs.push_back(TooMany(path, ports.size(), kMaxPorts));
  std::set<std::string> names;
  for (size_t i = 0; i < ports.size() && i < kMaxPorts; ++i) {
    const Json& port = ports[i];
    Path p = path.Index(i);
    std::string name(StringMember(port, "name"));
    if (!name.empty()) AddEach(errs, p.Child("name"), name, validation::IsDNS1123Label(name));
    if (!names.insert(name).second) errs.push_back(Duplicate(p.Child("name"), name));
    std::string protocol(StringMember(port, "protocol"));
    if (protocol.empty()) {
      errs.push_back(Required(p.Child("protocol"), ""));
    } else if (protocol != "TCP" && protocol != "UDP" && protocol != "SCTP") {
      errs.push_back(NotSupported(p.Child("protocol"), protocol, {"SCTP", "TCP", "UDP"}));
    }
    if (const Json* n = FindMember(port, "port"); n != nullptr && n->is_number_integer()) {
      int64_t v = n->get<int64_t>();
      if (v < 0 || v > 65535) {
        errs.push_back(Invalid(p.Child("port"), v, "must be between 0 and 65535, inclusive"));
      }
    }
  }
}

// "a,b,c + 2 more..." as kubectl prints lists; "<unset>" when empty.
std::string ListWithMore(const std::vector<std::string>& all) {
  constexpr size_t kMax = 3;
  std::vector<std::string> shown(all.begin(), all.begin() + std::min(all.size(), kMax));
  std::string out = absl::StrJoin(shown, ",");
  if (all.size() > kMax) return absl::StrCat(out, " + ", all.size() - kMax, " more...");
  return out.empty() ? "<unset>" : out;
}

}  // namespace

ErrorList ValidateEndpointSlice(const Json& slice) {
  ErrorList errs = validation::ValidateObjectMeta(MemberObject(slice, "metadata"), true,
                                                  validation::NameIsDNSSubdomain,
                                                  Path("metadata"));
  std::string type(StringMember(slice, "addressType"));
  if (type.empty()) {
    errs.push_back(Required(Path("addressType"), ""));
  } else if (type != "IPv4" && type != "IPv6" && type != "FQDN") {
    errs.push_back(NotSupported(Path("addressType"), type, {"FQDN", "IPv4", "IPv6"}));
  }
  ValidateEndpoints(errs, MemberArray(slice, "endpoints"), type, Path("endpoints"));
  ValidatePorts(errs, MemberArray(slice, "ports"), Path("ports"));
  return errs;
}

ErrorList ValidateEndpointSliceUpdate(const Json& slice, const Json& old) {
  ErrorList errs = validation::ValidateObjectMetaUpdate(MemberObject(slice, "metadata"),
                                                        MemberObject(old, "metadata"),
                                                        Path("metadata"));
  AppendErrors(errs, validation::ValidateImmutableField(Member(slice, "addressType"),
                                                        Member(old, "addressType"),
                                                        Path("addressType")));
  ErrorList rest = ValidateEndpointSlice(slice);
  for (FieldError& e : rest) {
    if (e.field.rfind("metadata", 0) != 0) errs.push_back(std::move(e));
  }
  return errs;
}

std::vector<TableColumn> EndpointSliceColumns() {
  return {{"AddressType", "string", "", "The type of address of the endpoints.", 0},
          {"Ports", "string", "", "The ports of the endpoints.", 0},
          {"Endpoints", "string", "", "The addresses of the endpoints.", 0},
          {"Age", "string", "", "CreationTimestamp of the object.", 0}};
}

std::vector<Json> EndpointSliceRowCells(const Json& slice, absl::Time now) {
  std::vector<std::string> ports, addrs;
  for (const Json& p : MemberArray(slice, "ports")) {
    if (const Json* n = FindMember(p, "port"); n != nullptr && n->is_number_integer()) {
      ports.push_back(std::to_string(n->get<int64_t>()));
    } else if (!StringMember(p, "name").empty()) {
      ports.emplace_back(StringMember(p, "name"));
    } else {
      ports.emplace_back("*");
    }
  }
  for (const Json& ep : MemberArray(slice, "endpoints")) {
    for (const Json& a : MemberArray(ep, "addresses")) addrs.emplace_back(AsString(a));
  }
  return {std::string(StringMember(slice, "addressType")), ListWithMore(ports),
          ListWithMore(addrs),
          core_v1::HumanAge(MemberObject(slice, "metadata").value("creationTimestamp", Json()),
                            now)};
}

KindDef EndpointSliceKind() {
  KindDef k;
  k.group = kGroup;
  k.version = "v1";
  k.kind = "EndpointSlice";
  k.plural = "endpointslices";
  k.singular = "endpointslice";
  k.namespaced = true;
  k.schema = EndpointSliceSchema();
  k.validate_create = ValidateEndpointSlice;
  k.validate_update = ValidateEndpointSliceUpdate;
  k.columns = EndpointSliceColumns();
  k.row_cells = EndpointSliceRowCells;
  return k;
}

void RegisterKinds(Scheme& scheme) { scheme.Add(EndpointSliceKind()); }

}  // namespace batchd::api::discovery_v1
