// A host that sets the pace with work nobody annotated: each step launches 20 tiny kernels, and
// before each launch host_preprocess() does real CPU work (arithmetic on a host buffer until the
// thread has used US microseconds of CPU time), with no NVTX range anywhere. A profiler that
// knows the host only through recorded ranges sees the launch calls and nothing between them.
// With --sleep, host_preprocess() sleeps US microseconds instead (a host waiting on I/O): the GPU
// idles just as much, but the host does not compute. host_preprocess is an external, out-of-line
// function, so native samples (--cpu-sampling) and gpu_idle name it as `host_preprocess(...)`.
// Usage: host_preprocess <steps> <us per launch> [--sleep]
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "check.h"

namespace {

constexpr int kLaunchesPerStep = 20;

__global__ void tiny_kernel(float* p) {
  if (threadIdx.x == 0 && blockIdx.x == 0) p[0] += 1.f;
}

uint64_t ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

// The host's share of a step: `us` microseconds of this thread's CPU time spent on arithmetic
// (so a loaded machine stretches it in wall time but never shortens it), or a sleep.
__attribute__((noinline)) float host_preprocess(std::vector<float>& batch, int us, bool sleep) {
  if (sleep) {
    timespec ts{0, static_cast<long>(us) * 1000};
    nanosleep(&ts, nullptr);
    return batch[0];
  }
  const uint64_t until = ThreadCpuNs() + static_cast<uint64_t>(us) * 1000;
  float acc = 0.f;
  do {
    for (float& x : batch) {
      x = x * 1.0001f + 0.5f;
      acc += x;
    }
  } while (ThreadCpuNs() < until);
  return acc;
}

int main(int argc, char** argv) {
  if (argc < 3 || std::atoi(argv[1]) <= 0 || std::atoi(argv[2]) <= 0) {
    std::fprintf(stderr, "usage: %s <steps> <us per launch> [--sleep]\n", argv[0]);
    return 2;
  }
  const int steps = std::atoi(argv[1]);
  const int us = std::atoi(argv[2]);
  const bool sleep = argc > 3 && std::strcmp(argv[3], "--sleep") == 0;
  float* dev = nullptr;
  EXAMPLE_CHECK(cudaMalloc(&dev, sizeof(float)));
  EXAMPLE_CHECK(cudaDeviceSynchronize());
  std::vector<float> batch(1024, 1.f);
  float sum = 0.f;
  for (int s = 0; s < steps; ++s) {
    for (int k = 0; k < kLaunchesPerStep; ++k) {
      sum += host_preprocess(batch, us, sleep);
      tiny_kernel<<<1, 32>>>(dev);
    }
    EXAMPLE_CHECK(cudaGetLastError());
    EXAMPLE_CHECK(cudaDeviceSynchronize());
  }
  EXAMPLE_CHECK(cudaFree(dev));
  std::printf("kernels=%d host_us_per_launch=%d sleep=%d checksum=%d\n",
              steps * kLaunchesPerStep, us, sleep ? 1 : 0, sum != 0.f ? 1 : 0);
  std::printf("GPROF_EXAMPLE_DONE host_preprocess\n");
  return 0;
}
