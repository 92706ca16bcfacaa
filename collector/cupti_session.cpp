// Implementation of gpu_collector.h (first cut: loads libcupti and reports status; collection
// follows). Cold code only.
#include "collector/gpu_collector.h"

#include "collector/cupti_loader.h"
#include "collector/cupti_structs.h"

namespace gprof::collector {

GpuStartResult StartGpuCollection(const Config& config) {
  GpuStartResult result;
  if (!config.cuda) {
    result.status = "GPU collection is off (GPROF_CUDA=0)";
    return result;
  }
  CuptiLoadResult load = LoadCupti(CollectSearchInputs(config.cupti_lib));
  if (!load.ok) {
    result.status = load.error + ": GPU activity is not collected; NVTX ranges still are.";
    return result;
  }
  result.cupti_library = load.path;
  result.status = "GPU collection is not implemented yet";
  return result;
}

void DrainGpu(Profile*, bool) {}
void SetGpuCollectionEnabled(bool) {}
void StopGpuCollection() {}

}  // namespace gprof::collector
