// A plain CUDA program whose host computes before every launch, with no NVTX range around that
// work: STEPS steps of 20 tiny kernels, each launch after about US microseconds of the thread's
// CPU time of arithmetic in host_preprocess (its own function, kept out of line), then a
// synchronize per step. The work is a fixed count of iterations (calibrated against the thread's
// CPU clock at start), not a wall-clock spin, so a busy machine stretches the gaps but every gap
// still holds the same CPU work. The GPU idles while the host computes; with --cpu-sampling,
// gpu_idle names host_preprocess.
// Usage: host_compute_launches <steps> <us of host work per launch>
#include <time.h>

#include <cstdio>
#include <cstdlib>

#include "check.h"

__global__ void tiny_kernel(float* out, float v) { out[threadIdx.x] = v; }

// `iterations` rounds of arithmetic; the result feeds the launch, so the compiler keeps the work.
__attribute__((noinline)) float host_preprocess(long iterations, float seed) {
  float x = seed;
  for (long i = 0; i < iterations; ++i) x = x * 1.000001f + 0.5f / (x + 1.0f);
  return x;
}

double ThreadCpuUs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

// Iterations of host_preprocess per microsecond of this thread's CPU (the best of 3 tries).
double IterationsPerUs() {
  double best = 0;
  for (int t = 0; t < 3; ++t) {
    const double start = ThreadCpuUs();
    volatile float sink = host_preprocess(2000000, 1.0f);
    (void)sink;
    const double us = ThreadCpuUs() - start;
    if (us > 0 && 2000000 / us > best) best = 2000000 / us;
  }
  return best > 0 ? best : 100;
}

int main(int argc, char** argv) {
  if (argc < 3 || std::atoi(argv[1]) <= 0 || std::atoi(argv[2]) < 0) {
    std::fprintf(stderr, "usage: %s <steps> <us of host work per launch>\n", argv[0]);
    return 2;
  }
  const int steps = std::atoi(argv[1]);
  const int us = std::atoi(argv[2]);
  const long iterations = static_cast<long>(IterationsPerUs() * us);
  float* out = nullptr;
  EXAMPLE_CHECK(cudaMalloc(&out, 32 * sizeof(float)));
  float v = 1.0f;
  for (int s = 0; s < steps; ++s) {
    for (int k = 0; k < 20; ++k) {
      v = host_preprocess(iterations, v);
      tiny_kernel<<<1, 32>>>(out, v);
    }
    EXAMPLE_CHECK(cudaDeviceSynchronize());
  }
  EXAMPLE_CHECK(cudaFree(out));
  std::printf("kernels=%d host_us_per_launch=%d\n", steps * 20, us);
  std::printf("GPROF_EXAMPLE_DONE host_compute_launches\n");
  return 0;
}
