// The one-line messages the user reads when GPU collection cannot start or stops collecting: what
// happened, what it means for the profile, what to do. Cold (start-up thread); allocation is fine.
#pragma once

#include <cupti.h>

#include <string>

#include "collector/cupti/loader.h"

namespace gprof::collector {

// Appended to every "GPU collection is off" message.
inline constexpr const char* kNoGpuData = "GPU activity is not collected; NVTX ranges still are.";

// "CUPTI_ERROR_... (N)" from cuptiGetResultString, or "CUPTI error N".
std::string ResultText(const CuptiApi& api, CUptiResult rc);

// Why `step` failed with `rc`, told apart by whether a CUDA driver is loaded in the process.
std::string StartFailure(const CuptiApi& api, const char* step, CUptiResult rc);

// Turns CUPTI's "CUPTI for <tool>" holder name (cuptiSubscribe_v2's oldSubscriberName) into what
// users call the tool: "torch.profiler (Kineto)", "Nsight Systems (nsys)", ... Pure.
std::string FriendlyHolder(const std::string& raw);

}  // namespace gprof::collector
