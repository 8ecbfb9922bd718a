// libFuzzer target: DecodeKubernetesProtobuf on arbitrary bytes must return
// (ok or an error) without crashing, and anything it accepts must serialize.
// Seeds: src/api/protobuf/testdata/*.pb.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "api/codec/codec.h"
#include "api/protobuf/decode.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> unknown;
  auto j = batchd::api::protobuf::DecodeKubernetesProtobuf(in, &unknown);
  if (j.ok()) {
    (void)batchd::api::ToJson(*j);
    (void)batchd::api::ToYaml(*j);
  }
  return 0;
}
