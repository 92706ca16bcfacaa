// A program that calls CUPTI before any CUDA call (test helper for cupti_order_test): with
// `cuda-first` as its argument it makes one runtime call (cudaFree(0): the stand-in driver's
// initialization, which runs CUDA_INJECTION64_PATH's InitializeInjection) first. Prints the CUPTI
// version it got. Test-only.
#include <cuda_runtime_api.h>
#include <cupti.h>

#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "cuda-first") == 0) cudaFree(nullptr);
  uint32_t version = 0;
  const CUptiResult rc = cuptiGetVersion(&version);
  std::printf("cupti_first: rc=%d version=%u\n", static_cast<int>(rc), version);
  return rc == CUPTI_SUCCESS ? 0 : 1;
}
