// The one-line messages the user reads when GPU collection cannot start or stops collecting: what
// happened, what it means for the profile, what to do. Every "cannot start" line names the
// libcupti (path and version), the driver version, the CUDA runtime, and says "CUPTI newer than
// the driver" when the numbers show it. Cold (start-up thread); allocation is fine.
#pragma once

#include <cupti.h>

#include <cstdint>
#include <string>

#include "collector/cupti/loader.h"

namespace gprof::collector {

// Appended to every "GPU collection is off" message.
inline constexpr const char* kNoGpuData = "GPU activity is not collected; NVTX ranges still are.";

// What the process has of the CUDA stack, read without calling into libcupti.
struct CudaStack {
  std::string cupti_path;      // "" before a libcupti was chosen
  uint32_t cupti_version = 0;  // cuptiGetVersion; 0 = not asked (yet)
  bool cupti_already_loaded = false;  // the program loaded it: no other can be used here
  int driver_version = 0;      // cuDriverGetVersion (1000 * major + 10 * minor); 0 = unknown
  bool driver_loaded = false;  // libcuda.so.1 is in the process
  std::string runtime;         // file name of the loaded libcudart ("libcudart.so.13.0.96"), or ""
};

// Reads the driver (cuDriverGetVersion through dlsym of the libcuda.so.1 already loaded: it needs
// no cuInit) and the loaded libcudart's file name. Never loads a library.
CudaStack ReadCudaStack();

// Whether the CUDA driver of this process has been initialized (cuInit ran): libcuda.so.1 is loaded
// (the runtime loads it in its first call) and its cuDeviceGetCount does not answer
// CUDA_ERROR_NOT_INITIALIZED. Loads nothing (RTLD_NOLOAD) and calls nothing but the driver. An
// attach asks this before its first call into a libcupti, which may not be safe in a process whose
// driver never started (torch 2.15's libcupti 13.2 overflows its stack in cuptiGetVersion there).
bool CudaDriverInitialized();

// Remembers the libcupti in use for the messages below (Start calls it once it knows the version).
void NoteCuptiInUse(const std::string& path, uint32_t version, bool already_loaded);

// "libcupti <path> (CUPTI 13.2.2 (API version 130202)), driver CUDA 13.0 (13000), runtime
// libcudart.so.13.0.96", and "; CUPTI newer than the driver: ..." when it is. Pure.
std::string DescribeCudaStack(const CudaStack& stack);
// True when the CUPTI's CUDA release (major.minor) is newer than the driver's. Pure.
bool CuptiNewerThanDriver(const CudaStack& stack);

// "CUPTI_ERROR_... (N)" from cuptiGetResultString, or "CUPTI error N".
std::string ResultText(const CuptiApi& api, CUptiResult rc);

// Why `step` failed with `rc`, told apart by whether a CUDA driver is loaded in the process, with
// the CUDA stack (DescribeCudaStack) of the libcupti noted in use.
std::string StartFailure(const CuptiApi& api, const char* step, CUptiResult rc);

// No libcupti could be loaded (load.error says what was tried). Pure but for ReadCudaStack.
std::string CuptiUnavailable(const CuptiLoadResult& load, const CudaStack& stack);
// The libcupti reports a version this build does not decode (config/cupti_support.h). Never
// advises GPROF_CUPTI_LIB when the program loaded that libcupti itself. Pure.
std::string CuptiVersionRefused(const CudaStack& stack);

// Turns CUPTI's "CUPTI for <tool>" holder name (cuptiSubscribe_v2's oldSubscriberName) into what
// users call the tool: "torch.profiler (Kineto)", "Nsight Systems (nsys)", ... Pure.
std::string FriendlyHolder(const std::string& raw);

}  // namespace gprof::collector
