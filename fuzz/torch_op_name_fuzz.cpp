// libFuzzer target: torch's NVTX op-range names (model/torch_op_name.h), which the collector
// splits into op name, sequence number, op id and shapes: any program can push any range name.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "model/torch_op_name.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  gprof::TorchOpName name;
  (void)gprof::ParseTorchOpName(text, &name);
  (void)gprof::IsTorchCpuOpName(text);
  return 0;
}
