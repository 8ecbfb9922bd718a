// OpenAPI v2 (Swagger 2.0) for kubectl's client-side validation: the
// definitions of every served group-version, derived from the same
// components as the v3 documents, and their protobuf encoding (gnostic's
// openapi_v2.Document, the form kubectl asks for).
#include <algorithm>
#include <cstdint>

#include "absl/strings/match.h"
#include "api/schema_ops/openapi.h"

namespace batchd::api::schema_ops {
namespace {

constexpr char kV3Prefix[] = "#/components/schemas/";

// One v3 schema as a v2 schema: references point at #/definitions, a single
// `allOf` reference becomes a plain `$ref` (what kubectl's parser expects),
// and a schema that keeps unknown fields loses its property list so that
// kubectl's validation does not call those fields unknown.
Json ToV2Schema(const Json& s) {
  if (!s.is_object()) return s;
  Json out = Json::object();
  const bool preserve = s.value("x-kubernetes-preserve-unknown-fields", false);
  for (auto it = s.begin(); it != s.end(); ++it) {
    const std::string& key = it.key();
    if (key == "$ref" && it->is_string()) {
      std::string ref = it->get<std::string>();
      if (absl::StartsWith(ref, kV3Prefix)) ref = "#/definitions/" + ref.substr(sizeof(kV3Prefix) - 1);
      out["$ref"] = ref;
    } else if (key == "allOf" && it->is_array() && it->size() == 1 && (*it)[0].is_object() &&
               (*it)[0].contains("$ref")) {
      Json inner = ToV2Schema((*it)[0]);
      out["$ref"] = inner["$ref"];
    } else if (key == "properties" && it->is_object()) {
      if (preserve) continue;
      Json props = Json::object();
      for (auto p = it->begin(); p != it->end(); ++p) props[p.key()] = ToV2Schema(*p);
      out["properties"] = std::move(props);
    } else if (key == "required" && preserve) {
      continue;
    } else if (key == "items" || key == "additionalProperties") {
      out[key] = it->is_object() ? ToV2Schema(*it) : *it;
    } else if (key == "nullable") {
      continue;  // Not part of Swagger 2.0.
    } else {
      out[key] = *it;
    }
  }
  // Anything-goes values (kAny) are typed "object" in v3; kubectl's v2
  // validation would then refuse a string or a list there.
  if (preserve && !out.contains("properties") && !out.contains("additionalProperties")) {
    out.erase("type");
  }
  return out;
}

// --- protobuf encoding (proto3 wire format) ---

void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void PutTag(std::string& out, int field, int wire_type) {
  PutVarint(out, (static_cast<uint64_t>(field) << 3) | static_cast<uint64_t>(wire_type));
}

void PutBytes(std::string& out, int field, std::string_view b) {
  PutTag(out, field, 2);
  PutVarint(out, b.size());
  out.append(b);
}

void PutString(std::string& out, int field, const std::string& s) {
  if (!s.empty()) PutBytes(out, field, s);
}

void PutBool(std::string& out, int field, bool b) {
  if (!b) return;
  PutTag(out, field, 0);
  PutVarint(out, 1);
}

// openapi_v2.Any {yaml = 2}: JSON is YAML, which is how gnostic's readers parse it.
std::string EncodeAny(const Json& v) {
  std::string out;
  PutString(out, 2, v.dump());
  return out;
}

// openapi_v2.NamedAny {name = 1, value = 2}.
std::string EncodeNamedAny(const std::string& name, const Json& v) {
  std::string out;
  PutString(out, 1, name);
  PutBytes(out, 2, EncodeAny(v));
  return out;
}

// openapi_v2.Schema.
std::string EncodeSchema(const Json& s) {
  std::string out;
  if (!s.is_object()) return out;
  auto str = [&](const char* key) {
    auto it = s.find(key);
    return it != s.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  PutString(out, 1, str("$ref"));
  PutString(out, 2, str("format"));
  PutString(out, 3, str("title"));
  PutString(out, 4, str("description"));
  if (auto it = s.find("default"); it != s.end()) PutBytes(out, 5, EncodeAny(*it));
  if (auto it = s.find("required"); it != s.end() && it->is_array()) {
    for (const Json& r : *it) {
      if (r.is_string()) PutBytes(out, 19, r.get<std::string>());
    }
  }
  if (auto it = s.find("enum"); it != s.end() && it->is_array()) {
    for (const Json& e : *it) PutBytes(out, 20, EncodeAny(e));
  }
  if (auto it = s.find("additionalProperties"); it != s.end()) {
    std::string item;  // AdditionalPropertiesItem {schema = 1 | boolean = 2}
    if (it->is_boolean()) {
      PutTag(item, 2, 0);
      PutVarint(item, it->get<bool>() ? 1 : 0);
    } else {
      PutBytes(item, 1, EncodeSchema(*it));
    }
    PutBytes(out, 21, item);
  }
  if (auto it = s.find("type"); it != s.end() && it->is_string()) {
    std::string type;  // TypeItem {repeated value = 1}
    PutBytes(type, 1, it->get<std::string>());
    PutBytes(out, 22, type);
  }
  if (auto it = s.find("items"); it != s.end() && it->is_object()) {
    std::string items;  // ItemsItem {repeated schema = 1}
    PutBytes(items, 1, EncodeSchema(*it));
    PutBytes(out, 23, items);
  }
  if (auto it = s.find("properties"); it != s.end() && it->is_object()) {
    std::string props;  // Properties {repeated NamedSchema additional_properties = 1}
    for (auto p = it->begin(); p != it->end(); ++p) {
      std::string named;
      PutString(named, 1, p.key());
      PutBytes(named, 2, EncodeSchema(*p));
      PutBytes(props, 1, named);
    }
    PutBytes(out, 25, props);
  }
  PutBool(out, 27, s.value("readOnly", false));
  for (auto it = s.begin(); it != s.end(); ++it) {
    if (absl::StartsWith(it.key(), "x-")) PutBytes(out, 31, EncodeNamedAny(it.key(), *it));
  }
  return out;
}

}  // namespace

Json OpenApiV2Document(const Scheme& scheme) {
  Json definitions = Json::object();
  for (const auto& k : scheme.All()) {
    Json doc = OpenApiV3Document(scheme, k->group, k->version);
    for (auto& [name, schema] : doc["components"]["schemas"].items()) {
      if (!definitions.contains(name)) {
        definitions[name] = ToV2Schema(schema);
        continue;
      }
      // One component serving several group-version-kinds (a kind served in
      // two versions from one schema): it names them all, as Kubernetes does.
      auto gvks = schema.find("x-kubernetes-group-version-kind");
      if (gvks == schema.end()) continue;
      Json& have = definitions[name]["x-kubernetes-group-version-kind"];
      if (!have.is_array()) have = Json::array();
      for (const Json& g : *gvks) {
        if (std::find(have.begin(), have.end(), g) == have.end()) have.push_back(g);
      }
    }
  }
  return {{"swagger", "2.0"},
          {"info", {{"title", "Kubernetes"}, {"version", "v1.32.0"}}},
          {"paths", Json::object()},
          {"definitions", std::move(definitions)},
          {"securityDefinitions",
           {{"BearerToken", {{"type", "apiKey"}, {"name", "authorization"}, {"in", "header"},
                             {"description", "Bearer Token authentication"}}}}},
          {"security", Json::array({{{"BearerToken", Json::array()}}})}};
}

std::string OpenApiV2Protobuf(const Json& doc) {
  std::string out;
  PutString(out, 1, doc.value("swagger", std::string("2.0")));
  if (auto it = doc.find("info"); it != doc.end() && it->is_object()) {
    std::string info;  // Info {title = 1, version = 2}
    PutString(info, 1, it->value("title", std::string()));
    PutString(info, 2, it->value("version", std::string()));
    PutBytes(out, 2, info);
  }
  PutBytes(out, 8, "");  // Paths: none (kubectl reads operations from /openapi/v3).
  if (auto it = doc.find("definitions"); it != doc.end() && it->is_object()) {
    std::string defs;  // Definitions {repeated NamedSchema additional_properties = 1}
    for (auto d = it->begin(); d != it->end(); ++d) {
      std::string named;
      PutString(named, 1, d.key());
      PutBytes(named, 2, EncodeSchema(*d));
      PutBytes(defs, 1, named);
    }
    PutBytes(out, 9, defs);
  }
  return out;
}

}  // namespace batchd::api::schema_ops
