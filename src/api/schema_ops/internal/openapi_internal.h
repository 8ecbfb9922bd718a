// Internal to api/schema_ops: the components builder behind openapi.cc.
// Not thread-safe (one builder per document being generated).
#pragma once

#include <string>

#include "api/field_error.h"
#include "api/schema.h"

namespace batchd::api::schema_ops::internal {

std::string RefPath(const std::string& component);

// Accumulates components.schemas while schemas are walked.
class ComponentBuilder {
 public:
  // The schema as written at a use site: `{"allOf": [{"$ref": ...}]}` for
  // published components (defining them on first use), inline otherwise.
  Json Use(const Schema& s);
  // Publishes `s` as component `name` (first definition wins).
  void Define(const std::string& name, const Schema& s);
  // Publishes a top-level kind and tags it with its group-version-kind.
  void DefineKind(const std::string& name, const Schema& s, const Json& gvk);
  Json& schemas() { return schemas_; }

 private:
  Json Body(const Schema& s);
  Json schemas_ = Json::object();
};

}  // namespace batchd::api::schema_ops::internal
