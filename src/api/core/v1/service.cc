// The Service kind (core/v1): schema, defaults, validation with Kubernetes'
// field paths and messages, the `kubectl get svc` table. Only headless
// Services with a selector are served (internal/service.h says why).
#include "api/core/v1/internal/service.h"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/core/v1/core_v1.h"
#include "api/core/v1/internal/pods.h"
#include "api/core/v1/internal/schemas.h"
#include "api/json_access.h"
#include "api/validation/names.h"
#include "api/validation/object_meta.h"

namespace batchd::api::core_v1::internal {
namespace {

constexpr char kHeadless[] = "None";
// Why a non-headless service is refused; shared by the clusterIP and type errors.
constexpr char kNoVirtualIps[] =
    "batchd serves only headless Services (type ClusterIP with clusterIP: None): there are no "
    "virtual service IPs, node ports or load balancers; pods reach each other by name at their "
    "node's address";

SchemaPtr ServicePortSchema() {
  static const SchemaPtr s =
      Object(R("ServicePort"), "ServicePort contains information on service's port.")
          .Field("appProtocol", Str("The application protocol for this port."))
          .Field("name", Str("The name of this port within the service. Must be a DNS_LABEL; "
                             "required when there is more than one port."))
          .Field("nodePort", Int32("The port on each node (NodePort/LoadBalancer only; not "
                                   "served by batchd)."))
          .Field("port", Int32("The port that will be exposed by this service."))
          .Field("protocol", Str("TCP, UDP or SCTP. Default is TCP.").Enum({"SCTP", "TCP", "UDP"}))
          .Field("targetPort", IntOrString("Number or name of the port to access on the pods "
                                           "targeted by the service. Defaults to `port`."))
          .Require("port")
          .Build();
  return s;
}

SchemaPtr ServiceSpecSchema() {
  static const SchemaPtr affinity =
      Object(R("SessionAffinityConfig"), "SessionAffinityConfig represents the configurations "
                                         "of session affinity.")
          .Field("clientIP", Object(R("ClientIPConfig"), "ClientIPConfig represents the "
                                                         "configurations of Client IP based "
                                                         "session affinity.")
                                 .Field("timeoutSeconds", Int32("Seconds of ClientIP type "
                                                                "session sticky time.")))
          .Build();
  static const SchemaPtr s =
      Object(R("ServiceSpec"), "ServiceSpec describes the attributes that a user creates on a "
                               "service.")
          .Field("allocateLoadBalancerNodePorts", Bool("LoadBalancer only; not served by batchd."))
          .Field("clusterIP", Str("The IP address of the service. batchd serves headless "
                                  "services only: \"None\" (no virtual IP; the service's name "
                                  "resolves to its pods)."))
          .Field("clusterIPs", ArrayOf(Str(), "The IP addresses of the service; [\"None\"] for a "
                                              "headless service.")
                                   .ListType("atomic"))
          .Field("externalIPs", ArrayOf(Str(), "Not served by batchd.").ListType("atomic"))
          .Field("externalName", Str("ExternalName services only; not served by batchd."))
          .Field("externalTrafficPolicy", Str("NodePort/LoadBalancer only; not served by batchd."))
          .Field("healthCheckNodePort", Int32("LoadBalancer only; not served by batchd."))
          .Field("internalTrafficPolicy", Str("Cluster or Local.").Enum({"Cluster", "Local"}))
          .Field("ipFamilies", ArrayOf(Str(), "IP families of the service: IPv4 on batchd.")
                                   .ListType("atomic"))
          .Field("ipFamilyPolicy", Str("SingleStack (default), PreferDualStack or "
                                       "RequireDualStack (refused: single stack only)."))
          .Field("loadBalancerClass", Str("LoadBalancer only; not served by batchd."))
          .Field("loadBalancerIP", Str("LoadBalancer only; not served by batchd."))
          .Field("loadBalancerSourceRanges", ArrayOf(Str(), "LoadBalancer only; not served by "
                                                            "batchd.")
                                                 .ListType("atomic"))
          .Field("ports", ArrayOf(ServicePortSchema(), "The list of ports that are exposed by "
                                                       "this service.")
                              .MergeKey("port")
                              .ListMapKeys({"port", "protocol"}))
          .Field("publishNotReadyAddresses", Bool("Whether the service's EndpointSlices list "
                                                  "pods that are not ready (their names then "
                                                  "resolve before they are ready)."))
          .Field("selector", MapOf(Str(), "Pods with labels matching this selector are the "
                                          "service's endpoints. Required on batchd."))
          .Field("sessionAffinity", Str("None (ClientIP needs a proxy, which batchd does not "
                                        "have).")
                                        .Enum({"ClientIP", "None"}))
          .Field("sessionAffinityConfig", affinity)
          .Field("trafficDistribution", Str("Proxy routing preference; not served by batchd."))
          .Field("type", Str("ClusterIP (the only type batchd serves), NodePort, LoadBalancer "
                             "or ExternalName.")
                             .Enum({"ClusterIP", "ExternalName", "LoadBalancer", "NodePort"}))
          .Build();
  return s;
}

SchemaPtr ServiceStatusSchema() {
  static const SchemaPtr port_status =
      Object(R("PortStatus"), "PortStatus represents the error condition of a service port.")
          .Field("error", Str("The error of the port, if any."))
          .Field("port", Int32("The port number.")).Field("protocol", Str("The protocol."))
          .Require("port").Require("protocol").Build();
  static const SchemaPtr ingress =
      Object(R("LoadBalancerIngress"), "An ingress point of a load balancer.")
          .Field("hostname", Str("Hostname of a DNS-based load balancer."))
          .Field("ip", Str("IP of an IP-based load balancer."))
          .Field("ipMode", Str("How the load balancer IP behaves."))
          .Field("ports", ArrayOf(port_status, "Records of service ports.").ListType("atomic"))
          .Build();
  static const SchemaPtr s =
      Object(R("ServiceStatus"), "ServiceStatus represents the current status of a service.")
          .Field("conditions", ArrayOf(ConditionSchema(), "Current service state.")
                                   .MergeKey("type"))
          .Field("loadBalancer", Object(R("LoadBalancerStatus"), "The status of a load "
                                                                 "balancer.")
                                     .Field("ingress", ArrayOf(ingress, "Ingress points of the "
                                                                        "load balancer.")
                                                           .ListType("atomic")))
          .Build();
  return s;
}

SchemaPtr ServiceSchema() {
  static const SchemaPtr s =
      TopLevel(R("Service"), "Service is a named abstraction of software service (for example, "
                             "mysql) consisting of local port (for example 3306) that the proxy "
                             "listens on, and the selector that determines which pods will "
                             "answer requests sent through the proxy. batchd serves headless "
                             "services: their EndpointSlices list the selected pods, whose "
                             "names resolve in every pod of the namespace.")
          .Field("spec", ServiceSpecSchema())
          .Field("status", ServiceStatusSchema())
          .Build();
  return s;
}

void AddEach(ErrorList& errs, const Path& p, const Json& v, const validation::Messages& msgs) {
  for (const std::string& m : msgs) errs.push_back(Invalid(p, v, m));
}

void ValidatePortNumber(ErrorList& errs, const Path& p, int64_t port) {
  if (port < 1 || port > 65535) {
    errs.push_back(Invalid(p, port, "must be between 1 and 65535, inclusive"));
  }
}

void ValidateServicePorts(ErrorList& errs, const Json& ports, const Path& path) {
  std::set<std::string> names;
  std::set<std::pair<std::string, int64_t>> seen;
  for (size_t i = 0; i < ports.size(); ++i) {
    const Json& sp = ports[i];
    Path p = path.Index(i);
    std::string name(StringMember(sp, "name"));
    if (name.empty() && ports.size() > 1) {
      errs.push_back(Required(p.Child("name"), ""));
    } else if (!name.empty()) {
      AddEach(errs, p.Child("name"), name, validation::IsDNS1123Label(name));
      if (!names.insert(name).second) errs.push_back(Duplicate(p.Child("name"), name));
    }
    int64_t port = IntMember(sp, "port");
    ValidatePortNumber(errs, p.Child("port"), port);
    std::string protocol(StringMember(sp, "protocol"));
    if (protocol.empty()) {
      errs.push_back(Required(p.Child("protocol"), ""));
    } else if (protocol != "TCP" && protocol != "UDP" && protocol != "SCTP") {
      errs.push_back(NotSupported(p.Child("protocol"), protocol, {"SCTP", "TCP", "UDP"}));
    }
    const Json& target = Member(sp, "targetPort");
    if (target.is_number_integer()) {
      ValidatePortNumber(errs, p.Child("targetPort"), target.get<int64_t>());
    } else if (target.is_string()) {
      AddEach(errs, p.Child("targetPort"), target, IsValidPortName(target.get<std::string>()));
    }
    if (IntMember(sp, "nodePort") != 0) {
      errs.push_back(Forbidden(p.Child("nodePort"), "may not be used when `type` is "
                                                    "'ClusterIP'"));
    }
    if (!seen.emplace(protocol, port).second) {
      errs.push_back(Duplicate(p, Json{{"port", port}, {"protocol", protocol}}));
    }
  }
}

// The fields of a proxied, node-port or load-balanced service: refused,
// since batchd has none of those.
void RefuseUnservedFields(ErrorList& errs, const Json& spec, const Path& path) {
  for (const char* f : {"externalIPs", "loadBalancerSourceRanges"}) {
    if (!MemberArray(spec, f).empty()) {
      errs.push_back(Forbidden(path.Child(f), absl::StrCat(f, " is not supported by batchd (",
                                                           kNoVirtualIps, ")")));
    }
  }
  for (const char* f : {"externalName", "externalTrafficPolicy", "loadBalancerClass",
                        "loadBalancerIP", "trafficDistribution"}) {
    if (!StringMember(spec, f).empty()) {
      errs.push_back(Forbidden(path.Child(f), absl::StrCat(f, " is not supported by batchd (",
                                                           kNoVirtualIps, ")")));
    }
  }
  if (IntMember(spec, "healthCheckNodePort") != 0) {
    errs.push_back(Forbidden(path.Child("healthCheckNodePort"),
                             "may only be set when `type` is 'LoadBalancer' and "
                             "`externalTrafficPolicy` is 'Local'"));
  }
  if (FindMember(spec, "allocateLoadBalancerNodePorts") != nullptr &&
      !Member(spec, "allocateLoadBalancerNodePorts").is_null()) {
    errs.push_back(Forbidden(path.Child("allocateLoadBalancerNodePorts"),
                             "may only be used when `type` is 'LoadBalancer'"));
  }
}

void ValidateSessionAffinity(ErrorList& errs, const Json& spec, const Path& path) {
  std::string affinity(StringMember(spec, "sessionAffinity"));
  if (affinity.empty()) {
    errs.push_back(Required(path.Child("sessionAffinity"), ""));
  } else if (affinity == "ClientIP") {
    errs.push_back(Forbidden(path.Child("sessionAffinity"),
                             "ClientIP session affinity is not supported by batchd: a headless "
                             "service has no proxy to keep it"));
  } else if (affinity != "None") {
    errs.push_back(NotSupported(path.Child("sessionAffinity"), affinity, {"ClientIP", "None"}));
  }
  if (affinity == "None" && FindMember(spec, "sessionAffinityConfig") != nullptr &&
      !Member(spec, "sessionAffinityConfig").is_null()) {
    errs.push_back(Forbidden(path.Child("sessionAffinityConfig"),
                             "must not be set when session affinity is None"));
  }
}

// clusterIP / clusterIPs / ipFamilies / ipFamilyPolicy of a headless,
// single-stack IPv4 service.
void ValidateClusterIps(ErrorList& errs, const Json& spec, const Path& path) {
  std::string cluster_ip(StringMember(spec, "clusterIP"));
  // A refused type already says why; its clusterIP is not worth a second error.
  const std::string_view type = StringMember(spec, "type");
  if (cluster_ip != kHeadless && (type.empty() || type == "ClusterIP")) {
    errs.push_back(Forbidden(path.Child("clusterIP"), kNoVirtualIps));
  }
  const Json& ips = MemberArray(spec, "clusterIPs");
  if (!ips.empty() && ips[0] != Json(cluster_ip)) {
    errs.push_back(Invalid(path.Child("clusterIPs").Index(0), ips[0],
                           "must match `clusterIP` when set"));
  }
  if (ips.size() > 1) {
    errs.push_back(Invalid(path.Child("clusterIPs"), ips,
                           "must be a single value, 'None', for a headless service"));
  }
  std::string policy(StringMember(spec, "ipFamilyPolicy"));
  if (policy == "RequireDualStack") {
    errs.push_back(Invalid(path.Child("ipFamilyPolicy"), policy,
                           "this cluster is not configured for dual-stack services"));
  } else if (!policy.empty() && policy != "SingleStack" && policy != "PreferDualStack") {
    errs.push_back(NotSupported(path.Child("ipFamilyPolicy"), policy,
                                {"PreferDualStack", "RequireDualStack", "SingleStack"}));
  }
  const Json& families = MemberArray(spec, "ipFamilies");
  for (size_t i = 0; i < families.size(); ++i) {
    std::string f(AsString(families[i]));
    if (f == "IPv6") {
      errs.push_back(Invalid(path.Child("ipFamilies").Index(i), f,
                             "not configured on this cluster"));
    } else if (f != "IPv4") {
      errs.push_back(NotSupported(path.Child("ipFamilies").Index(i), f, {"IPv4", "IPv6"}));
    }
  }
  if (families.size() > 1) {
    errs.push_back(Invalid(path.Child("ipFamilies"), families,
                           "may contain only one family on a single-stack cluster"));
  }
}

void ValidateServiceSpec(ErrorList& errs, const Json& spec, const Path& path) {
  std::string type(StringMember(spec, "type"));
  if (type.empty()) {
    errs.push_back(Required(path.Child("type"), ""));
  } else if (type == "NodePort" || type == "LoadBalancer" || type == "ExternalName") {
    errs.push_back(Forbidden(path.Child("type"),
                             absl::StrCat("type ", type, " is not supported by batchd (",
                                          kNoVirtualIps, ")")));
  } else if (type != "ClusterIP") {
    errs.push_back(NotSupported(path.Child("type"), type,
                                {"ClusterIP", "ExternalName", "LoadBalancer", "NodePort"}));
  }
  ValidateClusterIps(errs, spec, path);
  ValidateServicePorts(errs, MemberArray(spec, "ports"), path.Child("ports"));
  const Json& selector = MemberObject(spec, "selector");
  if (selector.empty()) {
    errs.push_back(Required(path.Child("selector"),
                            "batchd serves headless Services with a selector only: their "
                            "EndpointSlices list the selected pods"));
  } else {
    AppendErrors(errs, validation::ValidateLabels(selector, path.Child("selector")));
  }
  ValidateSessionAffinity(errs, spec, path);
  RefuseUnservedFields(errs, spec, path);
  std::string itp(StringMember(spec, "internalTrafficPolicy"));
  if (!itp.empty() && itp != "Cluster" && itp != "Local") {
    errs.push_back(NotSupported(path.Child("internalTrafficPolicy"), itp, {"Cluster", "Local"}));
  }
}

std::string PortsCell(const Json& spec) {
  std::vector<std::string> out;
  for (const Json& p : MemberArray(spec, "ports")) {
    std::string protocol(StringMember(p, "protocol", "TCP"));
    int64_t node_port = IntMember(p, "nodePort");
    out.push_back(node_port != 0
                      ? absl::StrCat(IntMember(p, "port"), ":", node_port, "/", protocol)
                      : absl::StrCat(IntMember(p, "port"), "/", protocol));
  }
  return out.empty() ? "<none>" : absl::StrJoin(out, ",");
}

std::string SelectorCell(const Json& spec) {
  std::map<std::string, std::string> sel = StringMap(MemberObject(spec, "selector"));
  if (sel.empty()) return "<none>";
  std::vector<std::string> parts;
  for (const auto& [k, v] : sel) parts.push_back(k + "=" + v);
  return absl::StrJoin(parts, ",");
}

}  // namespace

void SetDefaultsService(Json& svc) {
  if (!svc.is_object()) return;
  Json& spec = MutableObject(svc, "spec");
  if (StringMember(spec, "type").empty()) spec["type"] = "ClusterIP";
  if (StringMember(spec, "sessionAffinity").empty()) spec["sessionAffinity"] = "None";
  if (Json* ports = FindMutableMemberAt(spec, {"ports"}); ports && ports->is_array()) {
    for (Json& p : *ports) {
      if (!p.is_object()) continue;
      if (StringMember(p, "protocol").empty()) p["protocol"] = "TCP";
      const Json& target = Member(p, "targetPort");
      bool unset = target.is_null() || (target.is_number_integer() && target.get<int64_t>() == 0) ||
                   (target.is_string() && target.get<std::string>().empty());
      if (unset && FindMember(p, "port")) p["targetPort"] = p["port"];
    }
  }
  std::string cluster_ip(StringMember(spec, "clusterIP"));
  if (!cluster_ip.empty() && MemberArray(spec, "clusterIPs").empty()) {
    spec["clusterIPs"] = Json::array({cluster_ip});
  }
  if (StringMember(spec, "type") == "ClusterIP" &&
      StringMember(spec, "internalTrafficPolicy").empty()) {
    spec["internalTrafficPolicy"] = "Cluster";
  }
  if (cluster_ip == kHeadless) {
    if (StringMember(spec, "ipFamilyPolicy").empty()) spec["ipFamilyPolicy"] = "SingleStack";
    if (MemberArray(spec, "ipFamilies").empty()) spec["ipFamilies"] = Json::array({"IPv4"});
  }
}

ErrorList ValidateService(const Json& svc) {
  ErrorList errs = validation::ValidateObjectMeta(MemberObject(svc, "metadata"), true,
                                                  validation::NameIsDNS1035Label,
                                                  Path("metadata"));
  ValidateServiceSpec(errs, MemberObject(svc, "spec"), Path("spec"));
  return errs;
}

ErrorList ValidateServiceUpdate(const Json& svc, const Json& old) {
  ErrorList errs = validation::ValidateObjectMetaUpdate(MemberObject(svc, "metadata"),
                                                        MemberObject(old, "metadata"),
                                                        Path("metadata"));
  const Json& spec = MemberObject(svc, "spec");
  const Json& old_spec = MemberObject(old, "spec");
  if (!StringMember(old_spec, "clusterIP").empty()) {
    AppendErrors(errs, validation::ValidateImmutableField(Member(spec, "clusterIP"),
                                                          Member(old_spec, "clusterIP"),
                                                          Path("spec").Child("clusterIP")));
  }
  // Validate the rest of the spec, without repeating a clusterIP error the
  // immutability check already reported.
  ErrorList rest;
  ValidateServiceSpec(rest, spec, Path("spec"));
  bool changed_ip = Member(spec, "clusterIP") != Member(old_spec, "clusterIP");
  for (FieldError& e : rest) {
    if (changed_ip && e.field == "spec.clusterIP") continue;
    errs.push_back(std::move(e));
  }
  return errs;
}

std::vector<TableColumn> ServiceColumns() {
  return {{"Type", "string", "", "The type of the service.", 0},
          {"Cluster-IP", "string", "", "The cluster IP of the service (None: headless).", 0},
          {"External-IP", "string", "", "External IPs of the service.", 0},
          {"Port(s)", "string", "", "The ports of the service.", 0},
          {"Age", "string", "", "CreationTimestamp of the object.", 0},
          {"Selector", "string", "", "The label selector of the service.", 1}};
}

std::vector<Json> ServiceRowCells(const Json& svc, absl::Time now) {
  const Json& spec = MemberObject(svc, "spec");
  std::string cluster_ip(StringMember(spec, "clusterIP"));
  std::vector<std::string> external;
  for (const Json& ip : MemberArray(spec, "externalIPs")) external.emplace_back(AsString(ip));
  return {std::string(StringMember(spec, "type")),
          cluster_ip.empty() ? std::string("<none>") : cluster_ip,
          external.empty() ? std::string("<none>") : absl::StrJoin(external, ","),
          PortsCell(spec),
          HumanAge(MemberObject(svc, "metadata").value("creationTimestamp", Json()), now),
          SelectorCell(spec)};
}

KindDef ServiceKind() {
  KindDef k;
  k.version = "v1";
  k.kind = "Service";
  k.plural = "services";
  k.singular = "service";
  k.namespaced = true;
  k.short_names = {"svc"};
  k.categories = {"all"};
  k.subresources = {"status"};
  k.schema = ServiceSchema();
  k.has_status_subresource = true;
  k.set_defaults = SetDefaultsService;
  k.validate_create = ValidateService;
  k.validate_update = ValidateServiceUpdate;
  k.validate_status_update = [](const Json& obj, const Json& old) {
    return validation::ValidateObjectMetaUpdate(MemberObject(obj, "metadata"),
                                                MemberObject(old, "metadata"), Path("metadata"));
  };
  k.columns = ServiceColumns();
  k.row_cells = ServiceRowCells;
  k.selectable_fields = {"spec.clusterIP", "spec.type"};
  k.field_value = [](const Json& obj, const std::string& field) {
    return FieldString(obj, field);
  };
  return k;
}

}  // namespace batchd::api::core_v1::internal
