// API filter table (see api_filter.h). Cold code.
#include "collector/cupti/api_filter.h"
#include "collector/cupti/call_params.h"

#include <initializer_list>

#include <cupti.h>

#include <algorithm>

namespace gprof::collector {
namespace {

// Polling, getters and lookups: frequent, cheap, and noise in a table of where time goes.
// A constexpr array, not a static container: nothing is constructed or destroyed at load or exit
// inside the injected library.
constexpr std::string_view kDropped[] = {
    // runtime
    "cudaGetDevice", "cudaGetDeviceCount", "cudaGetLastError", "cudaPeekAtLastError",
    "cudaStreamQuery", "cudaEventQuery", "cudaDeviceGetAttribute", "cudaPointerGetAttributes",
    "cudaFuncGetAttributes", "cudaGetDeviceProperties", "cudaDriverGetVersion",
    "cudaRuntimeGetVersion", "cudaStreamGetCaptureInfo", "cudaStreamIsCapturing",
    "cudaGetErrorString", "cudaGetErrorName", "cudaGetDriverEntryPoint",
    "cudaGetDriverEntryPointByVersion", "cudaThreadExchangeStreamCaptureMode",
    "cudaGetFuncBySymbol", "cudaGetKernel", "__cudaPushCallConfiguration",
    "__cudaPopCallConfiguration", "__cudaGetKernel",
    // driver
    "cuCtxGetCurrent", "cuCtxGetDevice", "cuCtxSetCurrent", "cuGetProcAddress",
    "cuDeviceGet", "cuDeviceGetCount", "cuDeviceGetAttribute", "cuDriverGetVersion",
    "cuPointerGetAttribute", "cuPointerGetAttributes", "cuStreamQuery", "cuEventQuery",
    "cuFuncGetAttribute", "cuGetErrorString", "cuGetErrorName", "cuStreamGetCaptureInfo",
    "cuStreamIsCapturing", "cuDevicePrimaryCtxGetState", "cuCtxGetStreamPriorityRange",
    "cuModuleGetFunction", "cuLibraryGetKernel", "cuKernelGetFunction",
    "cuThreadExchangeStreamCaptureMode",
};

}  // namespace

std::span<const std::string_view> DefaultDroppedApis() { return kDropped; }

namespace {

// `full` is cuptiGetCallbackName's spelling (always versioned). A user's name matches it written
// exactly, without the version ("cudaMemcpy", "cudaStreamSynchronize_ptsz"), as the plain base
// name (which also covers the _ptsz/_ptds variants), or with a different version suffix
// ("cudaMemcpy_v7000" for cudaMemcpy_v3020).
bool Listed(const std::vector<std::string>& list, std::string_view full, std::string_view base) {
  const std::string_view display = DisplayApiName(full);
  for (const std::string& n : list) {
    if (n == full || n == base || n == display || DisplayApiName(n) == display) return true;
  }
  return false;
}

}  // namespace

std::vector<uint8_t> BuildApiFilterTable(const ApiFilter& filter,
                                         const std::vector<std::string>& names) {
  std::vector<uint8_t> table(names.size(), 0);
  const std::span<const std::string_view> dropped = DefaultDroppedApis();
  for (size_t cbid = 0; cbid < names.size(); ++cbid) {
    std::string_view full = names[cbid];
    std::string_view base = BaseApiName(full);
    bool record = false;
    switch (filter.base) {
      case ApiFilter::Base::kAll: record = true; break;
      case ApiFilter::Base::kNone: record = false; break;
      case ApiFilter::Base::kDefault:
        record = std::find(dropped.begin(), dropped.end(), base) == dropped.end();
        break;
    }
    if (!full.empty()) {
      if (Listed(filter.include, full, base)) record = true;
      if (Listed(filter.exclude, full, base)) record = false;
    }
    // cbid 0 is CUPTI's INVALID id in both domains.
    table[cbid] = (cbid != 0 && record) ? 1 : 0;
  }
  return table;
}

std::vector<uint8_t> BuildBacktraceTable(uint8_t groups, const std::vector<std::string>& names,
                                         bool runtime) {
  std::vector<uint8_t> table(names.size(), 0);
  if (groups == 0) return table;
  const auto starts = [](std::string_view base, std::initializer_list<std::string_view> prefixes) {
    for (std::string_view p : prefixes) {
      if (base.starts_with(p)) return true;
    }
    return false;
  };
  for (size_t cbid = 1; cbid < names.size(); ++cbid) {
    const std::string_view base = BaseApiName(names[cbid]);
    bool selected = false;
    if ((groups & kBacktraceSync) != 0) {
      selected = selected || (starts(base, {"cuda", "cu"}) && base.ends_with("Synchronize"));
    }
    if ((groups & kBacktraceAlloc) != 0) {
      selected = selected || starts(base, {"cudaMalloc", "cudaFree", "cudaHostAlloc", "cuMemAlloc",
                                           "cuMemFree", "cuMemHostAlloc"});
    }
    if ((groups & kBacktraceMemcpy) != 0) {
      selected = selected || starts(base, {"cudaMemcpy", "cudaMemset", "cuMemcpy", "cuMemset"});
    }
    if ((groups & kBacktraceLaunch) != 0) {
      const auto id = static_cast<uint32_t>(cbid);
      selected = selected || (runtime ? IsRuntimeLaunchCbid(id) : IsDriverLaunchCbid(id));
    }
    table[cbid] = selected ? 1 : 0;
  }
  return table;
}

std::vector<uint8_t> BuildCallbackTable(const std::vector<uint8_t>& record,
                                        const std::vector<std::string>& names, bool runtime,
                                        bool driver_records_any, const Config& config) {
  std::vector<uint8_t> table(names.size(), 0);
  const bool steps =
      config.schedule.enabled() || config.capture.kind == CaptureRange::Kind::kControl;
  const bool kernel_steps = steps && config.step.kind == StepSource::Kind::kKernel;
  const std::string_view step_api = steps && config.step.kind == StepSource::Kind::kApi
                                        ? BaseApiName(config.step.pattern)
                                        : std::string_view();
  const bool profiler_api = config.capture.kind == CaptureRange::Kind::kCudaProfilerApi;
  const std::span<const std::string_view> dropped = DefaultDroppedApis();
  for (size_t cbid = 1; cbid < names.size(); ++cbid) {
    const std::string_view base = BaseApiName(names[cbid]);
    const auto id = static_cast<uint32_t>(cbid);
    bool on = cbid < record.size() && record[cbid] != 0;
    // The callback follows the streams under capture (call_params.h).
    on = on || CaptureEdge(runtime, id) != 0 || FollowsCaptureStreams(runtime, id);
    if (kernel_steps) on = on || (runtime ? IsRuntimeLaunchCbid(id) : IsDriverLaunchCbid(id));
    if (!step_api.empty()) on = on || (!base.empty() && base == step_api);
    if (profiler_api) {
      on = on || base == "cudaProfilerStart" || base == "cudaProfilerStop" ||
           base == "cuProfilerStart" || base == "cuProfilerStop";
    }
    if (runtime && !on && driver_records_any) {
      on = std::find(dropped.begin(), dropped.end(), base) == dropped.end();
    }
    table[cbid] = on ? 1 : 0;
  }
  return table;
}

bool IsRuntimeLaunchCbid(uint32_t cbid) {
  switch (cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000:
    case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000:
    case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000:
      return true;
    default:
      return false;
  }
}

int CaptureEdge(bool runtime, uint32_t cbid) {
  if (runtime) {
    switch (cbid) {
      case CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000:
      case CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_ptsz_v10000:
      case CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCaptureToGraph_v12030:
      case CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCaptureToGraph_ptsz_v12030:
        return 1;
      case CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000:
      case CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_ptsz_v10000:
        return -1;
      default:
        return 0;
    }
  }
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph_ptsz:
      return 1;
    case CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture_ptsz:
      return -1;
    default:
      return 0;
  }
}

bool IsDriverLaunchCbid(uint32_t cbid) {
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz:
      return true;
    default:
      return false;
  }
}

}  // namespace gprof::collector
