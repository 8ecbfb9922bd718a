// The third-party and standard headers nearly every batchd translation unit
// parses, precompiled once per build (cmake/batchd_cc.cmake, BATCHD_PCH) and
// force-included into every batchd_cc_library object. Only headers whose
// meaning does not depend on a target's compile definitions belong here
// (spdlog, Boost and fmt do: they stay out), so one PCH serves every target.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
