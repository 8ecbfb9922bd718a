#include "api/validation/object_meta.h"

#include "api/json_access.h"

#include <algorithm>
#include <set>
#include <string>

namespace batchd::api::validation {
namespace {

constexpr std::string_view kFieldImmutable = "field is immutable";

// Returns the string at `obj[key]`; "" when absent or null. Sets `*bad` when
// the value exists but is not a string.
std::string StringField(const Json& obj, const char* key, bool* bad) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return "";
  if (!it->is_string()) {
    *bad = true;
    return "";
  }
  return it->get<std::string>();
}

void AddInvalidEach(ErrorList& errs, const Path& p, const Json& value, const Messages& msgs) {
  for (const std::string& m : msgs) errs.push_back(Invalid(p, value, m));
}

void ValidateNameFields(const Json& meta, const NameValidator& name_fn, const Path& path,
                        ErrorList& errs) {
  bool bad = false;
  std::string name = StringField(meta, "name", &bad);
  if (bad)
    errs.push_back(Invalid(path.Child("name"), Member(meta, "name"), "must be a string"));
  bad = false;
  std::string generate_name = StringField(meta, "generateName", &bad);
  if (bad) {
    errs.push_back(
        Invalid(path.Child("generateName"), Member(meta, "generateName"), "must be a string"));
  }
  if (!generate_name.empty() && name_fn) {
    AddInvalidEach(errs, path.Child("generateName"), generate_name, name_fn(generate_name, true));
  }
  if (name.empty()) {
    // Kubernetes generates the name before validating; accepting a bare
    // generateName keeps this correct whichever order the registry uses.
    if (generate_name.empty()) {
      errs.push_back(Required(path.Child("name"), "name or generateName is required"));
    }
  } else if (name_fn) {
    AddInvalidEach(errs, path.Child("name"), name, name_fn(name, false));
  }
}

void ValidateNamespaceField(const Json& meta, bool namespaced, const Path& path, ErrorList& errs) {
  bool bad = false;
  std::string ns = StringField(meta, "namespace", &bad);
  if (bad) {
    errs.push_back(
        Invalid(path.Child("namespace"), Member(meta, "namespace"), "must be a string"));
    return;
  }
  if (namespaced) {
    if (ns.empty()) {
      errs.push_back(Required(path.Child("namespace"), ""));
    } else {
      AddInvalidEach(errs, path.Child("namespace"), ns, IsDNS1123Label(ns));
    }
  } else if (!ns.empty()) {
    errs.push_back(Forbidden(path.Child("namespace"), "not allowed on this type"));
  }
}

// Splits an apiVersion like Kubernetes' ParseGroupVersion and returns the
// version ("" when missing or malformed).
std::string VersionOf(const std::string& api_version) {
  size_t slash = api_version.find('/');
  if (slash == std::string::npos) return api_version;
  if (api_version.find('/', slash + 1) != std::string::npos) return "";
  return api_version.substr(slash + 1);
}

std::string GroupOf(const std::string& api_version) {
  size_t slash = api_version.find('/');
  return slash == std::string::npos ? "" : api_version.substr(0, slash);
}

void ValidateOneOwnerReference(const Json& ref, const Path& path, ErrorList& errs) {
  bool bad = false;
  std::string api_version = StringField(ref, "apiVersion", &bad);
  std::string kind = StringField(ref, "kind", &bad);
  std::string name = StringField(ref, "name", &bad);
  std::string uid = StringField(ref, "uid", &bad);
  if (VersionOf(api_version).empty()) {
    errs.push_back(Invalid(path.Child("apiVersion"), api_version, "version must not be empty"));
  }
  if (kind.empty()) errs.push_back(Invalid(path.Child("kind"), kind, "must not be empty"));
  if (name.empty()) errs.push_back(Invalid(path.Child("name"), name, "must not be empty"));
  if (uid.empty()) errs.push_back(Invalid(path.Child("uid"), uid, "must not be empty"));
  if (GroupOf(api_version).empty() && VersionOf(api_version) == "v1" && kind == "Event") {
    errs.push_back(Invalid(path, ref, "/v1, Kind=Event is disallowed from being an owner"));
  }
}

bool IsControllerRef(const Json& ref) {
  if (!ref.is_object()) return false;
  auto it = ref.find("controller");
  return it != ref.end() && it->is_boolean() && it->get<bool>();
}

}  // namespace

ErrorList ValidateLabels(const Json& labels, const Path& path) {
  ErrorList errs;
  if (labels.is_null()) return errs;
  if (!labels.is_object()) {
    errs.push_back(Invalid(path, labels, "must be an object of string values"));
    return errs;
  }
  for (auto it = labels.begin(); it != labels.end(); ++it) {
    AddInvalidEach(errs, path, it.key(), IsQualifiedName(it.key()));
    if (!it.value().is_string()) {
      errs.push_back(Invalid(path, it.value(), "must be a string"));
      continue;
    }
    const std::string& v = it.value().get_ref<const std::string&>();
    AddInvalidEach(errs, path, v, IsValidLabelValue(v));
  }
  return errs;
}

ErrorList ValidateAnnotations(const Json& annotations, const Path& path) {
  ErrorList errs;
  if (annotations.is_null()) return errs;
  if (!annotations.is_object()) {
    errs.push_back(Invalid(path, annotations, "must be an object of string values"));
    return errs;
  }
  size_t total = 0;
  for (auto it = annotations.begin(); it != annotations.end(); ++it) {
    std::string lower = it.key();
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    AddInvalidEach(errs, path, it.key(), IsQualifiedName(lower));
    total += it.key().size();
    if (it.value().is_string()) {
      total += it.value().get_ref<const std::string&>().size();
    } else {
      errs.push_back(Invalid(path, it.value(), "must be a string"));
    }
  }
  if (total > kTotalAnnotationSizeLimitBytes) {
    errs.push_back(TooLong(path, "", kTotalAnnotationSizeLimitBytes));
  }
  return errs;
}

ErrorList ValidateOwnerReferences(const Json& refs, const Path& path) {
  ErrorList errs;
  if (refs.is_null()) return errs;
  if (!refs.is_array()) {
    errs.push_back(Invalid(path, refs, "must be a list"));
    return errs;
  }
  std::string first_controller;
  for (const Json& ref : refs) {
    ValidateOneOwnerReference(ref, path, errs);
    if (!IsControllerRef(ref)) continue;
    bool bad = false;
    std::string current = StringField(ref, "kind", &bad) + "/" + StringField(ref, "name", &bad);
    if (first_controller.empty()) {
      first_controller = current;
    } else {
      errs.push_back(Invalid(path, refs,
                             "Only one reference can have Controller set to true. Found \"true\" "
                             "in references for " +
                                 first_controller + " and " + current));
    }
  }
  return errs;
}

ErrorList ValidateFinalizers(const Json& finalizers, const Path& path) {
  ErrorList errs;
  if (finalizers.is_null()) return errs;
  if (!finalizers.is_array()) {
    errs.push_back(Invalid(path, finalizers, "must be a list of strings"));
    return errs;
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < finalizers.size(); ++i) {
    const Json& f = finalizers[i];
    if (!f.is_string()) {
      errs.push_back(Invalid(path.Index(i), f, "must be a string"));
      continue;
    }
    const std::string& s = f.get_ref<const std::string&>();
    AddInvalidEach(errs, path, s, IsQualifiedName(s));
    if (!seen.insert(s).second) errs.push_back(Duplicate(path.Index(i), s));
  }
  if (seen.count("orphan") && seen.count("foregroundDeletion")) {
    errs.push_back(
        Invalid(path, finalizers, "finalizer orphan and foregroundDeletion cannot be both set"));
  }
  return errs;
}

ErrorList ValidateObjectMeta(const Json& metadata, bool namespaced, const NameValidator& name_fn,
                             const Path& path) {
  ErrorList errs;
  if (!metadata.is_null() && !metadata.is_object()) {
    errs.push_back(Invalid(path, metadata, "must be an object"));
    return errs;
  }
  ValidateNameFields(metadata, name_fn, path, errs);
  ValidateNamespaceField(metadata, namespaced, path, errs);
  const Json& generation = Member(metadata, "generation");
  if (generation.is_number_integer() && generation.get<int64_t>() < 0) {
    errs.push_back(
        Invalid(path.Child("generation"), generation, "must be greater than or equal to 0"));
  }
  auto append = [&errs](ErrorList more) {
    errs.insert(errs.end(), std::make_move_iterator(more.begin()),
                std::make_move_iterator(more.end()));
  };
  append(ValidateLabels(Member(metadata, "labels"), path.Child("labels")));
  append(ValidateAnnotations(Member(metadata, "annotations"), path.Child("annotations")));
  append(ValidateOwnerReferences(Member(metadata, "ownerReferences"),
                                 path.Child("ownerReferences")));
  append(ValidateFinalizers(Member(metadata, "finalizers"), path.Child("finalizers")));
  return errs;
}

namespace {

// Compares `key` in both objects; absent, null and (for strings) "" are equal.
void CheckImmutable(const Json& new_meta, const Json& old_meta, const char* key, const Path& path,
                    ErrorList& errs) {
  auto normalize = [](const Json& v) -> Json {
    if (v.is_string() && v.get_ref<const std::string&>().empty()) return nullptr;
    return v;
  };
  Json n = normalize(Member(new_meta, key));
  Json o = normalize(Member(old_meta, key));
  if (n != o) {
    // Go shows a missing string as "" and a missing pointer (timestamps) as null.
    bool string_field = std::string_view(key) == "name" || std::string_view(key) == "namespace" ||
                        std::string_view(key) == "uid";
    Json shown = (n.is_null() && string_field) ? Json("") : n;
    errs.push_back(Invalid(path.Child(key), std::move(shown), std::string(kFieldImmutable)));
  }
}

std::set<std::string> StringSet(const Json& list) {
  std::set<std::string> out;
  if (!list.is_array()) return out;
  for (const Json& v : list) {
    if (v.is_string()) out.insert(v.get<std::string>());
  }
  return out;
}

}  // namespace

ErrorList ValidateDomainPrefixedPath(const Path& path, std::string_view value) {
  if (value.empty()) return {Required(path)};
  const size_t slash = value.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == value.size()) {
    return {Invalid(path, std::string(value),
                    "must be a domain-prefixed path (such as \"acme.io/foo\")")};
  }
  ErrorList errs;
  const std::string_view host = value.substr(0, slash), http_path = value.substr(slash + 1);
  for (const std::string& m : IsDNS1123Subdomain(host)) {
    errs.push_back(Invalid(path, std::string(host), m));
  }
  static constexpr std::string_view kPathChars =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/-._~%!$&'()*+,;=:";
  if (http_path.find_first_not_of(kPathChars) != std::string_view::npos) {
    errs.push_back(Invalid(path, std::string(http_path),
                           "Invalid path (regex used for validation is "
                           "'[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')"));
  }
  return errs;
}

ErrorList ValidateImmutableField(const Json& now, const Json& old, const Path& path) {
  if (now == old) return {};
  return {Invalid(path, now, std::string(kFieldImmutable))};
}

ErrorList ValidateObjectMetaUpdate(const Json& new_meta, const Json& old_meta, const Path& path) {
  ErrorList errs;
  if (!Member(old_meta, "deletionTimestamp").is_null()) {
    std::set<std::string> old_set = StringSet(Member(old_meta, "finalizers"));
    std::vector<std::string> extra;
    for (const std::string& f : StringSet(Member(new_meta, "finalizers"))) {
      if (!old_set.count(f)) extra.push_back(f);
    }
    if (!extra.empty()) {
      std::string list = "[]string{";
      for (size_t i = 0; i < extra.size(); ++i) list += (i ? ", \"" : "\"") + extra[i] + "\"";
      list += "}";
      errs.push_back(Forbidden(path.Child("finalizers"),
                               "no new finalizers can be added if the object is being deleted, "
                               "found new finalizers " +
                                   list));
    }
  }
  const Json& new_gen = Member(new_meta, "generation");
  const Json& old_gen = Member(old_meta, "generation");
  int64_t ng = new_gen.is_number_integer() ? new_gen.get<int64_t>() : 0;
  int64_t og = old_gen.is_number_integer() ? old_gen.get<int64_t>() : 0;
  if (ng < og) errs.push_back(Invalid(path.Child("generation"), ng, "must not be decremented"));
  for (const char* key : {"name", "namespace", "uid", "creationTimestamp", "deletionTimestamp",
                          "deletionGracePeriodSeconds"}) {
    CheckImmutable(new_meta, old_meta, key, path, errs);
  }
  return errs;
}

}  // namespace batchd::api::validation
