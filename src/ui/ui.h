// The web dashboard served at /ui/ (docs/dashboard.md): static files built
// into the binary. The page itself holds no cluster data; it reads
// everything through the Kubernetes API with the user's bearer token, so the
// API's authentication and RBAC apply unchanged. That is why these files are
// served before authentication: the login page must load without a token.
//
// Thread-safety: ServeDashboard may be called concurrently.
#pragma once

#include "apiserver/http.h"

namespace batchd::ui {

// The path prefix everything here lives under.
inline constexpr std::string_view kDashboardPrefix = "/ui";

// Serves `req` when its path is /ui or under /ui/ and returns true; false
// leaves the request to the API. /ui redirects to /ui/, /ui/ is the page,
// /ui/NAME one of its files (404 with an HTML page for any other name);
// only GET and HEAD are answered (405 otherwise). Files carry an ETag
// (304 on If-None-Match) and a Content-Security-Policy that allows only
// this origin.
bool ServeDashboard(const apiserver::HttpRequest& req, apiserver::ResponseWriter& w);

}  // namespace batchd::ui
