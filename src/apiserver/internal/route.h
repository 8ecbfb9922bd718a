// Internal to apiserver/: the parsed resource path and the security scope of
// one request, shared by apiserver.cc and apiserver_auth.cc.
#pragma once

#include <string>

#include "api/kind.h"
#include "apiserver/apiserver.h"
#include "auth/rbac.h"
#include "auth/user.h"

namespace batchd::apiserver {

struct ApiServer::Route {
  const api::KindDef* kind = nullptr;
  std::string ns;
  std::string name;
  std::string subresource;
  // The requester (set once the request is admitted).
  const auth::UserInfo* user = nullptr;
};

struct ApiServer::Scope {
  auth::UserInfo user;
  bool authenticated = false;  // false: refused with 401 (or no authenticator ran yet)
  auth::Attributes attrs;
  bool has_attrs = false;
  std::string decision;  // "allow" / "forbid" for the audit annotations; "" when none ran
  std::string reason;
};

}  // namespace batchd::apiserver
