// Several host threads launch work at the same time, each on its own stream (and one on the
// default stream), then synchronize. Usage: multithread [threads=4] [launches per thread=50]
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "check.h"

__global__ void add_kernel(float* data, int n, float value) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += value;
}

static void Worker(int index, int launches, bool use_default_stream) {
  constexpr int kN = 1 << 16;
  cudaStream_t stream = nullptr;
  if (!use_default_stream) EXAMPLE_CHECK(cudaStreamCreate(&stream));
  float* d = nullptr;
  EXAMPLE_CHECK(cudaMalloc(&d, kN * sizeof(float)));
  EXAMPLE_CHECK(cudaMemsetAsync(d, 0, kN * sizeof(float), stream));
  for (int i = 0; i < launches; ++i) {
    add_kernel<<<(kN + 255) / 256, 256, 0, stream>>>(d, kN, float(index + 1));
  }
  EXAMPLE_CHECK(cudaGetLastError());
  std::vector<float> host(kN);
  EXAMPLE_CHECK(cudaMemcpyAsync(host.data(), d, kN * sizeof(float), cudaMemcpyDeviceToHost, stream));
  EXAMPLE_CHECK(cudaStreamSynchronize(stream));
  EXAMPLE_CHECK(cudaFree(d));
  if (stream != nullptr) EXAMPLE_CHECK(cudaStreamDestroy(stream));
}

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 4;
  const int launches = argc > 2 ? std::atoi(argv[2]) : 50;
  if (threads <= 0 || launches <= 0) {
    std::fprintf(stderr, "usage: %s [threads] [launches per thread]\n", argv[0]);
    return 2;
  }
  EXAMPLE_CHECK(cudaFree(nullptr));  // create the context before the threads race
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(Worker, t, launches, t == 0);
  for (auto& t : pool) t.join();
  EXAMPLE_CHECK(cudaDeviceSynchronize());
  std::printf("multithread: threads=%d launches_per_thread=%d\n", threads, launches);
  std::printf("kernels=%d copies=%d memsets=%d\n", threads * launches, threads, threads);
  std::printf("GPROF_EXAMPLE_DONE multithread\n");
  return 0;
}
