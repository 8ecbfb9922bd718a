// The dashboard's files (src/ui/web), embedded at build time by
// cmake/embed_files.cmake into a generated source.
#pragma once

#include <string_view>

namespace batchd::ui::internal {

struct Asset {
  std::string_view name;  // Relative to src/ui/web, e.g. "app.js".
  std::string_view data;
};
extern const Asset kAssets[];
extern const int kAssetCount;

}  // namespace batchd::ui::internal
