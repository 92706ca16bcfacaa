// See start_messages.h.
#include "collector/cupti/start_messages.h"

#include <dlfcn.h>
#include <link.h>

#include <cctype>
#include <climits>
#include <cstdlib>

#include "collector/cupti/record_structs.h"
#include "support/proc_self.h"

namespace gprof::collector {

std::string ResultText(const CuptiApi& api, CUptiResult rc) {
  const char* text = nullptr;
  if (api.GetResultString != nullptr && api.GetResultString(rc, &text) == CUPTI_SUCCESS && text) {
    return std::string(text) + " (" + std::to_string(static_cast<int>(rc)) + ")";
  }
  return "CUPTI error " + std::to_string(static_cast<int>(rc));
}

namespace {

// Start-up thread only (see the file comment of start_messages.h).
CudaStack g_in_use;

int FindLoadedCudart(dl_phdr_info* info, size_t, void* data) {
  // Under the dynamic linker's lock: no dlopen, nothing that throws.
  const char* name = info->dlpi_name;
  if (name == nullptr || name[0] == '\0') return 0;
  const char* base = name;
  for (const char* p = name; *p != '\0'; ++p) {
    if (*p == '/') base = p + 1;
  }
  if (std::string_view(base).substr(0, 12) != "libcudart.so") return 0;
  *static_cast<const char**>(data) = name;
  return 1;
}

// 13000 -> "CUDA 13.0"; CUPTI 130202 -> 13 * 1000 + 2 * 10 in the driver's numbering.
std::string DriverText(int v) {
  return "CUDA " + std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10) + " (" +
         std::to_string(v) + ")";
}
// CUDA 12's small numbers, from cupti_version.h of 12.9: "v19 : CUDA Toolkit 12.0" ... "v26 : CUDA
// Toolkit 12.8", "v27 : CUDA Toolkit 12.9", "v28 : CUDA Toolkit 12.9 Update 1" (v25 is not listed).
int CuptiAsDriverVersion(uint32_t v) {
  if (v >= 130000) return static_cast<int>(v / 10000 * 1000 + v / 100 % 100 * 10);
  constexpr int kCuda12[] = {12000, 12020, 12030, 12040, 12050, 12060, 0, 12080, 12090, 12090};
  return v >= 19 && v <= 28 ? kCuda12[v - 19] : 0;  // v19 .. v28
}

std::string NewerThanDriverAdvice(const CudaStack& s) {
  const int cupti = CuptiAsDriverVersion(s.cupti_version);
  return "; CUPTI newer than the driver: this CUPTI is CUDA " + std::to_string(cupti / 1000) + "." +
         std::to_string(cupti % 1000 / 10) + ", the driver supports up to " + DriverText(s.driver_version) +
         ", and CUPTI needs a driver at least as new as its own CUDA release";
}

}  // namespace

CudaStack ReadCudaStack() {
  CudaStack s = g_in_use;
  void* cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  s.driver_loaded = cuda != nullptr;
  if (cuda != nullptr) {
    using Fn = int (*)(int*);  // CUresult cuDriverGetVersion(int*): no cuInit needed
    auto get = reinterpret_cast<Fn>(dlsym(cuda, "cuDriverGetVersion"));
    int v = 0;
    if (get != nullptr && get(&v) == 0) s.driver_version = v;
  }
  const char* cudart = nullptr;
  dl_iterate_phdr(&FindLoadedCudart, &cudart);
  if (cudart != nullptr) {
    char real[PATH_MAX];
    s.runtime = PathBasename(realpath(cudart, real) != nullptr ? std::string(real) : cudart);
  }
  return s;
}

bool CudaDriverInitialized() {
  void* cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (cuda == nullptr) return false;
  using Fn = int (*)(int*);  // CUresult cuDeviceGetCount(int*)
  auto count = reinterpret_cast<Fn>(dlsym(cuda, "cuDeviceGetCount"));
  int n = 0;
  constexpr int kNotInitialized = 3;  // CUDA_ERROR_NOT_INITIALIZED (cuda.h)
  const bool initialized = count != nullptr && count(&n) != kNotInitialized;
  dlclose(cuda);  // drops the reference RTLD_NOLOAD took; the program's own stays
  return initialized;
}

void NoteCuptiInUse(const std::string& path, uint32_t version, bool already_loaded) {
  g_in_use.cupti_path = path;
  g_in_use.cupti_version = version;
  g_in_use.cupti_already_loaded = already_loaded;
}

bool CuptiNewerThanDriver(const CudaStack& s) {
  const int cupti = CuptiAsDriverVersion(s.cupti_version);
  return cupti != 0 && s.driver_version != 0 && cupti > s.driver_version;
}

std::string DescribeCudaStack(const CudaStack& s) {
  std::string out;
  if (!s.cupti_path.empty()) {
    out = "libcupti " + s.cupti_path;
    if (s.cupti_version != 0) out += " (CUPTI " + CuptiVersionText(s.cupti_version) + ")";
    out += ", ";
  }
  out += s.driver_version != 0 ? "driver " + DriverText(s.driver_version)
         : s.driver_loaded     ? std::string("driver version unknown")
                               : std::string("no CUDA driver (libcuda.so.1) loaded");
  out += ", runtime " + (s.runtime.empty() ? std::string("libcudart not loaded") : s.runtime);
  if (CuptiNewerThanDriver(s)) out += NewerThanDriverAdvice(s);
  return out;
}

std::string StartFailure(const CuptiApi& api, const char* step, CUptiResult rc) {
  const CudaStack stack = ReadCudaStack();
  const std::string what = std::string(step) + ": " + ResultText(api, rc);
  if (!stack.driver_loaded) {
    return "no CUDA driver is loaded in this process (CUPTI " + what + "; " +
           DescribeCudaStack(stack) + "): " + kNoGpuData +
           " Check that the NVIDIA driver is installed and a GPU is visible (nvidia-smi).";
  }
  std::string advice = " Check that a GPU is visible (nvidia-smi)";
  advice += CuptiNewerThanDriver(stack)
                ? ", and update the driver or use a CUPTI of the driver's CUDA release."
                : " and that the driver supports this CUPTI's CUDA release.";
  return "CUPTI could not start (" + what + "; " + DescribeCudaStack(stack) + "): " + kNoGpuData +
         advice;
}

std::string CuptiUnavailable(const CuptiLoadResult& load, const CudaStack& stack) {
  std::string advice = " Set GPROF_CUPTI_LIB to a libcupti.so.13 of CUDA 13.0 or newer (for a "
                       "CUDA 12 program, a libcupti.so.12 of CUDA 12.4 or newer), or install the "
                       "nvidia-cuda-cupti wheel.";
  if (load.already_loaded) {
    advice = " The program loaded that libcupti itself, so no other can be used in this process.";
  }
  return "CUPTI is unavailable: " + load.error + " (" + DescribeCudaStack(stack) + "). " +
         kNoGpuData + advice;
}

std::string CuptiVersionRefused(const CudaStack& s) {
  std::string decoded;
  for (const CuptiSupport& row : kCuptiSupported) {
    decoded += (decoded.empty() ? "CUDA " : ", CUDA ") + std::to_string(row.major) + " from " +
               CuptiVersionText(static_cast<uint32_t>(row.min_api_version));
  }
  std::string advice =
      s.cupti_already_loaded
          ? " The program loaded this libcupti itself, so no other can be used in this process: "
            "run it with a CUDA build (e.g. a torch wheel) whose CUPTI gprof-run decodes."
          : " Point GPROF_CUPTI_LIB at a libcupti gprof-run decodes, or install the matching "
            "nvidia-cuda-cupti wheel.";
  return DescribeCudaStack(s) + ": this CUPTI's records are not decoded by this build (it decodes " +
         decoded + "), so " + kNoGpuData + advice;
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
