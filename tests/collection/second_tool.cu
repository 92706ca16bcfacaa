// A program that starts a profiler of its own mid-run, as a PyTorch program does when it enters
// torch.profiler.profile under gprof-run: after `launches` kernels it dlopens libcupti, registers
// its own activity buffer callbacks (process-wide: they replace gprof-run's) and enables kernel
// records, launches `launches` more kernels, flushes and counts what it got. Usage:
// second_tool [launches=20]. Prints its own counts and "GPROF_EXAMPLE_DONE second_tool".
#include <cupti.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "examples/cuda/check.h"

__global__ void first_kernel() {}
__global__ void second_kernel() {}

namespace {

std::atomic<int> g_records{0};
alignas(8) uint8_t g_buffer[1 << 20];

decltype(&cuptiActivityGetNextRecord) g_next = nullptr;

void CUPTIAPI Requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = g_buffer;
  *size = sizeof g_buffer;
  *max_records = 0;
}

void CUPTIAPI Completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* r = nullptr;
  while (g_next(buffer, valid, &r) == CUPTI_SUCCESS) {
    if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) ++g_records;
  }
}

template <typename Fn>
Fn Sym(void* lib, const char* name) {
  return reinterpret_cast<Fn>(dlsym(lib, name));
}

}  // namespace

int main(int argc, char** argv) {
  const int launches = argc > 1 ? std::atoi(argv[1]) : 20;
  for (int i = 0; i < launches; ++i) first_kernel<<<1, 32>>>();
  EXAMPLE_CHECK(cudaDeviceSynchronize());
  void* cupti = dlopen("libcupti.so.13", RTLD_NOW);
  if (cupti == nullptr) {
    std::printf("second_tool: no libcupti (%s)\n", dlerror());
    return 1;
  }
  g_next = Sym<decltype(g_next)>(cupti, "cuptiActivityGetNextRecord");
  auto reg = Sym<decltype(&cuptiActivityRegisterCallbacks)>(cupti, "cuptiActivityRegisterCallbacks");
  auto enable = Sym<decltype(&cuptiActivityEnable)>(cupti, "cuptiActivityEnable");
  auto flush = Sym<decltype(&cuptiActivityFlushAll)>(cupti, "cuptiActivityFlushAll");
  if (g_next == nullptr || reg == nullptr || enable == nullptr || flush == nullptr ||
      reg(&Requested, &Completed) != CUPTI_SUCCESS ||
      enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
    std::printf("second_tool: could not start its own profiler\n");
    return 1;
  }
  for (int i = 0; i < launches; ++i) second_kernel<<<1, 32>>>();
  EXAMPLE_CHECK(cudaDeviceSynchronize());
  flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::printf("second_tool: launches=%d own_profiler_started=1\n", 2 * launches);
  std::printf("GPROF_EXAMPLE_DONE second_tool\n");
  return 0;
}
