// Fuzzes the codec: ParseJson, ParseYaml and ParseYamlDocuments on arbitrary
// bytes, and the round trips the codec promises for every decoded value:
// ParseJson(ToJson(v)) == v and ParseYaml(ToYaml(v)) == v.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "api/codec/codec.h"

namespace {

using batchd::api::Json;

[[noreturn]] void Die(const char* what, const Json& v, const std::string& text) {
  std::fprintf(stderr, "fuzz_codec: %s\nvalue: %s\ntext: %s\n", what,
               batchd::api::ToJson(v).c_str(), text.c_str());
  std::abort();
}

// Checks both round trips of a value whose strings are valid UTF-8.
void CheckRoundTrips(const Json& v) {
  std::string json = batchd::api::ToJson(v);
  auto back = batchd::api::ParseJson(json);
  if (!back.ok()) Die("ToJson output does not parse", v, json);
  if (*back != v) Die("JSON round trip changed the value", v, json);
  batchd::api::ToJson(v, /*pretty=*/true);

  std::string yaml = batchd::api::ToYaml(v);
  auto yback = batchd::api::ParseYaml(yaml);
  if (!yback.ok()) Die("ToYaml output does not parse", v, yaml);
  if (*yback != v) Die("YAML round trip changed the value", v, yaml);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> dups;
  auto j = batchd::api::ParseJson(in, &dups);
  if (j.ok()) CheckRoundTrips(*j);

  auto y = batchd::api::ParseYaml(in, &dups);
  if (y.ok()) {
    // YAML scalars may carry invalid UTF-8, which ToJson replaces; only
    // values that survive JSON unchanged must survive YAML unchanged.
    auto via_json = batchd::api::ParseJson(batchd::api::ToJson(*y));
    if (via_json.ok() && *via_json == *y) {
      CheckRoundTrips(*y);
    } else {
      batchd::api::ToYaml(*y);
    }
  }
  auto docs = batchd::api::ParseYamlDocuments(in);
  if (docs.ok()) {
    for (const auto& d : *docs) batchd::api::ToYaml(d);
  }
  for (auto ct : {"application/json", "application/yaml", "application/vnd.kubernetes.protobuf"}) {
    (void)batchd::api::ParseBody(in, ct);
  }
  return 0;
}
