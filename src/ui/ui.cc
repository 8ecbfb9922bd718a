#include "ui/ui.h"

#include <cstdint>
#include <string>
#include <string_view>

#include "ui/internal/assets.h"

namespace batchd::ui {
namespace {

using apiserver::HeaderList;

std::string_view ContentType(std::string_view name) {
  auto ends = [&](std::string_view ext) {
    return name.size() >= ext.size() && name.substr(name.size() - ext.size()) == ext;
  };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".js")) return "text/javascript; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".svg")) return "image/svg+xml";
  if (ends(".png")) return "image/png";
  if (ends(".json")) return "application/json";
  return "application/octet-stream";
}

// FNV-1a of the content: the files change only with the binary.
std::string Etag(std::string_view data) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : data) {
    h ^= c;
    h *= 1099511628211ull;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (int i = 60; i >= 0; i -= 4) out.push_back(kHex[(h >> i) & 0xf]);
  out.push_back('"');
  return out;
}

HeaderList CommonHeaders() {
  return {{"X-Content-Type-Options", "nosniff"},
          {"Referrer-Policy", "no-referrer"},
          {"X-Frame-Options", "DENY"},
          {"Content-Security-Policy",
           "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
           "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"}};
}

const internal::Asset* Find(std::string_view name) {
  for (int i = 0; i < internal::kAssetCount; ++i) {
    if (internal::kAssets[i].name == name) return &internal::kAssets[i];
  }
  return nullptr;
}

void SendPage(const apiserver::HttpRequest& req, apiserver::ResponseWriter& w, int code,
              std::string_view title, std::string_view text) {
  HeaderList h = CommonHeaders();
  h.emplace_back("Content-Type", "text/html; charset=utf-8");
  h.emplace_back("Cache-Control", "no-store");
  std::string body;
  if (req.method != "HEAD") {
    body = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>";
    body.append(title);
    body.append(" - batchd</title><link rel=\"stylesheet\" href=\"/ui/style.css\"></head>"
                "<body><main class=\"page\"><h1 id=\"page-title\">");
    body.append(title);
    body.append("</h1><p>");
    body.append(text);  // Fixed text only: never echoes the request.
    body.append("</p><p><a href=\"/ui/\">Back to the dashboard</a></p></main></body></html>\n");
  }
  w.Send(code, h, std::move(body));
}

}  // namespace

bool ServeDashboard(const apiserver::HttpRequest& req, apiserver::ResponseWriter& w) {
  std::string_view path = req.path;
  if (path.substr(0, kDashboardPrefix.size()) != kDashboardPrefix) return false;
  std::string_view rest = path.substr(kDashboardPrefix.size());
  if (!rest.empty() && rest.front() != '/') return false;  // "/uix" is not ours.
  if (req.method != "GET" && req.method != "HEAD") {
    HeaderList h = CommonHeaders();
    h.emplace_back("Allow", "GET, HEAD");
    h.emplace_back("Content-Type", "text/plain; charset=utf-8");
    w.Send(405, h, "the dashboard's files are read-only: GET or HEAD\n");
    return true;
  }
  if (rest.empty()) {
    HeaderList h = CommonHeaders();
    h.emplace_back("Location", "/ui/");
    h.emplace_back("Content-Type", "text/plain; charset=utf-8");
    w.Send(301, h, "moved to /ui/\n");
    return true;
  }
  std::string_view name = rest.substr(1);
  if (name.empty()) name = "index.html";
  const internal::Asset* a = Find(name);
  if (a == nullptr) {
    SendPage(req, w, 404, "Not found",
             "The dashboard has no such page. Objects are shown at /ui/#/..., e.g. "
             "/ui/#/clusterqueues.");
    return true;
  }
  std::string etag = Etag(a->data);
  HeaderList h = CommonHeaders();
  h.emplace_back("Content-Type", std::string(ContentType(a->name)));
  // Revalidate every time: a new binary may serve new files under the same name.
  h.emplace_back("Cache-Control", "no-cache");
  h.emplace_back("ETag", etag);
  if (req.Header("if-none-match") == etag) {
    w.Send(304, h, "");
    return true;
  }
  w.Send(200, h, req.method == "HEAD" ? std::string() : std::string(a->data));
  return true;
}

}  // namespace batchd::ui
