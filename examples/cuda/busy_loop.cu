// A GPU that never idles: N kernels of at least US microseconds each (a clock64 spin; on the
// stand-in set CUDASIM_KERNEL_NS=spin=US*1000), launched back to back with no synchronization,
// so the host is through every launch while the GPU runs the first ones. With --no-sync the
// program then exits at once, with kernels still queued (a profiler's exit flush meets unfinished
// work); otherwise it synchronizes first.
// Usage: busy_loop <launches> <us per kernel> [--no-sync]
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "check.h"

__global__ void spin_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

int main(int argc, char** argv) {
  if (argc < 3 || std::atoi(argv[1]) <= 0 || std::atoi(argv[2]) <= 0) {
    std::fprintf(stderr, "usage: %s <launches> <us per kernel> [--no-sync]\n", argv[0]);
    return 2;
  }
  const int launches = std::atoi(argv[1]);
  const int us = std::atoi(argv[2]);
  const bool sync = !(argc > 3 && std::strcmp(argv[3], "--no-sync") == 0);
  int device = 0, khz = 0;
  EXAMPLE_CHECK(cudaGetDevice(&device));
  EXAMPLE_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device));
  // clockRate is in kHz: cycles per microsecond = khz / 1000. At least 1 GHz assumed when the
  // attribute is missing, so a kernel never runs shorter than asked.
  const long long cycles = static_cast<long long>(us) * (khz > 0 ? khz / 1000 : 1000);
  for (int i = 0; i < launches; ++i) spin_kernel<<<1, 1>>>(cycles);
  EXAMPLE_CHECK(cudaGetLastError());
  if (sync) EXAMPLE_CHECK(cudaDeviceSynchronize());
  // What the program asked the GPU to do, for checkers (scripts/gpu-check).
  std::printf("kernels=%d copies=0 memsets=0 kernel_us=%d synchronized=%d\n", launches, us,
              sync ? 1 : 0);
  std::printf("GPROF_EXAMPLE_DONE busy_loop\n");
  return 0;
}
