#include "apiserver/internal/table.h"

namespace batchd::apiserver::internal {

using api::Json;

namespace {

Json ColumnJson(const api::TableColumn& c) {
  return {{"name", c.name}, {"type", c.type}, {"format", c.format},
          {"description", c.description}, {"priority", c.priority}};
}

Json RowObject(const api::KindDef& k, const Json& obj, IncludeObject inc) {
  if (inc == IncludeObject::kObject) return obj;
  return {{"kind", "PartialObjectMetadata"},
          {"apiVersion", "meta.k8s.io/v1"},
          {"metadata", obj.value("metadata", Json::object())}};
}

}  // namespace

Json BuildTable(const api::KindDef& k, const std::vector<Json>& objects, absl::Time now,
                const TableOptions& opts) {
  Json table = {{"kind", "Table"}, {"apiVersion", "meta.k8s.io/v1"},
                {"metadata", Json::object()}, {"columnDefinitions", Json::array()},
                {"rows", Json::array()}};
  if (opts.column_definitions) {
    if (!k.columns_include_name) {
      table["columnDefinitions"].push_back(
          ColumnJson({"Name", "string", "name",
                      "Name must be unique within a namespace. Is required when creating "
                      "resources, although some resources may allow a client to request the "
                      "generation of an appropriate name automatically.",
                      0}));
    }
    for (const auto& c : k.columns) table["columnDefinitions"].push_back(ColumnJson(c));
  }
  for (const auto& obj : objects) {
    Json cells = Json::array();
    if (!k.columns_include_name) {
      cells.push_back(obj.value("metadata", Json::object()).value("name", ""));
    }
    if (k.row_cells) {
      for (auto& c : k.row_cells(obj, now)) cells.push_back(std::move(c));
    }
    Json row = {{"cells", std::move(cells)}};
    if (opts.include != IncludeObject::kNone) row["object"] = RowObject(k, obj, opts.include);
    table["rows"].push_back(std::move(row));
  }
  return table;
}

}  // namespace batchd::apiserver::internal
