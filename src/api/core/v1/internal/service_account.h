// Internal to api/core/v1: the ServiceAccount kind (schema, validation,
// table). Its `token` subresource (TokenRequest) is served by the API
// server's authentication layer. Stateless and thread-safe.
#pragma once

#include "api/kind.h"

namespace batchd::api::core_v1::internal {

KindDef ServiceAccountKind();

}  // namespace batchd::api::core_v1::internal
