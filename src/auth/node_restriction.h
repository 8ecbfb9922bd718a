// NodeRestriction's rules for a node writing its own Node object
// (kube-apiserver's plugin/pkg/admission/noderestriction, admitNode), judged
// on the object as it would be stored:
//  - on create, every label is "modified"; on update, the labels added,
//    removed or changed against the stored object. A node may not touch a
//    label in the `node-restriction.kubernetes.io` namespace (or a subdomain
//    of it), nor a `kubernetes.io`/`k8s.io` label (or subdomain) outside
//    kubelet's own set (IsKubeletLabel);
//  - on update, its taints may not change at all (a node registers with the
//    taints it likes, as kubelet's --register-with-taints; afterwards only
//    others change them);
//  - batchd's Node has no spec.configSource (an unknown field), so
//    Kubernetes' configSource rule has nothing to judge; podCIDR(s) and
//    providerID are guarded for every writer by the Node's update
//    validation, as in Kubernetes.
// (Which Node a node may write at all, its Lease and its pods are checked by
// the API server before the request reaches the registry.)
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace batchd::api {
using Json = nlohmann::json;
}  // namespace batchd::api

namespace batchd::auth {

// Whether kubelet may set `key` on its own Node (Kubernetes' kubelet label
// set: kubernetes.io/hostname, kubernetes.io/os, kubernetes.io/arch, their
// beta.kubernetes.io forms, topology.kubernetes.io/zone|region,
// failure-domain.beta.kubernetes.io/zone|region, node.kubernetes.io/instance-type,
// beta.kubernetes.io/instance-type, and any key in the kubelet.kubernetes.io or
// node.kubernetes.io namespaces or their subdomains).
bool IsKubeletLabel(std::string_view key);

// The reason NodeRestriction refuses node `node`'s write of its own Node
// (Kubernetes' message, without the `nodes "x" is forbidden: ` prefix), or ""
// when it is allowed. `obj` is the Node as it would be stored; `old` the
// stored one, null on create.
std::string NodeSelfWriteRefusal(const std::string& node, const api::Json& obj,
                                 const api::Json* old);

}  // namespace batchd::auth
