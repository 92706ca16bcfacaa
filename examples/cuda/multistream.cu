// Multi-stream copy/compute overlap: the data is split into chunks; each chunk goes through its
// own stream as pinned HtoD copy -> kernel -> DtoH copy, so copies on one stream overlap compute on
// another. One extra pageable copy (async API, synchronous in effect), a stream-ordered
// allocation, an async memset and events timing the whole batch.
#include <cstdio>
#include <cstring>
#include <vector>

#include "check.h"

__global__ void scale_kernel(float* data, int n, float factor) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = data[i] * factor + 1.f;
}

int main() {
  constexpr int kStreams = 4;
  constexpr int kChunk = 1 << 20;  // floats per chunk (4 MiB)
  float* pinned = nullptr;
  float* device = nullptr;
  EXAMPLE_CHECK(cudaMallocHost(&pinned, size_t(kStreams) * kChunk * sizeof(float)));
  EXAMPLE_CHECK(cudaMalloc(&device, size_t(kStreams) * kChunk * sizeof(float)));
  for (size_t i = 0; i < size_t(kStreams) * kChunk; ++i) pinned[i] = float(i % 100);

  cudaStream_t streams[kStreams];
  for (auto& s : streams) EXAMPLE_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t start, stop;
  EXAMPLE_CHECK(cudaEventCreate(&start));
  EXAMPLE_CHECK(cudaEventCreate(&stop));

  EXAMPLE_CHECK(cudaEventRecord(start, streams[0]));
  for (int i = 0; i < kStreams; ++i) {
    float* h = pinned + size_t(i) * kChunk;
    float* d = device + size_t(i) * kChunk;
    EXAMPLE_CHECK(cudaMemcpyAsync(d, h, kChunk * sizeof(float), cudaMemcpyHostToDevice, streams[i]));
    scale_kernel<<<(kChunk + 255) / 256, 256, 0, streams[i]>>>(d, kChunk, 2.f);
    EXAMPLE_CHECK(cudaGetLastError());
    EXAMPLE_CHECK(cudaMemcpyAsync(h, d, kChunk * sizeof(float), cudaMemcpyDeviceToHost, streams[i]));
  }
  // Join every stream into streams[0] before the stop event.
  for (int i = 1; i < kStreams; ++i) {
    cudaEvent_t done;
    EXAMPLE_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    EXAMPLE_CHECK(cudaEventRecord(done, streams[i]));
    EXAMPLE_CHECK(cudaStreamWaitEvent(streams[0], done, 0));
    EXAMPLE_CHECK(cudaEventDestroy(done));
  }
  EXAMPLE_CHECK(cudaEventRecord(stop, streams[0]));
  EXAMPLE_CHECK(cudaEventSynchronize(stop));
  float ms = 0.f;
  EXAMPLE_CHECK(cudaEventElapsedTime(&ms, start, stop));

  // Pageable memory: the async copy cannot overlap (the driver stages it).
  std::vector<float> pageable(kChunk, 3.f);
  float* scratch = nullptr;
  EXAMPLE_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&scratch), kChunk * sizeof(float), streams[1]));
  EXAMPLE_CHECK(cudaMemsetAsync(scratch, 0, kChunk * sizeof(float), streams[1]));
  EXAMPLE_CHECK(cudaMemcpyAsync(scratch, pageable.data(), kChunk * sizeof(float),
                                cudaMemcpyHostToDevice, streams[1]));
  EXAMPLE_CHECK(cudaFreeAsync(scratch, streams[1]));
  EXAMPLE_CHECK(cudaStreamSynchronize(streams[1]));
  EXAMPLE_CHECK(cudaDeviceSynchronize());

  std::printf("multistream: streams=%d chunk_bytes=%zu batch_ms=%.3f\n", kStreams,
              kChunk * sizeof(float), double(ms));
  for (auto& s : streams) EXAMPLE_CHECK(cudaStreamDestroy(s));
  EXAMPLE_CHECK(cudaEventDestroy(start));
  EXAMPLE_CHECK(cudaEventDestroy(stop));
  EXAMPLE_CHECK(cudaFree(device));
  EXAMPLE_CHECK(cudaFreeHost(pinned));
  std::printf("kernels=%d copies=%d memsets=1\n", kStreams, 2 * kStreams + 1);
  std::printf("GPROF_EXAMPLE_DONE multistream\n");
  return 0;
}
