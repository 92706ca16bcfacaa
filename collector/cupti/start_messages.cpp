// See start_messages.h.
#include "collector/cupti/start_messages.h"

#include <dlfcn.h>

#include <cctype>

namespace gprof::collector {

std::string ResultText(const CuptiApi& api, CUptiResult rc) {
  const char* text = nullptr;
  if (api.GetResultString != nullptr && api.GetResultString(rc, &text) == CUPTI_SUCCESS && text) {
    return std::string(text) + " (" + std::to_string(static_cast<int>(rc)) + ")";
  }
  return "CUPTI error " + std::to_string(static_cast<int>(rc));
}

namespace {

bool DriverLoaded() {
  void* h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  return h != nullptr;  // RTLD_NOLOAD took a reference only if it was loaded; harmless
}

}  // namespace

std::string StartFailure(const CuptiApi& api, const char* step, CUptiResult rc) {
  if (!DriverLoaded()) {
    return std::string("no CUDA driver is loaded in this process (CUPTI ") + step + ": " +
           ResultText(api, rc) + "): " + kNoGpuData +
           " Check that the NVIDIA driver is installed and a GPU is visible (nvidia-smi).";
  }
  return std::string("CUPTI could not start (") + step + ": " + ResultText(api, rc) + "): " +
         kNoGpuData + " Check that a GPU is visible (nvidia-smi) and that the driver supports "
                      "CUDA 13.";
}

// Turns CUPTI's "CUPTI for <tool>" holder name into what users call the tool.
std::string FriendlyHolder(const std::string& raw) {
  std::string lower;
  for (char c : raw) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower.find("kineto") != std::string::npos || lower.find("torch") != std::string::npos) {
    return "torch.profiler (Kineto)";
  }
  if (lower.find("nsys") != std::string::npos || lower.find("nsight systems") != std::string::npos) {
    return "Nsight Systems (nsys)";
  }
  if (lower.find("ncu") != std::string::npos || lower.find("nsight compute") != std::string::npos) {
    return "Nsight Compute (ncu)";
  }
  if (lower.find("sanitizer") != std::string::npos) return "compute-sanitizer";
  if (lower.find("dcgm") != std::string::npos) return "DCGM";
  if (raw.empty()) return "another profiling tool";
  return raw;
}

}  // namespace gprof::collector
