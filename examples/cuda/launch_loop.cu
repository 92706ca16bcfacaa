// Launch-bound loop: many tiny kernels back to back on the default stream, so host launch
// overhead dominates GPU time. Usage: launch_loop <launch count>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "check.h"

__global__ void tiny_kernel(int* counter) {
  if (threadIdx.x == 0) atomicAdd(counter, 1);
}

int main(int argc, char** argv) {
  if (argc < 2 || std::atoi(argv[1]) <= 0) {
    std::fprintf(stderr, "usage: %s <launch count>\n", argv[0]);
    return 2;
  }
  const int launches = std::atoi(argv[1]);
  int* counter = nullptr;
  EXAMPLE_CHECK(cudaMalloc(&counter, sizeof(int)));
  EXAMPLE_CHECK(cudaMemset(counter, 0, sizeof(int)));
  const auto loop_start = std::chrono::steady_clock::now();
  for (int i = 0; i < launches; ++i) tiny_kernel<<<1, 32>>>(counter);
  EXAMPLE_CHECK(cudaGetLastError());
  EXAMPLE_CHECK(cudaDeviceSynchronize());
  const double loop_us = std::chrono::duration<double, std::micro>(
                             std::chrono::steady_clock::now() - loop_start).count();
  int host = 0;
  EXAMPLE_CHECK(cudaMemcpy(&host, counter, sizeof(int), cudaMemcpyDeviceToHost));
  std::printf("launch_loop: launches=%d counter=%d (equal on a real GPU)\n", launches, host);
  EXAMPLE_CHECK(cudaFree(counter));
  // What the program asked the GPU to do, for checkers (scripts/gpu-check) to compare with.
  std::printf("kernels=%d copies=1 memsets=1\nloop_us=%.1f\n", launches, loop_us);
  std::printf("GPROF_EXAMPLE_DONE launch_loop\n");
  return 0;
}
