// libFuzzer target: the trace checker (`gprof-run check`, exporters/exporters.h CheckTraceText)
// on arbitrary bytes: it reads traces from anyone (our own, torch.profiler's, nsys exports).
#include <cstddef>
#include <cstdint>
#include <string>

#include "outputs/trace/trace_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)gprof::CheckTraceText(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
