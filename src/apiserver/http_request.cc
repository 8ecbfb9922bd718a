// The request-level parts of the HTTP transport that need no sockets:
// decoding of paths and query strings, the in-flight budget a request counts
// against (ClassifyRequest) and the `timeout` parameter's Go durations.
#include <cctype>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "apiserver/http.h"
#include "apiserver/http_server.h"
#include "common/string_view.h"

namespace batchd::apiserver {

std::string UrlDecode(std::string_view s, bool form) {
  std::string out;
  out.reserve(s.size());
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '%' && i + 2 < s.size()) {
      int hi = hex(s[i + 1]), lo = hex(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(form && c == '+' ? ' ' : c);
  }
  return out;
}

std::multimap<std::string, std::string> ParseQuery(std::string_view q) {
  std::multimap<std::string, std::string> out;
  while (!q.empty()) {
    size_t amp = q.find('&');
    std::string_view part = q.substr(0, amp);
    if (!part.empty()) {
      size_t eq = part.find('=');
      std::string key = UrlDecode(part.substr(0, eq), true);
      std::string val = eq == std::string_view::npos ? "" : UrlDecode(part.substr(eq + 1), true);
      out.emplace(std::move(key), std::move(val));
    }
    if (amp == std::string_view::npos) break;
    q.remove_prefix(amp + 1);
  }
  return out;
}

RequestKind ClassifyRequest(const HttpRequest& req) {
  const std::string& p = req.path;
  if (p == "/healthz" || p == "/livez" || p == "/readyz" || absl::StartsWith(p, "/healthz/") ||
      absl::StartsWith(p, "/livez/") || absl::StartsWith(p, "/readyz/")) {
    return RequestKind::kExempt;
  }
  const std::string watch = req.Param("watch");
  if (watch == "true" || watch == "1") return RequestKind::kLongRunning;
  // /api/v1/watch/..., /apis/G/V/watch/... (the deprecated watch paths) and
  // the long-running subresources.
  std::vector<std::string_view> segs;
  for (size_t i = 0; i < p.size();) {
    size_t j = p.find('/', i);
    if (j == std::string::npos) j = p.size();
    if (j > i) segs.push_back(std::string_view(p).substr(i, j - i));
    i = j + 1;
  }
  size_t base = !segs.empty() && segs[0] == "api" ? 2 : (!segs.empty() && segs[0] == "apis" ? 3 : 0);
  if (base > 0 && segs.size() > base) {
    if (segs[base] == "watch") return RequestKind::kLongRunning;
    // [namespaces/NS/]RESOURCE/NAME/SUBRESOURCE
    size_t r = base;
    if (segs[r] == "namespaces" && segs.size() > r + 3) r += 2;
    const std::string_view last = segs.back();
    if (segs.size() == r + 3 &&
        (last == "log" || last == "exec" || last == "attach" || last == "portforward" ||
         last == "proxy")) {
      return RequestKind::kLongRunning;
    }
  }
  const std::string& m = req.method;
  if (m == "GET" || m == "HEAD" || m == "OPTIONS") return RequestKind::kReadOnly;
  return RequestKind::kMutating;
}

std::optional<absl::Duration> ParseGoDuration(std::string_view s) {
  if (s.empty()) return std::nullopt;
  bool neg = false;
  if (s[0] == '-' || s[0] == '+') {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return absl::ZeroDuration();
  if (s.empty()) return std::nullopt;
  absl::Duration total;
  while (!s.empty()) {
    size_t i = 0;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
    if (i == 0) return std::nullopt;
    double v = 0;
    if (!absl::SimpleAtod(Sv(s.substr(0, i)), &v)) return std::nullopt;
    s.remove_prefix(i);
    size_t u = 0;
    while (u < s.size() && !std::isdigit(static_cast<unsigned char>(s[u])) && s[u] != '.') ++u;
    std::string_view unit = s.substr(0, u);
    s.remove_prefix(u);
    absl::Duration d;
    if (unit == "ns") d = absl::Nanoseconds(v);
    else if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") d = absl::Microseconds(v);
    else if (unit == "ms") d = absl::Milliseconds(v);
    else if (unit == "s") d = absl::Seconds(v);
    else if (unit == "m") d = absl::Minutes(v);
    else if (unit == "h") d = absl::Hours(v);
    else return std::nullopt;
    total += d;
  }
  return neg ? -total : total;
}

}  // namespace batchd::apiserver
