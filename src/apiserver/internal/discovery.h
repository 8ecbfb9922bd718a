// Discovery documents (/api, /apis, group and group-version resource lists)
// and OpenAPI v3, precomputed once from the Scheme.
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

 private:
  void AddVisibilityGroup(api::Json* group_list);
  std::map<std::string, std::string> docs_;
};

}  // namespace batchd::apiserver::internal
