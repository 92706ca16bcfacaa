// Test program for schedule windows and capture ranges. Each iteration i:
//   nvtx push "ProfilerStep#i" { nvtx push "work#i" { step_kernel, tail_kernel,
//   cudaStreamSynchronize } }
// Options: --profiler-api A:B   call cudaProfilerStart before iteration A and cudaProfilerStop
//                               after iteration B (repeatable)
//          --sleep-us U         host sleep per iteration (for time-sliced steps)
// Prints "GPROF_EXAMPLE_DONE schedule_prog" at the end. Runs unchanged on a real GPU.
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

__global__ void step_kernel(float* x) { x[threadIdx.x] += 1.0f; }
__global__ void tail_kernel(float* x) { x[threadIdx.x] *= 0.5f; }

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s ITERATIONS [--profiler-api A:B]... [--sleep-us U]\n", argv[0]);
    return 2;
  }
  const int iterations = std::atoi(argv[1]);
  std::vector<std::pair<int, int>> captures;
  int sleep_us = 0;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--profiler-api") == 0) {
      int a = 0, b = 0;
      if (std::sscanf(argv[i + 1], "%d:%d", &a, &b) == 2) captures.emplace_back(a, b);
    } else if (std::strcmp(argv[i], "--sleep-us") == 0) {
      sleep_us = std::atoi(argv[i + 1]);
    }
  }
  float* x = nullptr;
  if (cudaMalloc(&x, 32 * sizeof(float)) != cudaSuccess) {
    std::fprintf(stderr, "cudaMalloc failed\n");
    return 1;
  }
  for (int i = 0; i < iterations; ++i) {
    for (const auto& [a, b] : captures) {
      if (a == i) cudaProfilerStart();
    }
    nvtxRangePushA(("ProfilerStep#" + std::to_string(i)).c_str());
    nvtxRangePushA(("work#" + std::to_string(i)).c_str());
    step_kernel<<<1, 32>>>(x);
    tail_kernel<<<1, 32>>>(x);
    cudaStreamSynchronize(0);
    nvtxRangePop();
    nvtxRangePop();
    if (sleep_us > 0) usleep(sleep_us);
    for (const auto& [a, b] : captures) {
      if (b == i) cudaProfilerStop();
    }
  }
  cudaFree(x);
  std::printf("GPROF_EXAMPLE_DONE schedule_prog\n");
  return 0;
}
