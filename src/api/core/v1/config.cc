// The Secret and ConfigMap kinds (core/v1): see internal/config.h.
#include "api/core/v1/internal/config.h"

#include <map>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "api/core/v1/internal/pods.h"
#include "api/core/v1/internal/schemas.h"
#include "api/json_access.h"
#include "api/validation/object_meta.h"

namespace batchd::api::core_v1::internal {
namespace {

constexpr char kRedacted[] = "<secret contents redacted>";

// Secret types and the keys each requires (Kubernetes' ValidateSecret).
const std::map<std::string, std::vector<std::string>>& RequiredKeys() {
  static const auto* m = new std::map<std::string, std::vector<std::string>>{
      {"kubernetes.io/dockercfg", {".dockercfg"}},
      {"kubernetes.io/dockerconfigjson", {".dockerconfigjson"}},
      {"kubernetes.io/ssh-auth", {"ssh-privatekey"}},
      {"kubernetes.io/tls", {"tls.crt", "tls.key"}},
  };
  return *m;
}

SchemaPtr SecretSchema() {
  static const SchemaPtr s =
      TopLevel(R("Secret"), "Secret holds secret data of a certain type. The total bytes of the "
                            "values in the Data field must be less than MaxSecretSize bytes.")
          .Field("data", MapOf(Str("base64-encoded bytes").Format("byte"),
                               "Data contains the secret data. Each key must consist of "
                               "alphanumeric characters, '-', '_' or '.'. The serialized form "
                               "of the secret data is a base64 encoded string."))
          .Field("immutable", Bool("Immutable, if set to true, ensures that data stored in the "
                                   "Secret cannot be updated (only object metadata can be "
                                   "modified)."))
          .Field("stringData", MapOf(Str(), "stringData allows specifying non-binary secret "
                                            "data in string form. It is provided as a "
                                            "write-only input field for convenience. All keys "
                                            "and values are merged into the data field on "
                                            "write, overwriting any existing values."))
          .Field("type", Str("Used to facilitate programmatic handling of secret data."))
          .Build();
  return s;
}

SchemaPtr ConfigMapSchema() {
  static const SchemaPtr s =
      TopLevel(R("ConfigMap"), "ConfigMap holds configuration data for pods to consume.")
          .Field("binaryData", MapOf(Str("base64-encoded bytes").Format("byte"),
                                     "BinaryData contains the binary data. Each key must "
                                     "consist of alphanumeric characters, '-', '_' or '.'."))
          .Field("data", MapOf(Str(), "Data contains the configuration data. Each key must "
                                      "consist of alphanumeric characters, '-', '_' or '.'."))
          .Field("immutable", Bool("Immutable, if set to true, ensures that data stored in the "
                                   "ConfigMap cannot be updated (only object metadata can be "
                                   "modified)."))
          .Build();
  return s;
}

// Go's base64.StdEncoding, as Kubernetes decodes []byte: the standard
// alphabet, padded to a multiple of 4 ('\r' and '\n' ignored). absl's
// decoder alone also takes unpadded input and whitespace.
bool DecodeStdBase64(const std::string& in, std::string* out) {
  std::string s;
  s.reserve(in.size());
  for (char c : in) {
    if (c != '\r' && c != '\n') s.push_back(c);
  }
  if (s.size() % 4 != 0) return false;
  size_t pad = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '=') {
      ++pad;
      continue;
    }
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '+' || c == '/';
    if (!ok || pad > 0) return false;  // a character after padding
  }
  if (pad > 2) return false;
  return absl::Base64Unescape(s, out);
}

// Checks the keys of `map` at `path` and adds the decoded size of its
// values to `total`. `base64`: values are base64 (checked; a bad one is
// reported without its value when `redact`).
void CheckData(ErrorList& errs, const Json& map, const Path& path, bool base64, bool redact,
               size_t& total) {
  if (!map.is_object()) return;
  for (auto it = map.begin(); it != map.end(); ++it) {
    const Path p = path.Key(it.key());
    for (const std::string& m : IsConfigMapKey(it.key())) errs.push_back(Invalid(p, it.key(), m));
    if (!it.value().is_string()) continue;
    const std::string& v = it.value().get_ref<const std::string&>();
    if (!base64) {
      total += v.size();
      continue;
    }
    std::string decoded;
    if (!DecodeStdBase64(v, &decoded)) {
      errs.push_back(Invalid(p, redact ? Json(kRedacted) : Json(v), "illegal base64 data"));
      continue;
    }
    total += decoded.size();
  }
}

const Json& Data(const Json& obj, const char* field) { return MemberObject(obj, field); }

// Immutable objects: only metadata may change, and `immutable` stays true.
void ValidateImmutable(ErrorList& errs, const Json& obj, const Json& old,
                       std::initializer_list<const char*> fields) {
  const Json* was = FindMember(old, "immutable");
  if (was == nullptr || !was->is_boolean() || !was->get<bool>()) return;
  const Json* now = FindMember(obj, "immutable");
  if (now == nullptr || !now->is_boolean() || !now->get<bool>()) {
    errs.push_back(Forbidden(Path("immutable"), "field is immutable when `immutable` is set"));
  }
  for (const char* f : fields) {
    if (Member(obj, f) != Member(old, f)) {
      errs.push_back(Forbidden(Path(f), "field is immutable when `immutable` is set"));
    }
  }
}

}  // namespace

std::vector<std::string> IsConfigMapKey(const std::string& key) {
  std::vector<std::string> out;
  if (key.size() > 253) out.push_back("must be no more than 253 characters");
  bool ok = !key.empty();
  for (char c : key) {
    ok &= (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          c == '-' || c == '_' || c == '.';
  }
  if (!ok) {
    out.push_back(
        "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "
        "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
        "'[-._a-zA-Z0-9]+')");
  }
  if (key == ".") {
    out.push_back("must not be '.'");
  } else if (key == "..") {
    out.push_back("must not be '..'");
  } else if (key.rfind("..", 0) == 0) {
    out.push_back("must not start with '..'");
  }
  return out;
}

void SetDefaultsSecret(Json& secret) {
  if (!secret.is_object()) return;
  if (CopyStringMember(secret, "type").empty()) secret["type"] = "Opaque";
  const Json* sd = FindMember(secret, "stringData");
  if (sd != nullptr && sd->is_object() && !sd->empty()) {
    if (!secret.contains("data") || !secret["data"].is_object()) secret["data"] = Json::object();
    for (auto it = sd->begin(); it != sd->end(); ++it) {
      if (it.value().is_string()) {
        secret["data"][it.key()] = absl::Base64Escape(it.value().get<std::string>());
      }
    }
  }
  secret.erase("stringData");
}

ErrorList ValidateSecret(const Json& secret) {
  ErrorList errs;
  size_t total = 0;
  CheckData(errs, Data(secret, "data"), Path("data"), /*base64=*/true, /*redact=*/true, total);
  if (total > kMaxConfigDataBytes) {
    errs.push_back(TooLong(Path("data"), Json(), kMaxConfigDataBytes));
  }
  const std::string type = CopyStringMember(secret, "type");
  auto req = RequiredKeys().find(type);
  if (req != RequiredKeys().end()) {
    for (const std::string& key : req->second) {
      if (!Data(secret, "data").contains(key)) errs.push_back(Required(Path("data").Key(key), ""));
    }
  }
  if (type == "kubernetes.io/service-account-token" &&
      CopyStringMember(MemberObject(MemberObject(secret, "metadata"), "annotations"),
                       "kubernetes.io/service-account.name")
          .empty()) {
    errs.push_back(Required(
        Path("metadata").Child("annotations").Key("kubernetes.io/service-account.name"), ""));
  }
  return errs;
}

ErrorList ValidateSecretUpdate(const Json& secret, const Json& old) {
  ErrorList errs = ValidateSecret(secret);
  AppendErrors(errs, validation::ValidateImmutableField(Member(secret, "type"), Member(old, "type"),
                                                        Path("type")));
  ValidateImmutable(errs, secret, old, {"data"});
  return errs;
}

ErrorList ValidateConfigMap(const Json& cm) {
  ErrorList errs;
  size_t total = 0;
  CheckData(errs, Data(cm, "data"), Path("data"), false, false, total);
  CheckData(errs, Data(cm, "binaryData"), Path("binaryData"), true, false, total);
  const Json& data = Data(cm, "data");
  const Json& binary = Data(cm, "binaryData");
  for (auto it = binary.begin(); it != binary.end(); ++it) {
    if (data.contains(it.key())) {
      errs.push_back(Invalid(Path("data").Key(it.key()), it.key(),
                             "duplicate of key present in binaryData"));
    }
  }
  if (total > kMaxConfigDataBytes) {
    errs.push_back(TooLong(Path(""), Json(), kMaxConfigDataBytes));
  }
  return errs;
}

ErrorList ValidateConfigMapUpdate(const Json& cm, const Json& old) {
  ErrorList errs = ValidateConfigMap(cm);
  ValidateImmutable(errs, cm, old, {"data", "binaryData"});
  return errs;
}

KindDef SecretKind() {
  KindDef k;
  k.version = "v1";
  k.kind = "Secret";
  k.plural = "secrets";
  k.singular = "secret";
  k.namespaced = true;
  k.schema = SecretSchema();
  k.set_defaults = SetDefaultsSecret;
  k.validate_create = ValidateSecret;
  k.validate_update = ValidateSecretUpdate;
  k.columns = {{"Type", "string", "", "The type of the secret.", 0},
               {"Data", "integer", "", "The number of entries in the data.", 0},
               {"Age", "string", "", "CreationTimestamp of the object.", 0}};
  k.row_cells = [](const Json& s, absl::Time now) -> std::vector<Json> {
    return {CopyStringMember(s, "type"), Data(s, "data").size(),
            HumanAge(MemberObject(s, "metadata").value("creationTimestamp", Json()), now)};
  };
  k.selectable_fields = {"type"};
  k.field_value = [](const Json& obj, const std::string& field) {
    return FieldString(obj, field);
  };
  return k;
}

KindDef ConfigMapKind() {
  KindDef k;
  k.version = "v1";
  k.kind = "ConfigMap";
  k.plural = "configmaps";
  k.singular = "configmap";
  k.namespaced = true;
  k.short_names = {"cm"};
  k.schema = ConfigMapSchema();
  k.validate_create = ValidateConfigMap;
  k.validate_update = ValidateConfigMapUpdate;
  k.columns = {{"Data", "integer", "", "The number of entries in data and binaryData.", 0},
               {"Age", "string", "", "CreationTimestamp of the object.", 0}};
  k.row_cells = [](const Json& cm, absl::Time now) -> std::vector<Json> {
    return {Data(cm, "data").size() + Data(cm, "binaryData").size(),
            HumanAge(MemberObject(cm, "metadata").value("creationTimestamp", Json()), now)};
  };
  return k;
}

}  // namespace batchd::api::core_v1::internal
