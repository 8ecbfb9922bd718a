// The Namespace and Node kinds: schemas, prepare-for-create, validation,
// table rows (Kubernetes' namespace and node printers).
#include <set>

#include "absl/strings/str_join.h"
#include "api/core/v1/core_v1.h"
#include "api/core/v1/internal/pods.h"
#include "api/core/v1/internal/schemas.h"
#include "api/json_access.h"
#include "api/validation/object_meta.h"

namespace batchd::api::core_v1::internal {
namespace {

SchemaPtr NamespaceSchema() {
  static const SchemaPtr condition =
      Object(R("NamespaceCondition"), "NamespaceCondition contains details about state of "
                                      "namespace.")
          .Field("lastTransitionTime", TimeSchema("Last time the condition transitioned."))
          .Field("message", Str("Human-readable message.")).Field("reason", Str("Reason."))
          .Field("status", Str("Status of the condition, one of True, False, Unknown."))
          .Field("type", Str("Type of namespace controller condition."))
          .Require("type").Require("status").Build();
  static const SchemaPtr s =
      TopLevel(R("Namespace"), "Namespace provides a scope for Names. Use of multiple namespaces "
                               "is optional.")
          .Field("spec", Object(R("NamespaceSpec"), "NamespaceSpec describes the attributes on a "
                                                    "Namespace.")
                             .Field("finalizers", ArrayOf(Str(), "An opaque list of values that "
                                                                 "must be empty to permanently "
                                                                 "remove the object from storage.")
                                                      .ListType("atomic")))
          .Field("status", Object(R("NamespaceStatus"), "NamespaceStatus is information about "
                                                        "the current status of a Namespace.")
                               .Field("conditions", ArrayOf(condition, "The latest available "
                                                                       "observations of a "
                                                                       "namespace's current "
                                                                       "state.").MergeKey("type"))
                               .Field("phase", Str("The current lifecycle phase of the "
                                                   "namespace: Active or Terminating.")
                                                   .Enum({"Active", "Terminating"})))
          .Build();
  return s;
}


SchemaPtr NodeStatusSchema() {
  static const SchemaPtr condition =
      Object(R("NodeCondition"), "NodeCondition contains condition information for a node.")
          .Field("lastHeartbeatTime", TimeSchema("Last time we got an update on a given "
                                                 "condition."))
          .Field("lastTransitionTime", TimeSchema("Last time the condition transitioned."))
          .Field("message", Str("Human readable message.")).Field("reason", Str("Reason."))
          .Field("status", Str("True, False, Unknown."))
          .Field("type", Str("Type of node condition.")).Require("type").Require("status")
          .Build();
  static const SchemaPtr address =
      Object(R("NodeAddress"), "NodeAddress contains information for the node's address.")
          .Field("address", Str("The node address."))
          .Field("type", Str("Hostname, ExternalIP or InternalIP."))
          .Require("type").Require("address").Build();
  static const SchemaPtr info =
      Object(R("NodeSystemInfo"), "NodeSystemInfo is a set of ids/uuids to uniquely identify "
                                  "the node.")
          .Field("architecture", Str("The Architecture reported by the node."))
          .Field("bootID", Str("Boot ID reported by the node."))
          .Field("containerRuntimeVersion", Str("Container runtime version reported by the "
                                                "node."))
          .Field("kernelVersion", Str("Kernel Version reported by the node."))
          .Field("kubeProxyVersion", Str("Deprecated: KubeProxy Version reported by the node."))
          .Field("kubeletVersion", Str("Kubelet Version reported by the node."))
          .Field("machineID", Str("MachineID reported by the node."))
          .Field("operatingSystem", Str("The Operating System reported by the node."))
          .Field("osImage", Str("OS Image reported by the node."))
          .Field("systemUUID", Str("SystemUUID reported by the node."))
          .Build();
  static const SchemaPtr endpoint =
      Object(R("DaemonEndpoint"), "DaemonEndpoint contains information about a single Daemon "
                                  "endpoint.")
          .Field("Port", Int32("Port number of the given endpoint.")).Require("Port").Build();
  static const SchemaPtr endpoints =
      Object(R("NodeDaemonEndpoints"), "NodeDaemonEndpoints lists ports opened by daemons "
                                       "running on the Node.")
          .Field("kubeletEndpoint", endpoint).Build();
  static const SchemaPtr s =
      Object(R("NodeStatus"), "NodeStatus is information about the current status of a node.")
          .Field("addresses", ArrayOf(address, "List of addresses reachable to the node.")
                                  .MergeKey("type"))
          .Field("allocatable", MapOf(QuantitySchema(), "Resources of a node available for "
                                                        "scheduling."))
          .Field("capacity", MapOf(QuantitySchema(), "Total resources of the node."))
          .Field("conditions", ArrayOf(condition, "Current observed node conditions.")
                                   .MergeKey("type"))
          .Field("daemonEndpoints", endpoints)
          .Field("images", ArrayOf(AnyValue(), "List of container images on this node.")
                               .ListType("atomic"))
          .Field("nodeInfo", info)
          .Field("phase", Str("Deprecated: NodePhase is the recently observed lifecycle phase."))
          .Build();
  return s;
}

SchemaPtr NodeSchema() {
  static const SchemaPtr spec =
      Object(R("NodeSpec"), "NodeSpec describes the attributes that a node is created with.")
          .Field("externalID", Str("Deprecated."))
          .Field("podCIDR", Str("The pod IP range assigned to the node."))
          .Field("podCIDRs", ArrayOf(Str(), "The IP ranges assigned to the node.")
                                 .ListType("set").PatchStrategy("merge"))
          .Field("providerID", Str("ID of the node assigned by the cloud provider."))
          .Field("taints", ArrayOf(TaintSchema(), "The node's taints.").ListType("atomic"))
          .Field("unschedulable", Bool("Unschedulable controls node schedulability of new pods."))
          .Build();
  static const SchemaPtr s =
      TopLevel(R("Node"), "Node is a worker node in batchd.")
          .Field("spec", spec)
          .Field("status", NodeStatusSchema())
          .Build();
  return s;
}

std::string NodeStatusCell(const Json& node) {
  std::vector<std::string> status;
  for (const Json& c : MemberArray(MemberObject(node, "status"), "conditions")) {
    if (StringMember(c, "type") != "Ready") continue;
    status = {StringMember(c, "status") == "True" ? "Ready" : "NotReady"};
  }
  if (status.empty()) status.push_back("Unknown");
  if (BoolMember(MemberObject(node, "spec"), "unschedulable")) status.push_back("SchedulingDisabled");
  return absl::StrJoin(status, ",");
}

std::string NodeRoles(const Json& node) {
  std::set<std::string> roles;
  const Json& labels = MemberObject(MemberObject(node, "metadata"), "labels");
  const std::string kPrefix = "node-role.kubernetes.io/";
  for (auto it = labels.begin(); it != labels.end(); ++it) {
    const std::string& key = it.key();
    if (key.rfind(kPrefix, 0) == 0 && key.size() > kPrefix.size()) {
      roles.insert(key.substr(kPrefix.size()));
    } else if (key == "kubernetes.io/role" && it->is_string() && !it->get<std::string>().empty()) {
      roles.insert(it->get<std::string>());
    }
  }
  return roles.empty() ? "<none>" : absl::StrJoin(roles, ",");
}

std::string NodeAddress(const Json& node, const char* type) {
  for (const Json& a : MemberArray(MemberObject(node, "status"), "addresses")) {
    if (StringMember(a, "type") == type) return std::string(StringMember(a, "address"));
  }
  return "<none>";
}

std::vector<Json> NodeRowCells(const Json& node, absl::Time now) {
  const Json& info = MemberObject(MemberObject(node, "status"), "nodeInfo");
  auto or_unknown = [](std::string s) { return s.empty() ? std::string("<unknown>") : s; };
  return {NodeStatusCell(node), NodeRoles(node),
          HumanAge(MemberObject(node, "metadata").value("creationTimestamp", Json()), now),
          std::string(StringMember(info, "kubeletVersion")), NodeAddress(node, "InternalIP"),
          NodeAddress(node, "ExternalIP"), or_unknown(std::string(StringMember(info, "osImage"))),
          or_unknown(std::string(StringMember(info, "kernelVersion"))),
          or_unknown(std::string(StringMember(info, "containerRuntimeVersion")))};
}

ErrorList ValidateTaints(const Json& taints, const Path& path) {
  ErrorList errs;
  for (size_t i = 0; i < taints.size(); ++i) {
    const Json& t = taints[i];
    Path p = path.Index(i);
    std::string key(StringMember(t, "key"));
    if (key.empty()) {
      errs.push_back(Required(p.Child("key")));
    } else {
      for (const std::string& m : validation::IsQualifiedName(key)) {
        errs.push_back(Invalid(p.Child("key"), key, m));
      }
    }
    std::string effect(StringMember(t, "effect"));
    if (effect.empty()) {
      errs.push_back(Required(p.Child("effect")));
    } else if (effect != "NoSchedule" && effect != "PreferNoSchedule" && effect != "NoExecute") {
      errs.push_back(NotSupported(p.Child("effect"), effect,
                                  {"NoExecute", "NoSchedule", "PreferNoSchedule"}));
    }
  }
  return errs;
}

ErrorList ValidateNode(const Json& obj) {
  ErrorList errs = validation::ValidateObjectMeta(MemberObject(obj, "metadata"), false,
                                                  validation::NameIsDNSSubdomain,
                                                  Path("metadata"));
  ErrorList t = ValidateTaints(MemberArray(MemberObject(obj, "spec"), "taints"),
                               Path("spec").Child("taints"));
  errs.insert(errs.end(), t.begin(), t.end());
  return errs;
}

Json CreationAge(const Json& obj, absl::Time now) {
  return HumanAge(MemberObject(obj, "metadata").value("creationTimestamp", Json()), now);
}

}  // namespace

SchemaPtr TaintSchema() {
  static const SchemaPtr s =
      Object(R("Taint"), "The node this Taint is attached to has the \"effect\" on any pod that "
                         "does not tolerate the Taint.")
          .Field("effect", Str("NoSchedule, PreferNoSchedule or NoExecute.")
                               .Enum({"NoExecute", "NoSchedule", "PreferNoSchedule"}))
          .Field("key", Str("The taint key to be applied to a node."))
          .Field("timeAdded", TimeSchema("The time at which the taint was added."))
          .Field("value", Str("The taint value corresponding to the taint key."))
          .Require("key").Require("effect").Build();
  return s;
}

KindDef NamespaceKind() {
  KindDef k;
  k.version = "v1";
  k.kind = "Namespace";
  k.plural = "namespaces";
  k.singular = "namespace";
  k.namespaced = false;
  k.short_names = {"ns"};
  k.undeletable_names = {"default", "kube-system", "kube-public"};
  k.undeletable_reason = "this namespace may not be deleted";
  k.subresources = {"status", "finalize"};
  k.schema = NamespaceSchema();
  k.has_status_subresource = true;
  k.prepare_for_create = [](Json& obj) {
    if (!obj.is_object()) return;
    obj["status"] = {{"phase", "Active"}};
    obj["spec"] = {{"finalizers", Json::array({"kubernetes"})}};
  };
  k.validate_create = [](const Json& obj) {
    return validation::ValidateObjectMeta(MemberObject(obj, "metadata"), false,
                                          validation::NameIsDNSLabel, Path("metadata"));
  };
  k.validate_update = [](const Json& obj, const Json& old) {
    return validation::ValidateObjectMetaUpdate(MemberObject(obj, "metadata"),
                                                MemberObject(old, "metadata"), Path("metadata"));
  };
  k.validate_status_update = k.validate_update;
  k.columns = {{"Status", "string", "", "The status of the namespace", 0},
               {"Age", "string", "", "CreationTimestamp of the namespace.", 0}};
  k.row_cells = [](const Json& obj, absl::Time now) {
    return std::vector<Json>{std::string(StringMember(MemberObject(obj, "status"), "phase")), CreationAge(obj, now)};
  };
  k.selectable_fields = {"status.phase"};
  k.field_value = [](const Json& obj, const std::string& f) { return FieldString(obj, f); };
  return k;
}

KindDef NodeKind() {
  KindDef k;
  k.version = "v1";
  k.kind = "Node";
  k.plural = "nodes";
  k.singular = "node";
  k.namespaced = false;
  k.short_names = {"no"};
  k.subresources = {"status"};
  k.schema = NodeSchema();
  k.has_status_subresource = true;
  k.keep_status_on_create = true;  // Agents register nodes with their capacity.
  k.validate_create = ValidateNode;
  k.validate_update = [](const Json& obj, const Json& old) {
    ErrorList errs = ValidateNode(obj);
    ErrorList u = validation::ValidateObjectMetaUpdate(MemberObject(obj, "metadata"),
                                                       MemberObject(old, "metadata"),
                                                       Path("metadata"));
    errs.insert(errs.end(), u.begin(), u.end());
    // As Kubernetes' ValidateNodeUpdate: the pod CIDRs and the provider ID
    // are set once (from "" to a value) and never changed after.
    const Json& spec = MemberObject(obj, "spec");
    const Json& old_spec = MemberObject(old, "spec");
    const bool cidrs_changed =
        (!MemberArray(old_spec, "podCIDRs").empty() &&
         MemberArray(spec, "podCIDRs") != MemberArray(old_spec, "podCIDRs")) ||
        (!StringMember(old_spec, "podCIDR").empty() &&
         StringMember(spec, "podCIDR") != StringMember(old_spec, "podCIDR"));
    if (cidrs_changed) {
      errs.push_back(Forbidden(Path("spec").Child("podCIDRs"),
                               "node updates may not change podCIDR except from \"\" to valid"));
    }
    if (!StringMember(old_spec, "providerID").empty() &&
        StringMember(spec, "providerID") != StringMember(old_spec, "providerID")) {
      errs.push_back(Forbidden(Path("spec").Child("providerID"),
                               "node updates may not change providerID except from \"\" to valid"));
    }
    return errs;
  };
  k.validate_status_update = k.validate_update;
  k.columns = {{"Status", "string", "", "The status of the node", 0},
               {"Roles", "string", "", "The roles of the node", 0},
               {"Age", "string", "", "CreationTimestamp of the node.", 0},
               {"Version", "string", "", "Kubelet Version reported by the node.", 0},
               {"Internal-IP", "string", "", "List of addresses reachable to the node.", 1},
               {"External-IP", "string", "", "List of addresses reachable to the node.", 1},
               {"OS-Image", "string", "", "OS Image reported by the node.", 1},
               {"Kernel-Version", "string", "", "Kernel Version reported by the node.", 1},
               {"Container-Runtime", "string", "", "Container runtime version reported by the "
                                                   "node.", 1}};
  k.row_cells = NodeRowCells;
  k.selectable_fields = {"spec.unschedulable"};
  k.field_value = [](const Json& obj, const std::string& f) {
    if (f == "spec.unschedulable") {
      return std::string(BoolMember(MemberObject(obj, "spec"), "unschedulable") ? "true" : "false");
    }
    return FieldString(obj, f);
  };
  return k;
}

}  // namespace batchd::api::core_v1::internal
