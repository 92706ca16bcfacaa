// An eager-mode framework's CUDA call mix, per op, without the framework: what PyTorch's eager ops
// do around each kernel launch (c10::cuda::current_device / device guards: cudaGetDevice; the
// launch check after each kernel: cudaGetLastError), plus a watchdog-style event poll (NCCL's
// watchdog queries its events with cudaEventQuery). Per op: 3 cudaGetDevice, 1 launch, 1
// cudaGetLastError; every 4th op also 1 cudaEventRecord and 1 cudaEventQuery (and, when the event
// is not ready yet, the cudaGetLastError that clears it).
// Usage: eager_ops <ops>. Prints the loop's wall time per op (OP_NS) and its thread's CPU time
// per op (OP_CPU_NS) for benchmarks.
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "check.h"

__global__ void eager_op_kernel(float* x) { x[threadIdx.x] += 1.0f; }

int main(int argc, char** argv) {
  if (argc < 2 || std::atoi(argv[1]) <= 0) {
    std::fprintf(stderr, "usage: %s <ops>\n", argv[0]);
    return 2;
  }
  const int ops = std::atoi(argv[1]);
  float* x = nullptr;
  EXAMPLE_CHECK(cudaMalloc(&x, 32 * sizeof(float)));
  cudaEvent_t event;
  EXAMPLE_CHECK(cudaEventCreate(&event));
  int polls = 0;
  // The loop's own thread's CPU time: what the CUDA calls and any tool's callbacks in them cost
  // this thread, without the waiting for a core on a loaded machine.
  timespec cpu_start{}, cpu_end{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu_start);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < ops; ++i) {
    int device = -1;
    for (int g = 0; g < 3; ++g) EXAMPLE_CHECK(cudaGetDevice(&device));
    eager_op_kernel<<<1, 32>>>(x);
    EXAMPLE_CHECK(cudaGetLastError());
    if (i % 4 == 3) {
      EXAMPLE_CHECK(cudaEventRecord(event, 0));
      // As torch's Event::query: not ready is an answer, and it clears it from the last error.
      const cudaError_t q = cudaEventQuery(event);
      if (q == cudaErrorNotReady) {
        (void)cudaGetLastError();
      } else {
        EXAMPLE_CHECK(q);
      }
      ++polls;
    }
  }
  const double ns = std::chrono::duration<double, std::nano>(
                        std::chrono::steady_clock::now() - start).count();
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu_end);
  const double cpu_ns = (cpu_end.tv_sec - cpu_start.tv_sec) * 1e9 +
                        static_cast<double>(cpu_end.tv_nsec - cpu_start.tv_nsec);
  EXAMPLE_CHECK(cudaDeviceSynchronize());
  EXAMPLE_CHECK(cudaEventDestroy(event));
  EXAMPLE_CHECK(cudaFree(x));
  // What the program asked for, for checkers (tests, bench/run-all, scripts/gpu-check).
  std::printf("kernels=%d get_device=%d get_last_error=%d event_queries=%d\n", ops, 3 * ops, ops,
              polls);
  std::printf("OP_NS %.1f\nOP_CPU_NS %.1f\n", ns / ops, cpu_ns / ops);
  std::printf("GPROF_EXAMPLE_DONE eager_ops\n");
  return 0;
}
