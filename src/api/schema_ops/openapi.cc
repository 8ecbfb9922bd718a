#include "api/schema_ops/openapi.h"

#include <cctype>
#include <cinttypes>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "api/schema_ops/internal/openapi_internal.h"

namespace batchd::api::schema_ops {
namespace {

using internal::ComponentBuilder;
using internal::RefPath;

constexpr char kStatusRef[] = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
constexpr char kDeleteOptionsRef[] = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions";
constexpr char kPatchRef[] = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch";
constexpr char kWatchEventRef[] = "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent";
constexpr char kListMetaRef[] = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";

Json QueryParam(const char* name, const char* type, const char* doc) {
  return {{"name", name}, {"in", "query"}, {"description", doc},
          {"schema", {{"type", type}, {"uniqueItems", true}}}};
}

Json PathParam(const char* name, const char* doc) {
  return {{"name", name}, {"in", "path"}, {"required", true}, {"description", doc},
          {"schema", {{"type", "string"}, {"uniqueItems", true}}}};
}

Json WriteParams(bool patch) {
  Json p = Json::array({
      QueryParam("dryRun", "string", "When present, modifications are not persisted. "
                                     "Valid value: All."),
      QueryParam("fieldManager", "string", "Name associated with the actor making the changes."),
      QueryParam("fieldValidation", "string",
                 "How the server handles unknown or duplicate fields: Ignore, Warn or Strict."),
  });
  if (patch) p.push_back(QueryParam("force", "boolean", "Force apply requests to take ownership "
                                                        "of conflicting fields."));
  return p;
}

Json DeleteParams() {
  return Json::array({
      QueryParam("dryRun", "string", "When present, modifications are not persisted."),
      QueryParam("gracePeriodSeconds", "integer", "Seconds before the object is deleted."),
      QueryParam("orphanDependents", "boolean", "Deprecated: use propagationPolicy."),
      QueryParam("propagationPolicy", "string", "Orphan, Background or Foreground."),
  });
}

Json ListParams() {
  return Json::array({
      QueryParam("allowWatchBookmarks", "boolean", "Request watch events of type BOOKMARK."),
      QueryParam("continue", "string", "The continue token of a previous paged list."),
      QueryParam("fieldSelector", "string", "Restrict the returned objects by their fields."),
      QueryParam("labelSelector", "string", "Restrict the returned objects by their labels."),
      QueryParam("limit", "integer", "Maximum number of responses to return for a list call."),
      QueryParam("resourceVersion", "string", "Constraint on which resource versions to serve."),
      QueryParam("resourceVersionMatch", "string", "How resourceVersion is applied."),
      QueryParam("sendInitialEvents", "boolean", "Start a watch with synthetic ADDED events."),
      QueryParam("timeoutSeconds", "integer", "Timeout for the list/watch call."),
      QueryParam("watch", "boolean", "Watch for changes to the described resources."),
  });
}

Json Content(const std::string& ref, std::initializer_list<const char*> types) {
  Json c = Json::object();
  for (const char* t : types) c[t] = {{"schema", {{"$ref", RefPath(ref)}}}};
  return c;
}

Json Responses(const std::string& ref, bool created) {
  Json r = {{"200", {{"description", "OK"},
                     {"content", Content(ref, {"application/json", "application/yaml"})}}},
            {"401", {{"description", "Unauthorized"}}}};
  if (created) {
    r["201"] = {{"description", "Created"},
                {"content", Content(ref, {"application/json", "application/yaml"})}};
  }
  return r;
}

// Group-version as Kubernetes spells it in operation ids: "CoreV1", "BatchV1".
std::string GvCamel(const KindDef& k) {
  std::string g = k.group.empty() ? "core" : k.group.substr(0, k.group.find('.'));
  std::string out;
  bool up = true;
  for (char c : g) {
    if (!std::isalnum(static_cast<unsigned char>(c))) { up = true; continue; }
    out += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    up = false;
  }
  std::string v = k.version;
  if (!v.empty()) v[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(v[0])));
  return out + v;
}

std::string Capitalize(std::string s) {
  if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  return s;
}

struct OpSpec {
  const char* verb;    // HTTP method key: get, put, post, patch, delete.
  const char* action;  // x-kubernetes-action.
  const char* id_verb; // operationId prefix: read, list, create, ...
  std::string suffix;  // operationId suffix: "", "Status", "Log", "ForAllNamespaces".
};

class PathWriter {
 public:
  PathWriter(const KindDef& k, const std::string& kind_ref, const std::string& list_ref)
      : k_(k), kind_ref_(kind_ref), list_ref_(list_ref) {
    gvk_ = {{"group", k.group}, {"kind", k.kind}, {"version", k.version}};
    base_ = k.group.empty() ? "/api/" + k.version : "/apis/" + k.group + "/" + k.version;
  }

  void Write(Json& paths) {
    const std::string ns = k_.namespaced ? "/namespaces/{namespace}" : "";
    const std::string coll = base_ + ns + "/" + k_.plural;
    const std::string item = coll + "/{name}";
    paths[coll] = Collection(/*all_namespaces=*/false);
    paths[item] = Item();
    if (k_.namespaced) paths[base_ + "/" + k_.plural] = Collection(/*all_namespaces=*/true);
    for (const std::string& sub : k_.subresources) paths[item + "/" + sub] = Subresource(sub);
  }

 private:
  Json Op(const OpSpec& spec, Json params, const std::string& response_ref, bool created) {
    std::string id = absl::StrCat(spec.id_verb, GvCamel(k_), k_.namespaced && spec.suffix != "ForAllNamespaces" ? "Namespaced" : "",
                                  k_.kind, spec.suffix);
    Json op = {{"tags", Json::array({GvCamel(k_)})},
               {"description", absl::StrCat(spec.id_verb, " ", k_.kind, spec.suffix)},
               {"operationId", id},
               {"parameters", std::move(params)},
               {"responses", Responses(response_ref, created)},
               {"x-kubernetes-action", spec.action},
               {"x-kubernetes-group-version-kind", gvk_}};
    return op;
  }

  Json CommonPathParams(bool with_name) {
    Json p = Json::array();
    if (with_name) p.push_back(PathParam("name", ("name of the " + k_.kind).c_str()));
    if (k_.namespaced) p.push_back(PathParam("namespace", "object name and auth scope"));
    p.push_back(QueryParam("pretty", "string", "If 'true', the output is pretty printed."));
    return p;
  }

  Json Collection(bool all_namespaces) {
    Json path = Json::object();
    if (all_namespaces) {
      path["get"] = Op({"get", "list", "list", "ForAllNamespaces"}, ListParams(), list_ref_, false);
      path["parameters"] = Json::array({QueryParam("pretty", "string", "Pretty-print output.")});
      return path;
    }
    path["get"] = Op({"get", "list", "list", ""}, ListParams(), list_ref_, false);
    Json post = Op({"post", "post", "create", ""}, WriteParams(false), kind_ref_, true);
    post["requestBody"] = {{"content", Content(kind_ref_, {"*/*"})}, {"required", true}};
    path["post"] = std::move(post);
    Json params = ListParams();
    for (const Json& p : DeleteParams()) params.push_back(p);
    Json del = Op({"delete", "deletecollection", "deletecollection", ""}, std::move(params),
                  kStatusRef, false);
    del["requestBody"] = {{"content", Content(kDeleteOptionsRef, {"*/*"})}};
    path["delete"] = std::move(del);
    path["parameters"] = CommonPathParams(false);
    return path;
  }

  Json Item() {
    Json path = Json::object();
    path["get"] = Op({"get", "get", "read", ""}, Json::array(), kind_ref_, false);
    AddWriteOps(path, "");
    Json del = Op({"delete", "delete", "delete", ""}, DeleteParams(), kind_ref_, false);
    del["requestBody"] = {{"content", Content(kDeleteOptionsRef, {"*/*"})}};
    path["delete"] = std::move(del);
    path["parameters"] = CommonPathParams(true);
    return path;
  }

  void AddWriteOps(Json& path, const std::string& suffix) {
    Json put = Op({"put", "put", "replace", suffix}, WriteParams(false), kind_ref_, true);
    put["requestBody"] = {{"content", Content(kind_ref_, {"*/*"})}, {"required", true}};
    path["put"] = std::move(put);
    Json patch = Op({"patch", "patch", "patch", suffix}, WriteParams(true), kind_ref_, true);
    patch["requestBody"] = {
        {"content", Content(kPatchRef, {"application/apply-patch+yaml", "application/json-patch+json",
                                        "application/merge-patch+json",
                                        "application/strategic-merge-patch+json"})},
        {"required", true}};
    path["patch"] = std::move(patch);
  }

  Json Subresource(const std::string& sub) {
    Json path = Json::object();
    std::string suffix = Capitalize(sub);
    if (sub == "status") {
      path["get"] = Op({"get", "get", "read", suffix}, Json::array(), kind_ref_, false);
      AddWriteOps(path, suffix);
    } else if (sub == "log") {
      Json params = Json::array({
          QueryParam("container", "string", "The container for which to stream logs."),
          QueryParam("follow", "boolean", "Follow the log stream of the pod."),
          QueryParam("limitBytes", "integer", "Number of bytes to read from the server."),
          QueryParam("previous", "boolean", "Return previous terminated container logs."),
          QueryParam("sinceSeconds", "integer", "Relative time in seconds to show logs from."),
          QueryParam("tailLines", "integer", "Number of lines from the end of the logs to show."),
          QueryParam("timestamps", "boolean", "Prefix each line with an RFC 3339 timestamp."),
      });
      Json op = Op({"get", "get", "read", suffix}, std::move(params), kStatusRef, false);
      op["responses"]["200"]["content"] = {{"text/plain", {{"schema", {{"type", "string"}}}}}};
      path["get"] = std::move(op);
    } else {
      Json op = Op({"post", "post", "create", suffix}, WriteParams(false), kStatusRef, true);
      op["requestBody"] = {{"content", {{"*/*", {{"schema", {{"type", "object"}}}}}}},
                           {"required", true}};
      path["post"] = std::move(op);
    }
    path["parameters"] = CommonPathParams(true);
    return path;
  }

  const KindDef& k_;
  std::string kind_ref_;
  std::string list_ref_;
  Json gvk_;
  std::string base_;
};

Json OpaqueObject(const char* doc) {
  return {{"description", doc}, {"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}};
}

// Status, DeleteOptions, Patch and WatchEvent as the operations reference them.
void AddMetaComponents(Json& schemas) {
  schemas[kStatusRef] = OpaqueObject("Status is a return value for calls that don't return "
                                     "other objects.");
  schemas[kDeleteOptionsRef] = OpaqueObject("DeleteOptions may be provided when deleting an "
                                            "API object.");
  schemas[kPatchRef] = {{"description", "Patch is provided to give a concrete name and type "
                                        "to the Kubernetes PATCH request body."},
                        {"type", "object"}};
  schemas[kWatchEventRef] = OpaqueObject("Event represents a single event to a watched resource.");
}

std::string KindRef(const KindDef& k) {
  if (k.schema && !k.schema->ref.empty()) return k.schema->ref;
  return absl::StrCat("batchd.", k.group.empty() ? "core" : k.group, ".", k.version, ".", k.kind);
}

void AddKind(const KindDef& k, ComponentBuilder& cb, Json& paths) {
  const std::string ref = KindRef(k);
  Json gvk = {{"group", k.group}, {"kind", k.kind}, {"version", k.version}};
  if (k.schema) {
    cb.DefineKind(ref, *k.schema, gvk);
  } else {
    cb.schemas()[ref] = OpaqueObject(k.kind.c_str());
    cb.schemas()[ref]["x-kubernetes-group-version-kind"] = Json::array({gvk});
  }
  const std::string list_ref = ref + "List";
  Json list = {
      {"description", k.kind + "List is a list of " + k.kind + " objects."},
      {"type", "object"},
      {"required", Json::array({"items"})},
      {"properties",
       {{"apiVersion", {{"type", "string"}, {"description", "APIVersion of the list."}}},
        {"items", {{"type", "array"}, {"description", "The list of " + k.kind + " objects."},
                   {"items", {{"allOf", Json::array({{{"$ref", RefPath(ref)}}})}}}}},
        {"kind", {{"type", "string"}, {"description", "Kind of the list."}}},
        {"metadata", {{"allOf", Json::array({{{"$ref", RefPath(kListMetaRef)}}})},
                      {"description", "Standard list metadata."}}}}},
      {"x-kubernetes-group-version-kind",
       Json::array({{{"group", k.group}, {"kind", k.kind + "List"}, {"version", k.version}}})}};
  cb.schemas()[list_ref] = std::move(list);
  PathWriter(k, ref, list_ref).Write(paths);
}

void EnsureListMeta(Json& schemas) {
  if (schemas.contains(kListMetaRef)) return;
  schemas[kListMetaRef] = {
      {"description", "ListMeta describes metadata that synthetic resources must have."},
      {"type", "object"},
      {"properties", {{"continue", {{"type", "string"}}},
                      {"remainingItemCount", {{"type", "integer"}, {"format", "int64"}}},
                      {"resourceVersion", {{"type", "string"}}},
                      {"selfLink", {{"type", "string"}}}}}};
}

}  // namespace

std::string GroupVersionPath(std::string_view group, std::string_view version) {
  if (group.empty()) return "api/" + std::string(version);
  return "apis/" + std::string(group) + "/" + std::string(version);
}

std::string DocumentHash(const Json& doc) {
  const std::string text = doc.dump();
  uint64_t a = 1469598103934665603ULL, b = 1099511628211ULL * 7 + 31;
  for (unsigned char c : text) {
    a = (a ^ c) * 1099511628211ULL;
    b = (b + c) * 6364136223846793005ULL + 1442695040888963407ULL;
  }
  char buf[33];
  std::snprintf(buf, sizeof(buf), "%016" PRIX64 "%016" PRIX64, a, b);
  return buf;
}

Json OpenApiV3Document(const Scheme& scheme, std::string_view group, std::string_view version) {
  ComponentBuilder cb;
  Json paths = Json::object();
  for (const auto& k : scheme.All()) {
    if (k->group != group || k->version != version) continue;
    AddKind(*k, cb, paths);
  }
  AddMetaComponents(cb.schemas());
  EnsureListMeta(cb.schemas());
  return {{"openapi", "3.0.0"},
          {"info", {{"title", "Kubernetes"}, {"version", "v1.32.0"}}},
          {"paths", std::move(paths)},
          {"components",
           {{"schemas", std::move(cb.schemas())},
            {"securitySchemes",
             {{"BearerToken", {{"type", "apiKey"}, {"name", "authorization"}, {"in", "header"},
                               {"description", "Bearer Token authentication"}}}}}}}};
}

Json OpenApiV3Index(const Scheme& scheme) {
  Json paths = Json::object();
  for (const auto& k : scheme.All()) {
    std::string key = GroupVersionPath(k->group, k->version);
    if (paths.contains(key)) continue;
    Json doc = OpenApiV3Document(scheme, k->group, k->version);
    paths[key] = {{"serverRelativeURL", "/openapi/v3/" + key + "?hash=" + DocumentHash(doc)}};
  }
  return {{"paths", std::move(paths)}};
}

}  // namespace batchd::api::schema_ops
