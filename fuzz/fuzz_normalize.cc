// Fuzzes schema normalisation and every kind's hooks: the input (JSON, or
// YAML when it does not start with '{') is normalised against each kind's
// schema from api::BuiltinScheme(); when that succeeds the object goes
// through what the registry does next (prepare, defaults, create / update /
// status validation, table cells, field selectors). Nothing may crash, and a
// normalised object must normalise again to itself.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "absl/time/time.h"
#include "api/codec/codec.h"
#include "api/kind.h"
#include "api/schema_ops/schema_ops.h"

namespace {

using batchd::api::Json;

void ExerciseKind(const batchd::api::KindDef& k, const Json& input) {
  Json obj = input;
  std::vector<std::string> unknown;
  if (!batchd::api::schema_ops::Normalize(*k.schema, obj, &unknown).ok()) return;
  if (!obj.is_object()) return;
  Json again = obj;
  if (!batchd::api::schema_ops::Normalize(*k.schema, again, nullptr).ok() || again != obj) {
    std::fprintf(stderr, "fuzz_normalize: %s: normalising twice differs\n%s\n%s\n",
                 k.kind.c_str(), obj.dump().c_str(), again.dump().c_str());
    std::abort();
  }
  // As the registry does before calling the hooks.
  obj["apiVersion"] = k.ApiVersion();
  obj["kind"] = k.kind;
  if (!obj.contains("metadata") || !obj["metadata"].is_object()) obj["metadata"] = Json::object();
  if (k.prepare_for_create) k.prepare_for_create(obj);
  if (k.set_defaults) k.set_defaults(obj);
  if (k.validate_create) (void)k.validate_create(obj);
  if (k.validate_update) (void)k.validate_update(obj, obj);
  if (k.validate_status_update) (void)k.validate_status_update(obj, obj);
  if (k.row_cells) (void)k.row_cells(obj, absl::FromUnixSeconds(1700000000));
  if (k.field_value) {
    for (const auto& f : k.selectable_fields) (void)k.field_value(obj, f);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto scheme = batchd::api::BuiltinScheme();
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto parsed = (!in.empty() && in[0] == '{') ? batchd::api::ParseJson(in)
                                               : batchd::api::ParseYaml(in);
  if (!parsed.ok()) return 0;
  for (const auto& k : scheme->All()) ExerciseKind(*k, *parsed);
  return 0;
}
