// Sv: a std::string_view as an absl::string_view.
//
// Debian's Abseil is built without ABSL_USES_STD_STRING_VIEW, so its
// string_view is a type of its own and absl::StrCat / StrJoin / StrSplit do
// not take the std::string_views that typed views (api/meta/object_view.h)
// hand out. Wrap them at the call: absl::StrCat("pod ", Sv(pod.meta.name)).
#pragma once

#include <string_view>

#include "absl/strings/string_view.h"

namespace batchd {

inline absl::string_view Sv(std::string_view s) { return absl::string_view(s.data(), s.size()); }

}  // namespace batchd
