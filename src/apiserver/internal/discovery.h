// Discovery documents (/api, /apis, group and group-version resource lists)
// and OpenAPI v2 and v3, precomputed once from the Scheme.
#pragma once

#include <map>
#include <string>

#include "api/kind.h"

namespace batchd::apiserver::internal {

class DiscoveryDocs {
 public:
  // `visibility`: also list Kueue's visibility.kueue.x-k8s.io group.
  explicit DiscoveryDocs(const api::Scheme& scheme, bool visibility = false);
  // The body for a discovery or OpenAPI path, or nullptr when it is not one.
  const std::string* Find(const std::string& path) const;
  // Adds the group metrics.k8s.io/v1beta1 (nodes, pods: get, list), served
  // outside the Scheme (resource_metrics.cc), as metrics-server's APIService.
  void AddResourceMetrics();
  // /openapi/v2 as JSON and as gnostic protobuf.
  const std::string& OpenApiV2Json() const { return openapi_v2_json_; }
  const std::string& OpenApiV2Protobuf() const { return openapi_v2_pb_; }

 private:
  void AddVisibilityGroup(api::Json* group_list);
  std::map<std::string, std::string> docs_;
  std::string openapi_v2_json_;
  std::string openapi_v2_pb_;
};

}  // namespace batchd::apiserver::internal
