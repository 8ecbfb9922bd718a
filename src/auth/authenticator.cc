#include "auth/authenticator.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/string_view.h"

namespace batchd::auth {

UserInfo AnonymousUser() { return UserInfo{kAnonymousUser, "", {kUnauthenticatedGroup}, {}}; }

UserInfo LocalAdminUser() {
  return UserInfo{kLocalAdminUser, "", {kMastersGroup, kAuthenticatedGroup}, {}};
}

UserInfo ServiceAccountUser(const std::string& ns, const std::string& name, const std::string& uid) {
  return UserInfo{absl::StrCat(kServiceAccountPrefix, ns, ":", name), uid,
                  {kServiceAccountsGroup, absl::StrCat(kServiceAccountsGroup, ":", ns),
                   kAuthenticatedGroup},
                  {}};
}

void AddAuthenticatedGroup(UserInfo& u) {
  if (u.IsAnonymous() || u.InGroup(kAuthenticatedGroup)) return;
  u.groups.push_back(kAuthenticatedGroup);
}

bool SplitCsvRecord(std::string_view line, std::vector<std::string>* fields) {
  fields->clear();
  std::string cur;
  bool quoted = false, in_quotes = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          cur += '"';
          ++i;
        } else {
          in_quotes = false;
        }
      } else {
        cur += c;
      }
    } else if (c == '"' && cur.empty() && !quoted) {
      in_quotes = quoted = true;
    } else if (c == ',') {
      fields->push_back(std::move(cur));
      cur.clear();
      quoted = false;
    } else {
      cur += c;
    }
  }
  if (in_quotes) return false;
  fields->push_back(std::move(cur));
  return true;
}

absl::StatusOr<TokenTable> TokenTable::Parse(std::string_view csv, const std::string& path,
                                             std::vector<std::string>* warnings) {
  TokenTable t;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(Sv(csv), '\n')) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    std::vector<std::string> f;
    if (!SplitCsvRecord(std::string_view(line.data(), line.size()), &f)) {
      return absl::InvalidArgumentError(
          absl::StrCat("token file '", path, "': line ", line_no, ": unterminated quoted field"));
    }
    if (f.size() < 3) {
      return absl::InvalidArgumentError(absl::StrCat(
          "token file '", path,
          "' must have at least 3 columns (token, user name, user uid), found ", f.size()));
    }
    if (f[0].empty()) {
      if (warnings) warnings->push_back(absl::StrCat("skipped line ", line_no, " of ", path,
                                                     ": empty token"));
      continue;
    }
    UserInfo u{f[1], f[2], {}, {}};
    if (f.size() >= 4 && !f[3].empty()) {
      for (absl::string_view g : absl::StrSplit(f[3], ',')) u.groups.emplace_back(g);
    }
    if (t.Find(f[0]) && warnings) {
      warnings->push_back(absl::StrCat("duplicate token seen for user ", f[1], " on line ",
                                       line_no, " of ", path));
    }
    t.Add(f[0], std::move(u));
  }
  return t;
}

void TokenTable::Add(const std::string& token, UserInfo user) { by_token_[token] = std::move(user); }

const UserInfo* TokenTable::Find(std::string_view token) const {
  auto it = by_token_.find(std::string(token));
  return it == by_token_.end() ? nullptr : &it->second;
}

absl::StatusOr<UserInfo> Authenticator::Authenticate(std::string_view authorization,
                                                     const ClientCertificate* cert,
                                                     bool loopback) const {
  // x509: an empty CN is "not authenticated" (the next authenticator runs).
  if (cert && !cert->common_name.empty()) {
    UserInfo u{cert->common_name, "", cert->organizations, {}};
    AddAuthenticatedGroup(u);
    return u;
  }
  bool presented = false;
  if (!authorization.empty()) {
    std::vector<std::string> parts = absl::StrSplit(Sv(authorization), absl::MaxSplits(' ', 2));
    if (parts.size() >= 2 && absl::AsciiStrToLower(parts[0]) == "bearer" && !parts[1].empty()) {
      presented = true;
      const std::string& token = parts[1];
      if (const UserInfo* u = opts_.tokens.Find(token)) {
        UserInfo out = *u;
        AddAuthenticatedGroup(out);
        return out;
      }
      if (opts_.service_accounts && ServiceAccountTokens::LooksLikeJwt(token)) {
        auto c = opts_.service_accounts->Verify(token, opts_.now());
        if (c.ok() && !c->node.empty()) {
          return UserInfo{absl::StrCat(kNodeUserPrefix, c->node), "",
                          {kNodesGroup, kAuthenticatedGroup}, {}};
        }
        if (c.ok()) {
          std::optional<std::string> uid;
          if (opts_.service_account_uid) uid = opts_.service_account_uid(c->ns, c->name);
          if (!uid || (!c->uid.empty() && *uid != c->uid)) {
            return absl::UnauthenticatedError("service account token refers to a deleted service account");
          }
          UserInfo out = ServiceAccountUser(c->ns, c->name, c->uid);
          if (!c->jti.empty()) out.extra["authentication.kubernetes.io/credential-id"] = {"JTI=" + c->jti};
          return out;
        }
        return c.status();
      }
      return absl::UnauthenticatedError("invalid bearer token");
    }
  }
  if (!presented && loopback && opts_.allow_loopback_admin) return LocalAdminUser();
  if (!opts_.anonymous) return absl::UnauthenticatedError("no credentials (anonymous requests are off)");
  return AnonymousUser();
}

}  // namespace batchd::auth
