// Store errors a backend marks for the API: `UnreachableError` is an
// Unavailable status whose storage cannot be reached (etcd down, without a
// leader): the API answers 503 ServiceUnavailable and clients retry, where
// other Unavailable errors (a full or failing disk under SQLite) stay 500.
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/cord.h"

namespace batchd::store {

inline constexpr std::string_view kUnreachablePayload = "type.batchd.io/store.Unreachable";

inline absl::Status UnreachableError(absl::string_view message) {
  absl::Status st(absl::StatusCode::kUnavailable, message);
  st.SetPayload(absl::string_view(kUnreachablePayload.data(), kUnreachablePayload.size()),
                absl::Cord("1"));
  return st;
}

inline bool IsUnreachable(const absl::Status& st) {
  return absl::IsUnavailable(st) &&
         st.GetPayload(absl::string_view(kUnreachablePayload.data(), kUnreachablePayload.size()))
             .has_value();
}

}  // namespace batchd::store
